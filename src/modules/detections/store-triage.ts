// Triage at volume (docs/detections.md): the list's filters and orders, findings grouped by kind
// and entity (entity.ts), the rows a bulk change takes, and the names of assignees. Every read
// is scoped to the caller's organizations.
import { sql, type Kysely, type SelectQueryBuilder } from 'kysely';
import type { OffsetPage } from '../../core/paging.js';
import type { Scope } from '../../core/scope.js';
import { executor } from '../../platform/db/ambient.js';
import type { DB } from '../../platform/db/index.js';
import { scoped } from '../../platform/db/scope.js';
import { entitySql, kindSql, type GroupKey } from './entity.js';
import type { DetectionFilter, DetectionRow } from './store.js';

/** severity: most severe first, then newest; time: newest first. Ties by id, so offsets are stable. */
export type DetectionSort = 'severity' | 'time';

export interface TriageFilter extends DetectionFilter {
  group?: GroupKey;
  id?: string;
}

export interface GroupRow {
  organization_id: number;
  source: DetectionRow['source'];
  kind: string;
  entity: string;
  count: number;
  severity_id: number;
  first_seen_at: Date;
  last_seen_at: Date;
  event_count: number;
  title: string;
  /** Its most severe, then most recent, finding. */
  top_id: string;
  rule_id: string | null;
  schedule_id: string | null;
  integration_id: number | null;
  statuses: Record<string, number>;
}

type Q = SelectQueryBuilder<DB, 'detections', object>;

/** The list's filters on a query of `detections`. */
export function filtered(base: Q, scope: Scope, f: TriageFilter): Q {
  let q = base.where(scoped(scope, 'detections.organization_id'));
  if (f.organization_id !== undefined) q = q.where('detections.organization_id', '=', f.organization_id);
  if (f.status?.length) q = q.where('detections.status', 'in', f.status);
  if (f.severity_min !== undefined) q = q.where('detections.severity_id', '>=', f.severity_min);
  if (f.from) q = q.where('detections.last_seen_at', '>=', f.from);
  if (f.to) q = q.where('detections.last_seen_at', '<', f.to);
  if (f.rule_id !== undefined) q = q.where('detections.rule_id', '=', f.rule_id);
  if (f.source !== undefined) q = q.where('detections.source', '=', f.source);
  if (f.integration_id !== undefined) q = q.where('detections.integration_id', '=', f.integration_id);
  if (f.assignee_id !== undefined) q = q.where('detections.assignee_id', '=', f.assignee_id);
  if (f.id !== undefined) q = q.where('detections.id', '=', f.id);
  if (f.group) {
    const g = f.group;
    q = q
      .where('detections.organization_id', '=', g.organization_id)
      .where('detections.source', '=', g.source)
      .where(sql<boolean>`${kindSql()} = ${g.kind}`)
      .where(sql<boolean>`${entitySql()} = ${g.entity}`);
  }
  return q;
}

