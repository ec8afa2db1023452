import { Type } from 'typebox';
import { route, type Api } from '../../platform/http/routes.js';
import { ApiTokenList, CreateAccountTokenBody, CreatedToken } from '../tokens/schema.js';
import {
  AccountParams,
  AccountTokenParams,
  CreateServiceAccountBody,
  ServiceAccount,
  ServiceAccountList,
  UpdateServiceAccountBody,
} from './schema.js';
import type { ServiceAccountService } from './service.js';

export function serviceAccountRoutes(app: Api, service: ServiceAccountService): void {
  route(app, {
    method: 'GET',
    url: '/api/v1/service-accounts',
    operationId: 'service_accounts.list',
    summary: 'Service accounts in your scope (platform accounts for global callers only)',
    access: { requires: 'user.manage' },
    schema: { response: { 200: ServiceAccountList } },
    handler: async (req) => service.list(req.actor!),
  });

  route(app, {
    method: 'POST',
    url: '/api/v1/service-accounts',
    operationId: 'service_accounts.create',
    summary: 'Create a service account in one of your organizations, or (global callers) a platform account',
    description:
      'Without organization_id the account is a platform account: 403 unless the caller has global scope. An organization outside your scope is 404.',
    access: { requires: 'user.manage' },
    schema: { body: CreateServiceAccountBody, response: { 201: ServiceAccount } },
    handler: async (req, reply) => {
      const created = await service.create(req.actor!, req.body);
      reply.code(201);
      return created;
    },
  });

  route(app, {
    method: 'GET',
    url: '/api/v1/service-accounts/:service_account_id',
    operationId: 'service_accounts.get',
    summary: 'One service account',
    access: { requires: 'user.manage' },
    schema: { params: AccountParams, response: { 200: ServiceAccount } },
    handler: async (req) => service.get(req.actor!, req.params.service_account_id),
  });

  route(app, {
    method: 'PATCH',
    url: '/api/v1/service-accounts/:service_account_id',
    operationId: 'service_accounts.update',
    summary: 'Rename, change the role of, deactivate or reactivate a service account',
    description: 'Deactivation makes every token of the account answer 401 at once; reactivation restores them.',
    access: { requires: 'user.manage' },
    schema: { params: AccountParams, body: UpdateServiceAccountBody, response: { 200: ServiceAccount } },
    handler: async (req) => service.update(req.actor!, req.params.service_account_id, req.body),
  });

  route(app, {
    method: 'DELETE',
    url: '/api/v1/service-accounts/:service_account_id',
    operationId: 'service_accounts.delete',
    summary: 'Remove a service account and its tokens',
    access: { requires: 'user.manage' },
    schema: { params: AccountParams, response: { 204: Type.Null() } },
    handler: async (req, reply) => {
      await service.remove(req.actor!, req.params.service_account_id);
      reply.code(204);
      return null;
    },
  });

  route(app, {
    method: 'GET',
    url: '/api/v1/service-accounts/:service_account_id/tokens',
    operationId: 'service_accounts.list_tokens',
    summary: 'Tokens of a service account that are not revoked (prefix only, never the value)',
    access: { requires: 'user.manage' },
    schema: { params: AccountParams, response: { 200: ApiTokenList } },
    handler: async (req) => service.listTokens(req.actor!, req.params.service_account_id),
  });

  route(app, {
    method: 'POST',
    url: '/api/v1/service-accounts/:service_account_id/tokens',
    operationId: 'service_accounts.create_token',
    summary: 'Create a token for a service account; the value is shown only in this answer',
    description:
      "Same fields as a personal token; the account is the one in the path (a service_account_id in the body is ignored). Scopes must be a subset of the account's role.",
    access: { requires: 'user.manage' },
    schema: { params: AccountParams, body: CreateAccountTokenBody, response: { 201: CreatedToken } },
    handler: async (req, reply) => {
      const created = await service.createToken(req.actor!, req.params.service_account_id, req.body);
      reply.code(201);
      return created;
    },
  });

  route(app, {
    method: 'DELETE',
    url: '/api/v1/service-accounts/:service_account_id/tokens/:token_id',
    operationId: 'service_accounts.revoke_token',
    summary: 'Revoke a token of a service account, at once',
    access: { requires: 'user.manage' },
    schema: { params: AccountTokenParams, response: { 204: Type.Null() } },
    handler: async (req, reply) => {
      await service.revokeToken(req.actor!, req.params.service_account_id, req.params.token_id);
      reply.code(204);
      return null;
    },
  });
}
