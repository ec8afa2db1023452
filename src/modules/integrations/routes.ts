import { Type } from 'typebox';
import { offsetEnvelope } from '../../core/paging.js';
import { scopeOf } from '../../core/scope.js';
import { route, type Api } from '../../platform/http/routes.js';
import { DEFAULT_LIMIT, ErrorBody } from '../../platform/http/schemas.js';
import {
  BulkDeactivateBody,
  BulkResult,
  CreateBody,
  DeleteQuery,
  Integration,
  IntegrationPage,
  IntegrationParams,
  ListQuery,
  PlatformList,
  UpdateBody,
} from './schema.js';
import type { IntegrationService } from './service.js';

export function integrationRoutes(app: Api, service: IntegrationService): void {
  route(app, {
    method: 'GET',
    url: '/api/integrations/',
    operationId: 'integrations.list',
    summary: 'Integrations in your scope, by id',
    access: { requires: 'authenticated' },
    schema: { querystring: ListQuery, response: { 200: IntegrationPage } },
    handler: async (req) => {
      const { limit = DEFAULT_LIMIT, offset = 0, organization_id, platform, is_active, parent_id } = req.query;
      const page = { limit, offset };
      const filter = { organizationId: organization_id, platform, isActive: is_active, parentId: parent_id };
      const { items, total } = await service.list(scopeOf(req.actor!), filter, page);
      return offsetEnvelope(items, total, page);
    },
  });

  route(app, {
    method: 'POST',
    url: '/api/integrations/',
    operationId: 'integrations.create',
    summary: 'Create an integration in one of your organizations',
    description:
      "config is validated against the platform's config_schema (422 integration.invalid_config); the name is unique per organization (409).",
    access: { requires: 'integration.write' },
    schema: { body: CreateBody, response: { 201: Integration, 409: ErrorBody } },
    handler: async (req, reply) => {
      const created = await service.create(req.actor!, req.body);
      reply.code(201);
      return created;
    },
  });

  route(app, {
    method: 'POST',
    url: '/api/integrations/bulk/deactivate',
    operationId: 'integrations.bulk_deactivate',
    summary: 'Deactivate up to 500 integrations; ids outside your scope are reported as not found',
    access: { requires: 'integration.write' },
    schema: { body: BulkDeactivateBody, response: { 200: BulkResult } },
    handler: async (req) => service.bulkDeactivate(scopeOf(req.actor!), req.body.ids),
  });

  route(app, {
    method: 'GET',
    url: '/api/integrations/platforms',
    operationId: 'integrations.platforms',
    summary: 'The platforms an integration may be of, with the JSON Schema of their config',
    access: { requires: 'authenticated' },
    schema: { response: { 200: PlatformList } },
    handler: async () => service.platforms(),
  });

  route(app, {
    method: 'GET',
    url: '/api/integrations/:integration_id',
    operationId: 'integrations.get',
    summary: 'One integration; secret config fields read as {"configured": true}',
    access: { requires: 'authenticated' },
    schema: { params: IntegrationParams, response: { 200: Integration } },
    handler: async (req) => service.get(scopeOf(req.actor!), req.params.integration_id),
  });

  route(app, {
    method: 'PUT',
    url: '/api/integrations/:integration_id',
    operationId: 'integrations.update',
    summary: 'Change name, config, is_active or parent_id',
    access: { requires: 'integration.write' },
    schema: { params: IntegrationParams, body: UpdateBody, response: { 200: Integration, 409: ErrorBody } },
    handler: async (req) => service.update(scopeOf(req.actor!), req.params.integration_id, req.body),
  });

  route(app, {
    method: 'DELETE',
    url: '/api/integrations/:integration_id',
    operationId: 'integrations.delete',
    summary: 'Remove an integration (and its children); 5 per minute per user',
    description: 'A parent with active children answers 409 unless cascade=true. Over the limit: 429 with Retry-After.',
    access: { requires: 'integration.write' },
    schema: {
      params: IntegrationParams,
      querystring: DeleteQuery,
      response: { 204: Type.Null({ description: 'Removed, with its children' }), 409: ErrorBody },
    },
    handler: async (req, reply) => {
      await service.remove(req.actor!, req.params.integration_id, req.query.cascade ?? false);
      reply.code(204);
      return null;
    },
  });
}
