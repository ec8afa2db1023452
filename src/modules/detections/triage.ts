// Triage at volume (docs/detections.md): the list most severe first, findings grouped by kind
// and entity with counts, a group's or a selection's status and assignee changed in one request
// (each detection's history as a single change writes it, one audit entry naming them all), the
// evidence as the fields that matched, ATT&CK ids with their names, assignees by name.
import type { Actor } from '../../core/actor.js';
import type { Clock } from '../../core/clock.js';
import { AppError, errors } from '../../core/errors.js';
import { newId } from '../../core/ids.js';
import type { OffsetPage } from '../../core/paging.js';
import { scopeOf, type Scope } from '../../core/scope.js';
import type { Condition } from '../../pipeline/conditions/types.js';
import { setAuditTarget } from '../audit/service.js';
import { attackOf } from './attack/names.js';
import { encodeGroup, entityLabel, type GroupKey } from './entity.js';
import { conditionFields, EVIDENCE_FIELDS, evidenceOf } from './evidence.js';
import { detectionOut, OCSF_STATUS, type Status } from './service.js';
import type { DetectionRow, DetectionStore, HistoryRow } from './store.js';
import type { DetectionSort, TriageFilter, TriageStore } from './store-triage.js';

/** The most findings one bulk change takes (a group larger than this is changed in several requests). */
export const MAX_BULK_CHANGE = 10_000;

/** What the evidence needs of the event store (modules/search's port). */
export interface EvidenceEvents {
  rows(
    scope: { organizationIds: readonly number[]; from: Date; to: Date; condition: Condition | null },
    opts: { fields: null; sort: { field: string; order: 'asc' | 'desc' }[]; limit: number },
  ): Promise<{ event_id: string; time: string | Date; event?: Record<string, unknown> }[]>;
}

export interface BulkBody {
  ids?: string[];
  group?: GroupKey;
  /** With group: only the group's findings in these statuses (the list's status filter). */
  where_status?: Status[];
  status?: Status;
  assignee_id?: number | null;
  comment?: string;
}

const actorKey = (a: Actor) => `${a.kind}:${a.id}`;
const DAY_MS = 86_400_000;

