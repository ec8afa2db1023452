import { Type } from 'typebox';
import { offsetEnvelope } from '../../core/paging.js';
import { scopeOf } from '../../core/scope.js';
import { route, type Api } from '../../platform/http/routes.js';
import { DEFAULT_LIMIT, MAX_BULK_IDS } from '../../platform/http/schemas.js';
import { BulkBody, BulkResult, DriftField, DriftPage, FieldParams, ListQuery } from './schema.js';
import type { DriftService } from './service.js';

export function driftRoutes(app: Api, service: DriftService): void {
  route(app, {
    method: 'GET',
    url: '/api/drift',
    operationId: 'drift.list',
    summary: 'Raw fields the live mapping does not read, most recently seen first',
    description: 'Every status unless status is given. Examples are masked.',
    access: { requires: 'drift.read' },
    schema: { querystring: ListQuery, response: { 200: DriftPage } },
    handler: async (req) => {
      const {
        limit = DEFAULT_LIMIT,
        offset = 0,
        organization_id,
        integration_id,
        stream,
        status,
        path_prefix,
      } = req.query;
      const filter = {
        organizationId: organization_id,
        integrationId: integration_id,
        stream,
        status,
        pathPrefix: path_prefix,
      };
      const { items, total } = await service.list(scopeOf(req.actor!), filter, { limit, offset });
      return offsetEnvelope(items, total, { limit, offset });
    },
  });

  route(app, {
    method: 'POST',
    url: '/api/drift/bulk/ignore',
    operationId: 'drift.bulk_ignore',
    summary: `Ignore up to ${MAX_BULK_IDS} fields; ids outside your scope are reported as not found`,
    access: { requires: 'drift.ignore' },
    schema: { body: BulkBody, response: { 200: BulkResult } },
    handler: async (req) => service.bulkIgnore(scopeOf(req.actor!), req.body.ids),
  });

  route(app, {
    method: 'POST',
    url: '/api/drift/bulk/mark_mapped',
    operationId: 'drift.bulk_mark_mapped',
    summary: `Mark up to ${MAX_BULK_IDS} fields as mapped; ids outside your scope are reported as not found`,
    access: { requires: 'drift.mark_mapped' },
    schema: { body: BulkBody, response: { 200: BulkResult } },
    handler: async (req) => service.bulkMarkMapped(scopeOf(req.actor!), req.body.ids),
  });

  route(app, {
    method: 'DELETE',
    url: '/api/drift/:field_id',
    operationId: 'drift.delete',
    summary: 'Forget a field; if raw events carry it again it comes back as new',
    access: { requires: 'drift.delete' },
    schema: { params: FieldParams, response: { 204: Type.Null({ description: 'Removed' }) } },
    handler: async (req, reply) => {
      await service.remove(scopeOf(req.actor!), req.params.field_id);
      reply.code(204);
      return null;
    },
  });

  route(app, {
    method: 'POST',
    url: '/api/drift/:field_id/ignore',
    operationId: 'drift.ignore',
    summary: 'Ignore a field: reviewed and not wanted (it keeps being counted)',
    access: { requires: 'drift.ignore' },
    schema: { params: FieldParams, response: { 200: DriftField } },
    handler: async (req) => service.ignore(scopeOf(req.actor!), req.params.field_id),
  });

  route(app, {
    method: 'POST',
    url: '/api/drift/:field_id/mark_mapped',
    operationId: 'drift.mark_mapped',
    summary: 'Mark a field as handled by a mapping change',
    access: { requires: 'drift.mark_mapped' },
    schema: { params: FieldParams, response: { 200: DriftField } },
    handler: async (req) => service.markMapped(scopeOf(req.actor!), req.params.field_id),
  });
}
