// Triage (docs/detections.md): detections of the caller's organizations (404 outside them),
// listed with filters and paging; one with its full history; PATCH changes status (new,
// in_progress, resolved, false_positive, suppressed: OCSF status_id 1, 2, 4, 4 with verdict False
// Positive, 3), assignee and adds comments, each change a history entry and an audit entry.
import type { Actor } from '../../core/actor.js';
import type { Clock } from '../../core/clock.js';
import { AppError, errors } from '../../core/errors.js';
import { newId } from '../../core/ids.js';
import type { OffsetPage } from '../../core/paging.js';
import { scopeOf, type Scope } from '../../core/scope.js';
import { setAuditTarget } from '../audit/service.js';
import type { DetectionFilter, DetectionRow, DetectionStore, HistoryRow } from './store.js';

export const STATUSES = ['new', 'in_progress', 'resolved', 'false_positive', 'suppressed'] as const;
export type Status = (typeof STATUSES)[number];

/** The OCSF finding status_id (and verdict_id) of a triage status. */
export const OCSF_STATUS: Record<Status, { status_id: number; status: string; verdict_id?: number }> = {
  new: { status_id: 1, status: 'New' },
  in_progress: { status_id: 2, status: 'In Progress' },
  suppressed: { status_id: 3, status: 'Suppressed' },
  resolved: { status_id: 4, status: 'Resolved' },
  false_positive: { status_id: 4, status: 'Resolved', verdict_id: 1 },
};

export interface PatchBody {
  status?: Status;
  /** A user of the detection's organization (or a platform user); null unassigns. */
  assignee_id?: number | null;
  comment?: string;
}

export function detectionOut(d: DetectionRow) {
  const ocsf = OCSF_STATUS[d.status];
  return {
    id: d.id,
    organization_id: d.organization_id,
    source: d.source,
    uid: d.uid,
    title: d.title,
    description: d.description,
    severity_id: d.severity_id,
    status: d.status,
    status_id: ocsf.status_id,
    ...(ocsf.verdict_id ? { verdict_id: ocsf.verdict_id } : {}),
    assignee_id: d.assignee_id,
    rule_id: d.rule_id,
    rule_version: d.rule_version,
    schedule_id: d.schedule_id,
    search_id: d.search_id,
    integration_id: d.integration_id,
    stream: d.stream,
    mitre: d.mitre,
    event_ids: d.event_ids,
    event_count: d.event_count,
    first_seen_at: d.first_seen_at,
    last_seen_at: d.last_seen_at,
    case_id: d.case_id,
    created_at: d.created_at,
    updated_at: d.updated_at,
  };
}

export function historyOut(h: HistoryRow) {
  return { id: h.id, at: h.at, actor: h.actor, kind: h.kind, change: h.change, comment: h.comment };
}

const actorKey = (a: Actor) => `${a.kind}:${a.id}`;

export function createDetectionService(deps: { store: DetectionStore; clock: Clock }) {
  const { store, clock } = deps;

  async function visible(scope: Scope, id: string, lock = false): Promise<DetectionRow> {
    const d = await store.get(scope, id, lock);
    if (!d) throw errors.notFound('Detection');
    return d;
  }

  return {
    async list(scope: Scope, f: DetectionFilter, page: OffsetPage) {
      if (f.organization_id !== undefined && !scope.global && !scope.organizationIds.includes(f.organization_id))
        throw errors.notFound('Organization');
      const { items, total } = await store.list(scope, f, page);
      return { items: items.map(detectionOut), total };
    },

    async get(scope: Scope, id: string) {
      const d = await visible(scope, id);
      return { ...detectionOut(d), finding: d.finding, history: (await store.history(id)).map(historyOut) };
    },

    async patch(actor: Actor, id: string, body: PatchBody) {
      const d = await visible(scopeOf(actor), id, true);
      if (body.status === undefined && body.assignee_id === undefined && body.comment === undefined) {
        throw new AppError('detection.invalid_change', {
          detail: 'Give status, assignee_id or comment',
          details: { errors: [{ location: 'body', message: 'nothing to change' }] },
        });
      }
      const now = clock.now();
      const history: {
        id: string;
        detection_id: string;
        at: Date;
        actor: string;
        kind: HistoryRow['kind'];
        change: Record<string, unknown>;
        comment: string | null;
      }[] = [];
      const patch: { status?: Status; assignee_id?: number | null } = {};
      if (body.status !== undefined && body.status !== d.status) {
        patch.status = body.status;
        history.push({
          id: newId(),
          detection_id: id,
          at: now,
          actor: actorKey(actor),
          kind: 'status',
          change: { from: d.status, to: body.status, status_id: OCSF_STATUS[body.status].status_id },
          comment: null,
        });
      }
      if (body.assignee_id !== undefined && body.assignee_id !== d.assignee_id) {
        if (body.assignee_id !== null && !(await store.userInOrganization(body.assignee_id, d.organization_id))) {
          throw new AppError('detection.invalid_change', {
            detail: `User ${body.assignee_id} is not an active user of the detection's organization`,
            details: { errors: [{ location: 'body/assignee_id', message: 'not a user of the organization' }] },
          });
        }
        patch.assignee_id = body.assignee_id;
        history.push({
          id: newId(),
          detection_id: id,
          at: now,
          actor: actorKey(actor),
          kind: 'assignee',
          change: { from: d.assignee_id, to: body.assignee_id },
          comment: null,
        });
      }
      const comment = body.comment?.trim();
      if (comment)
        history.push({
          id: newId(),
          detection_id: id,
          at: now,
          actor: actorKey(actor),
          kind: 'comment',
          change: {},
          comment: comment.slice(0, 10_000),
        });
      if (Object.keys(patch).length) await store.update(id, patch, now);
      await store.addHistory(history);
      setAuditTarget({
        type: 'detection',
        id,
        organizationId: d.organization_id,
        details: { changes: history.map((h) => ({ kind: h.kind, ...h.change })), commented: Boolean(comment) },
      });
      return this.get(scopeOf(actor), id);
    },
  };
}

export type DetectionService = ReturnType<typeof createDetectionService>;