export function createTriage(deps: {
  store: DetectionStore;
  triage: TriageStore;
  clock: Clock;
  events?: EvidenceEvents | undefined;
}) {
  const { store, triage, clock } = deps;

  async function assignees(ids: (number | null)[]) {
    const names = await triage.userNames(ids.filter((i): i is number => i !== null));
    return (id: number | null) => {
      if (id === null) return null;
      const u = names.get(id);
      return { id, username: u?.username ?? null, display_name: u?.display_name ?? null };
    };
  }

  /** Detections as the API answers them: with their entity, named assignee and named ATT&CK ids. */
  async function present<T extends DetectionRow & { entity: string }>(rows: T[]) {
    const assignee = await assignees(rows.map((r) => r.assignee_id));
    return rows.map((r) => ({
      ...detectionOut(r),
      entity: entityLabel(r.entity),
      group: encodeGroup({ organization_id: r.organization_id, source: r.source, kind: kindOf(r), entity: r.entity }),
      assignee: assignee(r.assignee_id),
      attack: attackOf(r.mitre),
    }));
  }
  const kindOf = (r: DetectionRow) => r.rule_id ?? r.schedule_id ?? r.title;

  function inOrganizations(scope: Scope, organizationId: number | undefined) {
    if (organizationId !== undefined && !scope.global && !scope.organizationIds.includes(organizationId))
      throw errors.notFound('Organization');
  }

  async function evidence(d: DetectionRow) {
    let fields = [...EVIDENCE_FIELDS];
    if (d.rule_id && d.rule_version !== null) {
      const v = await store.ruleVersion(d.rule_id, d.rule_version);
      const def = (v?.definition ?? {}) as { condition?: Condition; group_by?: string[] };
      const named = [...conditionFields(def.condition), ...(def.group_by ?? [])];
      fields = [...new Set([...named, ...fields])];
    }
    const ids = d.event_ids.slice(0, 50);
    const found = new Map<
      string,
      { time: string | null; event: Record<string, unknown>; from: 'event_store' | 'finding' }
    >();
    if (deps.events && ids.length) {
      const rows = await deps.events
        .rows(
          {
            organizationIds: [d.organization_id],
            from: new Date(d.first_seen_at.getTime() - DAY_MS),
            to: new Date(Math.max(d.last_seen_at.getTime(), d.created_at.getTime()) + DAY_MS),
            condition: { field: 'envelope.id', op: 'in', value: ids },
          },
          { fields: null, sort: [{ field: 'time', order: 'asc' }], limit: ids.length },
        )
        .catch(() => []);
      for (const r of rows)
        if (r.event)
          found.set(r.event_id, { time: new Date(r.time).toISOString(), event: r.event, from: 'event_store' });
    }
    // What the finding itself carries: a vendor finding is its event, a rule finding its first event.
    const finding = d.finding as Record<string, unknown>;
    const first = ids[0];
    if (first !== undefined && !found.has(first)) {
      const sample = ((finding.evidences as { data?: unknown }[] | undefined)?.[0]?.data ?? null) as Record<
        string,
        unknown
      > | null;
      const event = d.source === 'vendor' ? finding : sample;
      const time = typeof event?.time === 'number' ? new Date(event.time).toISOString() : null;
      if (event) found.set(first, { time, event, from: 'finding' });
    }
    return evidenceOf(ids, found, fields);
  }

  return {
    async list(scope: Scope, f: TriageFilter, sort: DetectionSort, page: OffsetPage) {
      inOrganizations(scope, f.organization_id);
      const { items, total } = await triage.list(scope, f, sort, page);
      return { items: await present(items), total };
    },

    async groups(scope: Scope, f: TriageFilter, sort: DetectionSort, page: OffsetPage) {
      inOrganizations(scope, f.organization_id);
      const { items, total } = await triage.groups(scope, f, sort, page);
      return {
        total,
        items: items.map((g) => ({
          key: encodeGroup(g),
          organization_id: g.organization_id,
          source: g.source,
          title: g.title,
          top_id: g.top_id,
          entity: entityLabel(g.entity),
          rule_id: g.rule_id,
          schedule_id: g.schedule_id,
          integration_id: g.integration_id,
          count: g.count,
          severity_id: g.severity_id,
          first_seen_at: g.first_seen_at,
          last_seen_at: g.last_seen_at,
          event_count: g.event_count,
          statuses: g.statuses,
        })),
      };
    },

    /** The detail the single operations answer, with entity, names, ATT&CK names and evidence. */
    async detail<T extends { id: string }>(scope: Scope, base: T) {
      const row = await store.get(scope, base.id);
      if (!row) throw errors.notFound('Detection');
      const entity = (await triage.list(scope, { id: base.id }, 'time', { limit: 1, offset: 0 })).items[0]?.entity;
      const [shown] = await present([{ ...row, entity: entity ?? '' }]);
      return { ...base, ...shown!, evidence: await evidence(row) };
    },

    async bulk(actor: Actor, body: BulkBody) {
      if (!body.ids === !body.group)
        throw new AppError('detection.invalid_change', {
          detail: 'Give either ids or group',
          details: { errors: [{ location: 'body', message: 'ids or group, not both' }] },
        });
      if (body.status === undefined && body.assignee_id === undefined && !body.comment?.trim())
        throw new AppError('detection.invalid_change', {
          detail: 'Give status, assignee_id or comment',
          details: { errors: [{ location: 'body', message: 'nothing to change' }] },
        });
      const scope = scopeOf(actor);
      const ids = body.ids ? [...new Set(body.ids)] : undefined;
      const filter: TriageFilter = {
        ...(body.group ? { group: body.group } : {}),
        ...(body.group && body.where_status?.length ? { status: body.where_status } : {}),
      };
      const rows = await triage.forChange(scope, filter, ids, MAX_BULK_CHANGE + 1);
      if (ids) {
        const seen = new Set(rows.map((r) => r.id));
        const missing = ids.find((id) => !seen.has(id));
        if (missing !== undefined) throw errors.notFound('Detection');
      } else if (rows.length === 0) throw errors.notFound('Detection group');
      if (rows.length > MAX_BULK_CHANGE)
        throw new AppError('detection.invalid_change', {
          detail: `The group has more than ${MAX_BULK_CHANGE} findings: narrow it with where_status or change it in parts`,
          details: { errors: [{ location: 'body/group', message: `more than ${MAX_BULK_CHANGE} findings` }] },
        });
      if (body.assignee_id !== undefined && body.assignee_id !== null)
        for (const org of new Set(rows.map((r) => r.organization_id)))
          if (!(await store.userInOrganization(body.assignee_id, org)))
            throw new AppError('detection.invalid_change', {
              detail: `User ${body.assignee_id} is not an active user of organization ${org}`,
              details: { errors: [{ location: 'body/assignee_id', message: 'not a user of the organization' }] },
            });
      const now = clock.now();
      const who = actorKey(actor);
      const comment = body.comment?.trim().slice(0, 10_000);
      const history: Parameters<DetectionStore['addHistory']>[0] = [];
      const entry = (detection_id: string, kind: HistoryRow['kind'], change: Record<string, unknown>) =>
        history.push({ id: newId(), detection_id, at: now, actor: who, kind, change, comment: null });
      const statusChanged: string[] = [];
      const assigneeChanged: string[] = [];
      const from: Record<string, number> = {};
      for (const r of rows) {
        if (body.status !== undefined && body.status !== r.status) {
          statusChanged.push(r.id);
          from[r.status] = (from[r.status] ?? 0) + 1;
          entry(r.id, 'status', { from: r.status, to: body.status, status_id: OCSF_STATUS[body.status].status_id });
        }
        if (body.assignee_id !== undefined && body.assignee_id !== r.assignee_id) {
          assigneeChanged.push(r.id);
          entry(r.id, 'assignee', { from: r.assignee_id, to: body.assignee_id });
        }
        if (comment)
          history.push({ id: newId(), detection_id: r.id, at: now, actor: who, kind: 'comment', change: {}, comment });
      }
      if (body.status !== undefined) await triage.updateMany(statusChanged, { status: body.status }, now);
      if (body.assignee_id !== undefined)
        await triage.updateMany(assigneeChanged, { assignee_id: body.assignee_id }, now);
      for (let i = 0; i < history.length; i += 1000) await store.addHistory(history.slice(i, i + 1000));
      const orgs = [...new Set(rows.map((r) => r.organization_id))];
      const changes = [
        ...(body.status !== undefined
          ? [{ kind: 'status', from, to: body.status, status_id: OCSF_STATUS[body.status].status_id }]
          : []),
        ...(body.assignee_id !== undefined ? [{ kind: 'assignee', to: body.assignee_id }] : []),
      ];
      setAuditTarget({
        type: 'detection',
        id: body.group ? `group:${encodeGroup(body.group)}` : 'selection',
        ...(orgs.length === 1 ? { organizationId: orgs[0] } : {}),
        details: {
          changes,
          commented: Boolean(comment),
          count: rows.length,
          detection_ids: rows.map((r) => r.id),
        },
      });
      return {
        matched: rows.length,
        status_changed: statusChanged.length,
        assignee_changed: assigneeChanged.length,
        commented: comment ? rows.length : 0,
        detection_ids: rows.map((r) => r.id),
      };
    },
  };
}

export type Triage = ReturnType<typeof createTriage>;
