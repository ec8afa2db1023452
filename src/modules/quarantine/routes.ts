import { Type, type Static } from 'typebox';
import { offsetEnvelope } from '../../core/paging.js';
import { scopeOf } from '../../core/scope.js';
import { route, type Api } from '../../platform/http/routes.js';
import { DEFAULT_LIMIT, ErrorBody, MAX_BULK_IDS } from '../../platform/http/schemas.js';
import {
  BulkBody,
  DiscardResult,
  EventParams,
  IdsQuery,
  IdsResult,
  ListQuery,
  QuarantineEvent,
  QuarantineItem,
  QuarantinePage,
  ReprocessResult,
} from './schema.js';
import type { QuarantineService } from './service.js';
import type { QuarantineFilter } from './store.js';

function filterOf(q: Static<typeof IdsQuery>): QuarantineFilter {
  const status = q.status ?? 'quarantined';
  return {
    organizationId: q.organization_id,
    integrationId: q.integration_id,
    stream: q.stream,
    errorKind: q.error_kind,
    status: status === 'all' ? undefined : status,
    since: q.since,
    until: q.until,
  };
}

export function quarantineRoutes(app: Api, service: QuarantineService): void {
  route(app, {
    method: 'GET',
    url: '/api/quarantine',
    operationId: 'quarantine.list',
    summary: 'Events that failed normalization, newest first (without the raw event)',
    access: { requires: 'quarantine.read' },
    schema: { querystring: ListQuery, response: { 200: QuarantinePage } },
    handler: async (req) => {
      const { limit = DEFAULT_LIMIT, offset = 0 } = req.query;
      const { items, total } = await service.list(scopeOf(req.actor!), filterOf(req.query), { limit, offset });
      return offsetEnvelope(items, total, { limit, offset });
    },
  });

  route(app, {
    method: 'GET',
    url: '/api/quarantine/bulk/ids',
    operationId: 'quarantine.bulk_ids',
    summary: `The ids of the events matching the list filters, at most ${MAX_BULK_IDS}, for a bulk discard or reprocess`,
    description: 'truncated is true when more events match: act on these ids, then ask again.',
    access: { requires: 'quarantine.read' },
    schema: { querystring: IdsQuery, response: { 200: IdsResult } },
    handler: async (req) => service.ids(scopeOf(req.actor!), filterOf(req.query)),
  });

  route(app, {
    method: 'POST',
    url: '/api/quarantine/bulk/discard',
    operationId: 'quarantine.bulk_discard',
    summary: `Remove up to ${MAX_BULK_IDS} events permanently; ids outside your scope are reported as not found`,
    description: 'The removal and its audit entry commit in one transaction. There is no recycle bin.',
    access: { requires: 'quarantine.discard' },
    schema: { body: BulkBody, response: { 200: DiscardResult } },
    handler: async (req) => service.bulkDiscard(scopeOf(req.actor!), req.body.ids),
  });

  route(app, {
    method: 'POST',
    url: '/api/quarantine/bulk/reprocess',
    operationId: 'quarantine.bulk_reprocess',
    summary: `Normalize up to ${MAX_BULK_IDS} events again with the live mapping`,
    description:
      'Successes are marked reprocessed and sent on down the pipeline; failures stay quarantined with their error ' +
      'updated (listed in failures). Unknown, foreign and already reprocessed ids are listed in errors.',
    access: { requires: 'quarantine.discard' },
    schema: { body: BulkBody, response: { 200: ReprocessResult } },
    handler: async (req) => service.bulkReprocess(scopeOf(req.actor!), req.body.ids),
  });

  route(app, {
    method: 'GET',
    url: '/api/quarantine/:event_id',
    operationId: 'quarantine.get',
    summary: 'One quarantined event with its raw content (unmasked)',
    description:
      "raw is the event exactly as received, secrets included: quarantine.read in the event's organization is what " +
      'allows reading it. Unknown ids, ids that are not UUIDs and events of other organizations answer 404.',
    access: { requires: 'quarantine.read' },
    schema: { params: EventParams, response: { 200: QuarantineEvent } },
    handler: async (req) => service.get(scopeOf(req.actor!), req.params.event_id),
  });

  route(app, {
    method: 'POST',
    url: '/api/quarantine/:event_id/discard',
    operationId: 'quarantine.discard',
    summary: 'Remove one event permanently',
    access: { requires: 'quarantine.discard' },
    schema: { params: EventParams, response: { 204: Type.Null({ description: 'Removed' }) } },
    handler: async (req, reply) => {
      await service.discard(scopeOf(req.actor!), req.params.event_id);
      reply.code(204);
      return null;
    },
  });

  route(app, {
    method: 'POST',
    url: '/api/quarantine/:event_id/reprocess',
    operationId: 'quarantine.reprocess',
    summary: 'Normalize one event again with the live mapping',
    description:
      'Answers the event: status reprocessed on success; on failure still quarantined, with the new error. 409 when already reprocessed.',
    access: { requires: 'quarantine.discard' },
    schema: { params: EventParams, response: { 200: QuarantineItem, 409: ErrorBody } },
    handler: async (req) => service.reprocess(scopeOf(req.actor!), req.params.event_id),
  });
}