export function triageQueries(db: Kysely<DB>) {
  const q = () => executor(db);
  return {
    async list(
      scope: Scope,
      f: TriageFilter,
      sort: DetectionSort,
      page: OffsetPage,
    ): Promise<{ items: (DetectionRow & { entity: string })[]; total: number }> {
      const base = filtered(q().selectFrom('detections'), scope, f);
      let items = base.selectAll('detections').select(entitySql().as('entity'));
      if (sort === 'severity') items = items.orderBy('detections.severity_id', 'desc');
      const [rows, count] = await Promise.all([
        items
          .orderBy('detections.last_seen_at', 'desc')
          .orderBy('detections.id', 'desc')
          .limit(page.limit)
          .offset(page.offset)
          .execute(),
        base.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow(),
      ]);
      return { items: rows, total: Number(count.n) };
    },

    /** Groups of the filtered findings, most severe (then most recent) first. */
    async groups(scope: Scope, f: TriageFilter, sort: DetectionSort, page: OffsetPage) {
      const inner = filtered(q().selectFrom('detections'), scope, f)
        .selectAll('detections')
        .select([kindSql().as('kind'), entitySql().as('entity')])
        .as('g');
      const keys = ['g.organization_id', 'g.source', 'g.kind', 'g.entity'] as const;
      const grouped = q()
        .selectFrom(inner)
        .select([
          ...keys,
          sql<string>`count(*)`.as('count'),
          sql<number>`max(g.severity_id)`.as('severity_id'),
          sql<Date>`min(g.first_seen_at)`.as('first_seen_at'),
          sql<Date>`max(g.last_seen_at)`.as('last_seen_at'),
          sql<string>`sum(g.event_count)`.as('event_count'),
          sql<string>`(array_agg(g.title order by g.last_seen_at desc, g.id desc))[1]`.as('title'),
          sql<string>`(array_agg(g.id order by g.severity_id desc, g.last_seen_at desc, g.id desc))[1]`.as('top_id'),
          sql<string | null>`max(g.rule_id)`.as('rule_id'),
          sql<string | null>`max(g.schedule_id)`.as('schedule_id'),
          sql<number | null>`max(g.integration_id)`.as('integration_id'),
          sql<string>`count(*) filter (where g.status = 'new')`.as('n_new'),
          sql<string>`count(*) filter (where g.status = 'in_progress')`.as('n_in_progress'),
          sql<string>`count(*) filter (where g.status = 'resolved')`.as('n_resolved'),
          sql<string>`count(*) filter (where g.status = 'false_positive')`.as('n_false_positive'),
          sql<string>`count(*) filter (where g.status = 'suppressed')`.as('n_suppressed'),
        ])
        .groupBy([...keys]);
      let ordered = grouped;
      if (sort === 'severity') ordered = ordered.orderBy(sql`max(g.severity_id)`, 'desc');
      ordered = ordered
        .orderBy(sql`max(g.last_seen_at)`, 'desc')
        .orderBy('g.organization_id')
        .orderBy('g.source')
        .orderBy('g.kind')
        .orderBy('g.entity');
      const [rows, count] = await Promise.all([
        ordered.limit(page.limit).offset(page.offset).execute(),
        q()
          .selectFrom(grouped.as('c'))
          .select((eb) => eb.fn.countAll<string>().as('n'))
          .executeTakeFirstOrThrow(),
      ]);
      const items: GroupRow[] = rows.map((r) => ({
        organization_id: r.organization_id,
        source: r.source,
        kind: r.kind,
        entity: r.entity,
        count: Number(r.count),
        severity_id: Number(r.severity_id),
        first_seen_at: new Date(r.first_seen_at),
        last_seen_at: new Date(r.last_seen_at),
        event_count: Number(r.event_count),
        title: r.title,
        top_id: r.top_id,
        rule_id: r.rule_id,
        schedule_id: r.schedule_id,
        integration_id: r.integration_id === null ? null : Number(r.integration_id),
        statuses: Object.fromEntries(
          (['new', 'in_progress', 'resolved', 'false_positive', 'suppressed'] as const)
            .map((s) => [s, Number(r[`n_${s}`])] as const)
            .filter(([, n]) => n > 0),
        ),
      }));
      return { items, total: Number(count.n) };
    },

    /** The rows a bulk change takes, locked, in id order (concurrent changes lock alike). */
    async forChange(
      scope: Scope,
      f: TriageFilter,
      ids: string[] | undefined,
      max: number,
    ): Promise<Pick<DetectionRow, 'id' | 'organization_id' | 'status' | 'assignee_id'>[]> {
      let query = filtered(q().selectFrom('detections'), scope, f);
      if (ids) query = query.where('detections.id', 'in', ids);
      return query
        .select(['detections.id', 'detections.organization_id', 'detections.status', 'detections.assignee_id'])
        .orderBy('detections.id')
        .limit(max)
        .forUpdate()
        .execute();
    },

    async updateMany(
      ids: string[],
      patch: { status?: DetectionRow['status']; assignee_id?: number | null },
      now: Date,
    ): Promise<void> {
      for (let i = 0; i < ids.length; i += 1000) {
        await q()
          .updateTable('detections')
          .set({ ...patch, updated_at: now })
          .where('id', 'in', ids.slice(i, i + 1000))
          .execute();
      }
    },

    /** Usernames and display names of the users named (assignees). */
    async userNames(ids: number[]): Promise<Map<number, { username: string; display_name: string | null }>> {
      if (ids.length === 0) return new Map();
      const rows = await q()
        .selectFrom('users')
        .select(['id', 'username', 'display_name'])
        .where('id', 'in', [...new Set(ids)])
        .execute();
      return new Map(rows.map((r) => [r.id, { username: r.username, display_name: r.display_name }]));
    },
  };
}

export type TriageStore = ReturnType<typeof triageQueries>;
