import { Type } from 'typebox';
import { offsetEnvelope } from '../../core/paging.js';
import { scopeOf } from '../../core/scope.js';
import { route, type Api } from '../../platform/http/routes.js';
import { DEFAULT_LIMIT, ErrorBody } from '../../platform/http/schemas.js';
import { AuditPage } from '../audit/schema.js';
import type { DryRun } from './dry-run.js';
import type { RoutingFlow } from './flow.js';
import {
  AuditQuery,
  CreateBody,
  DEFAULT_WINDOW_HOURS,
  DryRunBody,
  DryRunResult,
  Flow,
  FlowQuery,
  Health,
  ListQuery,
  MAX_DRY_RUN_EVENTS,
  MetricsSeries,
  ReorderBody,
  RollbackBody,
  Route,
  RouteList,
  RouteParams,
  Topology,
  TopologyQuery,
  UpdateBody,
  WindowQuery,
} from './schema.js';
import type { RoutingService } from './service.js';

const BASE = '/api/collectors/routes';
const NoContent = Type.Null({ description: 'Deleted' });
const DOCS = 'Conditions, transforms and fan-out: docs/routing.md.';

// Static paths (dry-run, flow, reorder, topology) are registered like the others: the
// router prefers a static segment over :route_id whatever the order.
export function routingRoutes(app: Api, service: RoutingService, flow: RoutingFlow, dryRun: DryRun): void {
  route(app, {
    method: 'GET',
    url: BASE,
    operationId: 'routes.list',
    summary: 'Routes of your organizations, by organization and evaluation order',
    access: { requires: 'route.read' },
    schema: { querystring: ListQuery, response: { 200: RouteList } },
    handler: async (req) => service.list(scopeOf(req.actor!), req.query.organization_id),
  });

  route(app, {
    method: 'POST',
    url: BASE,
    operationId: 'routes.create',
    summary: 'Create a route; it takes effect at the next dispatch cycle',
    description:
      `Validated at once: 422 route.invalid_definition with error.details.errors [{path, message}] (path such as ` +
      `condition.all[2].value); 422 route.unknown_destination when a destination does not exist or is another ` +
      `organization's; 409 route.name_taken. Writes version 1. ${DOCS}`,
    access: { requires: 'user.manage' },
    schema: { body: CreateBody, response: { 201: Route, 409: ErrorBody } },
    handler: async (req, reply) => {
      const created = await service.create(req.actor!, req.body);
      reply.code(201);
      return created;
    },
  });

  route(app, {
    method: 'POST',
    url: `${BASE}/dry-run`,
    operationId: 'routes.dry_run',
    summary:
      'Route given events through the saved routes (or drafts) and show what each destination would receive; changes nothing',
    description:
      `Up to ${MAX_DRY_RUN_EVENTS} events, each an OCSF event or {ocsf, id?, integration_id?, stream?, valid?}. Runs the ` +
      `plan function the dispatchers run. Sampling is decided by the hash of the event id: give ids to reproduce a ` +
      `decision. ${DOCS}`,
    access: { requires: 'user.manage' },
    audit: false,
    bodyLimit: 16 * 1024 * 1024,
    schema: { body: DryRunBody, response: { 200: DryRunResult } },
    handler: async (req) => dryRun(req.actor!, req.body),
  });

  route(app, {
    method: 'GET',
    url: `${BASE}/flow`,
    operationId: 'routes.flow',
    summary: 'The routing topology with live counters over a window',
    description:
      `Integrations (events in, normalized, quarantined), mappings (the same per stream), routes (matched, sampled out), ` +
      `destinations (delivered, dead-lettered for your organizations; failed requests), filtered totals by reason. Window ` +
      `?hours=1..168 (default ${DEFAULT_WINDOW_HOURS}); per-day counters cover every UTC day the window touches.`,
    access: { requires: 'route.read' },
    schema: { querystring: FlowQuery, response: { 200: Flow } },
    handler: async (req) =>
      flow.flow(scopeOf(req.actor!), req.query.organization_id, req.query.hours ?? DEFAULT_WINDOW_HOURS),
  });

  route(app, {
    method: 'POST',
    url: `${BASE}/reorder`,
    operationId: 'routes.reorder',
    summary: "Set the evaluation order of one organization's routes",
    description:
      "route_ids is the complete ordered list of the organization's route ids. An id of a route outside your scope is a " +
      '403, an unknown id a 404, a missing or repeated id 422 route.reorder_incomplete; on any error nothing changes. ' +
      "Answers the organization's routes in their new order.",
    access: { requires: 'user.manage' },
    schema: { body: ReorderBody, response: { 200: RouteList } },
    handler: async (req) => service.reorder(req.actor!, req.body),
  });

  route(app, {
    method: 'GET',
    url: `${BASE}/topology`,
    operationId: 'routes.topology',
    summary: 'Integrations → mapping definitions → routes → destinations of your organizations',
    description:
      'Every stream of an organization reaches every enabled route of it (the condition decides per event): an edge goes ' +
      'from each of its mapping nodes to each enabled route. Streams are those the pipeline has counted.',
    access: { requires: 'route.read' },
    schema: { querystring: TopologyQuery, response: { 200: Topology } },
    handler: async (req) => flow.topology(scopeOf(req.actor!), req.query.organization_id),
  });

  route(app, {
    method: 'DELETE',
    url: `${BASE}/:route_id`,
    operationId: 'routes.delete',
    summary: 'Delete a route (later routes move up); effective at the next dispatch cycle',
    access: { requires: 'user.manage' },
    schema: { params: RouteParams, response: { 204: NoContent } },
    handler: async (req, reply) => {
      await service.remove(req.actor!, req.params.route_id);
      reply.code(204);
      return null;
    },
  });

  route(app, {
    method: 'GET',
    url: `${BASE}/:route_id`,
    operationId: 'routes.get',
    summary: 'One route',
    access: { requires: 'route.read' },
    schema: { params: RouteParams, response: { 200: Route } },
    handler: async (req) => service.get(scopeOf(req.actor!), req.params.route_id),
  });

  route(app, {
    method: 'PUT',
    url: `${BASE}/:route_id`,
    operationId: 'routes.update',
    summary: 'Change a route: any subset of its fields',
    description:
      'A change of the definition (name, description, enabled, condition, transforms, destination_ids, final) writes a new ' +
      `version with the comment given; a position moves the route (others shift). Validated like a creation. ${DOCS}`,
    access: { requires: 'user.manage' },
    schema: { params: RouteParams, body: UpdateBody, response: { 200: Route, 409: ErrorBody } },
    handler: async (req) => service.update(req.actor!, req.params.route_id, req.body),
  });

  route(app, {
    method: 'GET',
    url: `${BASE}/:route_id/audit`,
    operationId: 'routes.audit',
    summary:
      'Audit entries about the route (creation, changes with their definition, rollbacks, refused attempts), newest first',
    access: { requires: 'route.read' },
    schema: { params: RouteParams, querystring: AuditQuery, response: { 200: AuditPage } },
    handler: async (req) => {
      const { limit = DEFAULT_LIMIT, offset = 0, outcome } = req.query;
      const page = { limit, offset };
      const { items, total } = await service.audit(scopeOf(req.actor!), req.params.route_id, outcome, page);
      return offsetEnvelope(items, total, page);
    },
  });

  route(app, {
    method: 'GET',
    url: `${BASE}/:route_id/health`,
    operationId: 'routes.health',
    summary: 'Whether the route matches and its destinations take what it sends',
    description:
      'disabled, idle (nothing matched in the window: not a fault), unhealthy (a destination missing, disabled or with an ' +
      `open breaker), degraded (dead letters of your organization in the window) or healthy. ?hours=1..168 (default ${DEFAULT_WINDOW_HOURS}).`,
    access: { requires: 'route.read' },
    schema: { params: RouteParams, querystring: WindowQuery, response: { 200: Health } },
    handler: async (req) =>
      flow.health(scopeOf(req.actor!), req.params.route_id, req.query.hours ?? DEFAULT_WINDOW_HOURS),
  });

  route(app, {
    method: 'GET',
    url: `${BASE}/:route_id/metrics`,
    operationId: 'routes.metrics',
    summary: 'Hourly matched, sampled-out and delivered copies of the route',
    access: { requires: 'route.read' },
    schema: { params: RouteParams, querystring: WindowQuery, response: { 200: MetricsSeries } },
    handler: async (req) =>
      flow.metrics(scopeOf(req.actor!), req.params.route_id, req.query.hours ?? DEFAULT_WINDOW_HOURS),
  });

  route(app, {
    method: 'POST',
    url: `${BASE}/:route_id/rollback`,
    operationId: 'routes.rollback',
    summary: 'Give the route the definition of an earlier version, as a new version',
    description: '409 route.already_current when the route already has that definition; 404 for an unknown version.',
    access: { requires: 'user.manage' },
    schema: { params: RouteParams, body: RollbackBody, response: { 200: Route, 409: ErrorBody } },
    handler: async (req) => service.rollback(req.actor!, req.params.route_id, req.body),
  });
}
