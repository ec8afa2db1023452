import { Type } from 'typebox';
import { route, type Api } from '../../platform/http/routes.js';
import type { PersonalTokens } from './personal.js';
import { ApiTokenList, CreatedToken, CreateTokenBody, Scopes, TokenIdParams } from './schema.js';

export function tokenRoutes(app: Api, service: PersonalTokens): void {
  route(app, {
    method: 'GET',
    url: '/api/v1/tokens',
    operationId: 'api_tokens.list',
    summary: "The caller's own tokens that are not revoked (prefix only, never the value)",
    access: { requires: 'authenticated' },
    schema: { response: { 200: ApiTokenList } },
    handler: async (req) => service.list(req.actor!),
  });

  route(app, {
    method: 'POST',
    url: '/api/v1/tokens',
    operationId: 'api_tokens.create',
    summary: 'Create a personal token for the caller; the value is shown only in this answer',
    description:
      'Any authenticated user, a viewer included. Without expires_at and is_eternal the token does not expire. ' +
      'service_account_id is refused (400 api_token.service_account_id_not_allowed); a service account gets 400 ' +
      'api_token.wrong_endpoint naming POST /api/v1/service-accounts/{service_account_id}/tokens.',
    access: { requires: 'authenticated' },
    schema: { body: CreateTokenBody, response: { 201: CreatedToken } },
    handler: async (req, reply) => {
      const created = await service.create(req.actor!, req.body);
      reply.code(201);
      return created;
    },
  });

  route(app, {
    method: 'GET',
    url: '/api/v1/tokens/scopes',
    operationId: 'api_tokens.scopes',
    summary: 'The scope names a token can be restricted to, and those the caller holds',
    access: { requires: 'authenticated' },
    schema: { response: { 200: Scopes } },
    handler: async (req) => service.scopes(req.actor!),
  });

  route(app, {
    method: 'DELETE',
    url: '/api/v1/tokens/:token_id',
    operationId: 'api_tokens.revoke',
    summary: "Revoke one of the caller's own tokens, at once (the name stays reserved)",
    access: { requires: 'authenticated' },
    schema: { params: TokenIdParams, response: { 204: Type.Null({ description: 'Revoked' }) } },
    handler: async (req, reply) => {
      await service.revoke(req.actor!, req.params.token_id);
      reply.code(204);
      return null;
    },
  });
}
