import { scopeOf } from '../../core/scope.js';
import { route, type Api } from '../../platform/http/routes.js';
import { ErrorBody } from '../../platform/http/schemas.js';
import {
  CollectorState,
  CostQuery,
  CostSummary,
  PlatformStreams,
  StateList,
  StateQuery,
  StreamParams,
  Summary,
  TriggerResult,
  Vendors,
} from './schema.js';
import type { CollectionService } from './service.js';

export function collectionRoutes(app: Api, service: CollectionService): void {
  route(app, {
    method: 'GET',
    url: '/api/collectors/state',
    operationId: 'collectors.state',
    summary: 'Collector state: one row per integration and stream in your scope',
    description: 'Judge lag from watermark_at (lag_seconds); last_success_at only says the collector ran.',
    access: { requires: 'authenticated' },
    schema: { querystring: StateQuery, response: { 200: StateList } },
    handler: async (req) => {
      const { organization_id, integration_id, platform } = req.query;
      return service.states(scopeOf(req.actor!), {
        organizationId: organization_id,
        integrationId: integration_id,
        platform,
      });
    },
  });

  route(app, {
    method: 'GET',
    url: '/api/collectors/summary',
    operationId: 'collectors.summary',
    summary: 'Collection at a glance: failing, lagging and capped streams, gaps, per platform',
    access: { requires: 'authenticated' },
    schema: { response: { 200: Summary } },
    handler: async (req) => service.summary(scopeOf(req.actor!)),
  });

  route(app, {
    method: 'GET',
    url: '/api/collectors/cost-summary',
    operationId: 'collectors.cost_summary',
    summary: 'Events, bytes and vendor API requests per integration and UTC day',
    access: { requires: 'authenticated' },
    schema: { querystring: CostQuery, response: { 200: CostSummary } },
    handler: async (req) => {
      const { days = 7, organization_id, integration_id, platform } = req.query;
      return service.costSummary(scopeOf(req.actor!), days, {
        organizationId: organization_id,
        integrationId: integration_id,
        platform,
      });
    },
  });

  route(app, {
    method: 'GET',
    url: '/api/collectors/platforms-streams',
    operationId: 'collectors.platforms_streams',
    summary: 'The platforms Weir collects from and their streams (cursor kind, window, interval, retention)',
    access: { requires: 'authenticated' },
    schema: { response: { 200: PlatformStreams } },
    handler: async () => service.platformsStreams(),
  });

  route(app, {
    method: 'GET',
    url: '/api/collectors/vendors',
    operationId: 'collectors.vendors',
    summary: 'Vendors with their platforms, authentication, cursor kinds, tenant discovery and backfill support',
    access: { requires: 'authenticated' },
    schema: { response: { 200: Vendors } },
    handler: async () => service.vendors(),
  });

  route(app, {
    method: 'DELETE',
    url: '/api/collectors/state/:integration_id/:stream/cursor',
    operationId: 'collectors.reset_cursor',
    summary: "Restart a stream from the vendor's default window",
    description:
      "Clears the cursor and the watermark: the next cycle (due at once) starts at now - the stream's default window. " +
      'Events seen within the deduplication period are dropped again; older ones are collected again. Answers the reset state row.',
    access: { requires: 'integration.reset' },
    schema: { params: StreamParams, response: { 200: CollectorState, 404: ErrorBody } },
    handler: async (req) => service.resetCursor(scopeOf(req.actor!), req.params.integration_id, req.params.stream),
  });

  route(app, {
    method: 'POST',
    url: '/api/collectors/state/:integration_id/:stream/trigger',
    operationId: 'collectors.trigger',
    summary: 'Run a collection cycle of the stream now (a real call to the vendor, consuming its quota)',
    description:
      'Answers 202 with the task id (a collector run), not the result. 422 collection.not_collectable when the integration does not collect.',
    access: { requires: 'authenticated' },
    // The run is recorded and queued outside a transaction, so the job never starts before its row exists.
    audit: 'separate',
    schema: { params: StreamParams, response: { 202: TriggerResult, 404: ErrorBody, 422: ErrorBody } },
    handler: async (req, reply) => {
      const result = await service.trigger(req.actor!, req.params.integration_id, req.params.stream);
      reply.code(202);
      return result;
    },
  });
}
