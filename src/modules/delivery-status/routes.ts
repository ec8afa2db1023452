import { Readable } from 'node:stream';
import { offsetEnvelope } from '../../core/paging.js';
import { scopeOf } from '../../core/scope.js';
import { route, type Api } from '../../platform/http/routes.js';
import { DEFAULT_LIMIT, ErrorBody } from '../../platform/http/schemas.js';
import {
  DEFAULT_METRICS_HOURS,
  DEFAULT_TAP_LIMIT,
  DEFAULT_TAP_SECONDS,
  DestinationParams,
  DlqPage,
  DlqQuery,
  EventLineage,
  EventParams,
  HealthBatch,
  HealthDetail,
  LineageList,
  LineageQuery,
  Metrics,
  MetricsQuery,
  NdjsonBody,
  ReprocessBody,
  ReprocessResult,
  TapQuery,
} from './schema.js';
import type { DeliveryStatusService } from './service.js';
import type { TapService } from './tap.js';

const BASE = '/api/collectors/destinations';

// The static /health path is preferred by the router over /:destination_id whatever the order.
export function deliveryStatusRoutes(app: Api, service: DeliveryStatusService, tap: TapService): void {
  route(app, {
    method: 'GET',
    url: `${BASE}/health`,
    operationId: 'destinations.health_all',
    summary: 'Health of every destination you can see, in one call, with the accounting ledger of your scope',
    description:
      "One item per destination (your organizations' and the global ones): breaker state, dead letters, outbox backlog and " +
      'lag, last success and error, status. ledger accounts for every event of your scope: unaccounted is 0 when none is lost. ' +
      "Poll this instead of each destination's health.",
    access: { requires: 'destination.read' },
    schema: { response: { 200: HealthBatch } },
    handler: async (req) => service.healthAll(scopeOf(req.actor!)),
  });

  route(app, {
    method: 'GET',
    url: `${BASE}/:destination_id/health`,
    operationId: 'destinations.health',
    summary: 'Health of one destination, with its side of the ledger per organization, integration and stream',
    access: { requires: 'destination.read' },
    schema: { params: DestinationParams, response: { 200: HealthDetail } },
    handler: async (req) => service.health(scopeOf(req.actor!), req.params.destination_id),
  });

  route(app, {
    method: 'GET',
    url: `${BASE}/:destination_id/metrics`,
    operationId: 'destinations.metrics',
    summary: `Hourly delivery statistics of one destination over the last hours (default ${DEFAULT_METRICS_HOURS}, at most 168)`,
    description:
      'On a global destination without platform scope, series and totals (which span every organization) are withheld ' +
      "(per_organization: true) and ledger gives your organizations' daily counts.",
    access: { requires: 'destination.read' },
    schema: { params: DestinationParams, querystring: MetricsQuery, response: { 200: Metrics } },
    handler: async (req) =>
      service.metrics(scopeOf(req.actor!), req.params.destination_id, req.query.hours ?? DEFAULT_METRICS_HOURS),
  });

  route(app, {
    method: 'GET',
    url: `${BASE}/:destination_id/dlq`,
    operationId: 'destinations.dlq_list',
    summary: "The destination's dead-letter queue, newest first",
    description:
      'Events the destination refused for good or that exhausted their retries, with the reason. On a global destination ' +
      "you see your organizations' events only, unless you have platform scope. Personal data in event is masked unless you hold user.manage.",
    access: { requires: 'destination.read' },
    schema: { params: DestinationParams, querystring: DlqQuery, response: { 200: DlqPage } },
    handler: async (req) => {
      const {
        limit = DEFAULT_LIMIT,
        offset = 0,
        status = 'dead',
        error_kind,
        organization_id,
        integration_id,
        stream,
        since,
        until,
      } = req.query;
      const page = { limit, offset };
      const filter = {
        status: status === 'all' ? undefined : status,
        errorKind: error_kind,
        organizationId: organization_id,
        integrationId: integration_id,
        stream,
        since,
        until,
      };
      const { items, total } = await service.dlqList(
        scopeOf(req.actor!),
        req.params.destination_id,
        filter,
        page,
        req.actor!.permissions.has('user.manage'),
      );
      return offsetEnvelope(items, total, page);
    },
  });

  route(app, {
    method: 'POST',
    url: `${BASE}/:destination_id/dlq/reprocess`,
    operationId: 'destinations.dlq_reprocess',
    summary: "Send dead letters back to the destination's outbox",
    description:
      'Either ids (at most 500) or all: true (optionally one error_kind; at most 10,000 per call, remaining says how many ' +
      'are left). The events become new delivery batches of kind reprocess, the rows are marked reprocessed and the ledger ' +
      "counts them, in one transaction. On a global destination an organization administrator resends their organizations' " +
      "events; a platform administrator resends every organization's. A disabled destination keeps them in its outbox until " +
      'it is enabled (destination_enabled: false). Unknown and foreign ids are listed as not_found.',
    access: { requires: 'user.manage' },
    schema: { params: DestinationParams, body: ReprocessBody, response: { 200: ReprocessResult } },
    handler: async (req) => service.reprocess(scopeOf(req.actor!), req.params.destination_id, req.body),
  });

  route(app, {
    method: 'GET',
    url: `${BASE}/:destination_id/lineage`,
    operationId: 'destinations.lineage',
    summary: 'Lineage of the events recently copied to this destination, newest first',
    description:
      'A plain list (X-Total-Count gives the number of events matching). Lineage is optional (WEIR_LINEAGE_ENABLED) and kept ' +
      'about 7 days: when it is off the answer is an empty list, not an error.',
    access: { requires: 'destination.read' },
    schema: { params: DestinationParams, querystring: LineageQuery, response: { 200: LineageList } },
    handler: async (req, reply) => {
      const { limit = DEFAULT_LIMIT, offset = 0 } = req.query;
      const { items, total } = await service.lineageOfDestination(scopeOf(req.actor!), req.params.destination_id, {
        limit,
        offset,
      });
      reply.header('x-total-count', String(total));
      return items;
    },
  });

  route(app, {
    method: 'GET',
    url: '/api/collectors/lineage/:event_id',
    operationId: 'destinations.lineage_event',
    summary: 'Lineage of one event: its routes and every copy with its delivery attempts',
    description:
      'An empty list when lineage is off (WEIR_LINEAGE_ENABLED). With lineage on, an event that is unknown, expired (about ' +
      '7 days) or of another organization is 404.',
    access: { requires: 'user.manage' },
    schema: { params: EventParams, response: { 200: EventLineage } },
    handler: async (req) => service.lineageOfEvent(scopeOf(req.actor!), req.params.event_id),
  });

  route(app, {
    method: 'GET',
    url: `${BASE}/:destination_id/tap`,
    operationId: 'destinations.tap',
    summary: 'Watch what the destination receives, live, as NDJSON of masked events',
    description:
      `Streams one line {"at", "event"} per event sent to the destination, personal data masked, for seconds (default ` +
      `${DEFAULT_TAP_SECONDS}, at most 60) or until limit events (default ${DEFAULT_TAP_LIMIT}, at most 1000), whichever comes first. ` +
      'A global destination can be tapped only with platform scope (403 destination.tap_needs_platform_scope).',
    access: { requires: 'user.manage' },
    schema: {
      params: DestinationParams,
      querystring: TapQuery,
      response: {
        200: {
          description: 'The sampled events as NDJSON',
          content: { 'application/x-ndjson': { schema: NdjsonBody } },
        },
        403: ErrorBody,
      },
    },
    handler: async (req, reply) => {
      const actor = req.actor!;
      const { seconds = DEFAULT_TAP_SECONDS, limit = DEFAULT_TAP_LIMIT } = req.query;
      const session = await tap.open(scopeOf(actor), req.params.destination_id, {
        seconds,
        limit,
        createdBy: actor.kind === 'user' ? actor.id : null,
      });
      // The response's close is the client going away (or the end): it stops the polling.
      const stop = new AbortController();
      reply.raw.once('close', () => stop.abort());
      // Node sends the head with the first line; a quiet destination would leave the client waiting for it.
      reply.raw.once('pipe', () => reply.raw.flushHeaders());
      reply
        .type('application/x-ndjson; charset=utf-8')
        .header('cache-control', 'no-store')
        .header('x-accel-buffering', 'no');
      return reply.send(Readable.from(session.lines(stop.signal)));
    },
  });
}
