// Triage at volume (docs/detections.md): findings grouped by kind and entity, and one change of
// status, assignee or comment for a whole group or a selection. Weir's additions to the spec's
// detection operations; the change needs query.run, as the single change does.
import type { Static } from 'typebox';
import { scopeOf } from '../../core/scope.js';
import { route, type Api } from '../../platform/http/routes.js';
import { DEFAULT_LIMIT } from '../../platform/http/schemas.js';
import { offsetEnvelope } from '../../core/paging.js';
import { errors } from '../../core/errors.js';
import { decodeGroup } from './entity.js';
import { STATUSES, type Status } from './service.js';
import { BulkAnswer, BulkBody, DetectionGroupList } from './schema-triage.js';
import { ListQuery } from './schema.js';
import type { BulkBody as Bulk, Triage } from './triage.js';
import type { TriageFilter } from './store-triage.js';

/** The list's status filter: one status or several separated by commas. */
/** What a detection list or group query asks for: the filter, the order and the page. */
export function listRequest(q: Static<typeof ListQuery>) {
  const status = statuses(q.status);
  const filter: TriageFilter = {
    ...(q.group !== undefined ? { group: decodeGroup(q.group, 'querystring/group') } : {}),
    ...(q.organization_id !== undefined ? { organization_id: q.organization_id } : {}),
    ...(status ? { status } : {}),
    ...(q.severity_min !== undefined ? { severity_min: q.severity_min } : {}),
    ...(q.from ? { from: q.from as unknown as Date } : {}),
    ...(q.to ? { to: q.to as unknown as Date } : {}),
    ...(q.rule_id !== undefined ? { rule_id: q.rule_id } : {}),
    ...(q.source !== undefined ? { source: q.source } : {}),
    ...(q.integration_id !== undefined ? { integration_id: q.integration_id } : {}),
    ...(q.assignee_id !== undefined ? { assignee_id: q.assignee_id } : {}),
  };
  return { filter, sort: q.sort ?? 'severity', page: { limit: q.limit ?? DEFAULT_LIMIT, offset: q.offset ?? 0 } };
}

export function statuses(text: string | undefined): Status[] | undefined {
  if (text === undefined) return undefined;
  const list = text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const bad = list.find((s) => !(STATUSES as readonly string[]).includes(s));
  if (bad !== undefined)
    throw errors.validation(`querystring/status: ${bad} is not one of ${STATUSES.join(', ')}`, {
      errors: [{ location: 'querystring/status', message: `must be among ${STATUSES.join(', ')}` }],
    });
  return list as Status[];
}

export function triageRoutes(app: Api, triage: Triage): void {
  route(app, {
    method: 'GET',
    url: '/api/detections/groups',
    operationId: 'detections.groups',
    summary:
      'Detections grouped: the same rule (or schedule, or vendor finding title) about the same entity (rule group, user, host, source address, resource) is one group with its count, first and last seen and highest severity; most severe first. Takes the filters of the list',
    addition: true,
    access: { requires: 'authenticated' },
    schema: { querystring: ListQuery, response: { 200: DetectionGroupList } },
    handler: async (req) => {
      const q = req.query;
      const { filter, sort, page } = listRequest(q);
      const { items, total } = await triage.groups(scopeOf(req.actor!), filter, sort, page);
      return offsetEnvelope(items, total, page);
    },
  });

  route(app, {
    method: 'POST',
    url: '/api/detections/bulk/update',
    operationId: 'detections.bulk_update',
    summary:
      'Triage many at once: change the status, the assignee, or add a comment to every detection of a group (optionally only those in some statuses) or of a list of ids, in one transaction; each detection gets the history entries a single change writes, and the audit entry names them all. 404 when an id or the group is not visible',
    addition: true,
    access: { requires: 'query.run' },
    schema: { body: BulkBody, response: { 200: BulkAnswer } },
    handler: async (req) => {
      const { group, ...rest } = req.body;
      return triage.bulk(req.actor!, {
        ...(rest as Omit<Bulk, 'group'>),
        ...(group !== undefined ? { group: decodeGroup(group, 'body/group') } : {}),
      });
    },
  });
}
