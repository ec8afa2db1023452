import { scopeOf } from '../../core/scope.js';
import { route, type Api } from '../../platform/http/routes.js';
import { HealthList, IntegrationParams, SingleHealth } from './schema.js';
import type { PipelineHealthService } from './service.js';

export function pipelineHealthRoutes(app: Api, service: PipelineHealthService): void {
  // A static path: Fastify prefers it to /api/integrations/:integration_id.
  route(app, {
    method: 'GET',
    url: '/api/integrations/pipeline-health',
    operationId: 'pipeline_health.list',
    summary: 'Collection, quarantine, new fields and events in of every integration in your scope',
    description: 'From stored data only (no vendor call). Cached 60 s per caller; cached_at says when it was computed.',
    access: { requires: 'integration.read' },
    schema: { response: { 200: HealthList } },
    handler: async (req) => service.list(req.actor!),
  });

  route(app, {
    method: 'GET',
    url: '/api/integrations/:integration_id/pipeline-health',
    operationId: 'pipeline_health.get',
    summary: 'Collection, quarantine, new fields and events in of one integration',
    description:
      'From stored data only (no vendor call). Cached 60 s per integration, shared by every reader; cached_at says when it was computed.',
    access: { requires: 'integration.read' },
    schema: { params: IntegrationParams, response: { 200: SingleHealth } },
    handler: async (req) => service.get(scopeOf(req.actor!), req.params.integration_id),
  });
}
