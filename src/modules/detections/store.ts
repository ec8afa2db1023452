// Detection rules and their versions, the threshold windows and suppressions the pass settles in
// each batch's transaction, detections and their history (rules' queries: store-rules.ts).
// Reads a caller makes are scoped.
import { sql, type Kysely, type Selectable } from 'kysely';
import type { OffsetPage } from '../../core/paging.js';
import type { Scope } from '../../core/scope.js';
import { executor } from '../../platform/db/ambient.js';
import { organizationLookup } from '../../platform/db/organizations.js';
import type { DB } from '../../platform/db/index.js';
import type {
  DetectionHistoryTable,
  DetectionRulesTable,
  DetectionRuleVersionsTable,
  DetectionsTable,
} from '../../platform/db/schema.js';
import { scoped } from '../../platform/db/scope.js';
import { ruleQueries } from './store-rules.js';

export type RuleRow = Selectable<DetectionRulesTable>;
export type RuleVersionRow = Selectable<DetectionRuleVersionsTable>;
export type DetectionRow = Selectable<DetectionsTable>;
export type HistoryRow = Selectable<DetectionHistoryTable>;
export type RuleWithVersion = RuleRow & { version: number | null; definition: Record<string, unknown> | null };

export interface DetectionFilter {
  organization_id?: number;
  status?: DetectionRow['status'][];
  /** At least this severity_id. */
  severity_min?: number;
  from?: Date;
  to?: Date;
  rule_id?: string;
  source?: DetectionRow['source'];
  integration_id?: number;
  assignee_id?: number;
}

export interface WindowDelta {
  rule_id: string;
  group_key: string;
  window_start: Date;
  organization_id: number;
  count: number;
  event_ids: string[];
}

export interface NewDetection {
  id: string;
  organization_id: number;
  source: DetectionRow['source'];
  uid: string;
  rule_id: string | null;
  rule_version: number | null;
  schedule_id: string | null;
  search_id: string | null;
  integration_id: number | null;
  stream: string | null;
  title: string;
  description: string;
  severity_id: number;
  mitre: { tactics: string[]; techniques: string[] };
  event_ids: string[];
  event_count: number;
  finding: Record<string, unknown>;
  first_seen_at: Date;
  last_seen_at: Date;
}

const toJson = (v: unknown) => JSON.stringify(v);

export function createDetectionStore(db: Kysely<DB>) {
  const q = () => executor(db);

  return {
    ...organizationLookup(db),

    ...ruleQueries(db),

    // The pass's state, in the batch's transaction; rows are taken in key order so concurrent batches lock alike.
    async addWindows(
      deltas: WindowDelta[],
      now: Date,
    ): Promise<
      {
        rule_id: string;
        group_key: string;
        window_start: Date;
        count: number;
        fired_at: Date | null;
        event_ids: string[];
      }[]
    > {
      if (deltas.length === 0) return [];
      const { rows } = await sql<{
        rule_id: string;
        group_key: string;
        window_start: Date;
        count: number;
        fired_at: Date | null;
        event_ids: string[];
      }>`
        with v as (
          select * from jsonb_to_recordset(${toJson(deltas)}::jsonb)
            as v(rule_id text, group_key text, window_start timestamptz, organization_id int, count int, event_ids jsonb)
        )
        insert into detection_windows (rule_id, group_key, window_start, organization_id, count, event_ids, updated_at)
        select rule_id, group_key, window_start, organization_id, count, event_ids, ${now}::timestamptz from v
        order by rule_id, group_key, window_start
        on conflict (rule_id, group_key, window_start) do update set
          count = detection_windows.count + excluded.count,
          event_ids = case when jsonb_array_length(detection_windows.event_ids) >= 50 then detection_windows.event_ids else detection_windows.event_ids || excluded.event_ids end,
          updated_at = excluded.updated_at
        returning rule_id, group_key, window_start, count, fired_at, event_ids`.execute(q());
      return rows;
    },
    async markFired(windows: { rule_id: string; group_key: string; window_start: Date }[], now: Date): Promise<void> {
      if (windows.length === 0) return;
      await sql`
        update detection_windows w set fired_at = ${now}::timestamptz
        from jsonb_to_recordset(${toJson(windows)}::jsonb) as v(rule_id text, group_key text, window_start timestamptz)
        where w.rule_id = v.rule_id and w.group_key = v.group_key and w.window_start = v.window_start`.execute(q());
    },
    /**
     * Claims a suppression for each (rule, group) not suppressed now: inserted, or taken over
     * when the previous one ended. Returns the claimed ones; the others are suppressed.
     */
    async claimSuppressions(
      claims: { rule_id: string; group_key: string; organization_id: number; until: Date }[],
      now: Date,
    ): Promise<Set<string>> {
      if (claims.length === 0) return new Set();
      const { rows } = await sql<{ rule_id: string; group_key: string }>`
        insert into detection_suppressions (rule_id, group_key, organization_id, until)
        select rule_id, group_key, organization_id, until from jsonb_to_recordset(${toJson(claims)}::jsonb)
          as v(rule_id text, group_key text, organization_id int, until timestamptz)
        order by rule_id, group_key
        on conflict (rule_id, group_key) do update set until = excluded.until
          where detection_suppressions.until <= ${now}::timestamptz
        returning rule_id, group_key`.execute(q());
      return new Set(rows.map((r) => `${r.rule_id}\u0000${r.group_key}`));
    },
    /** Threshold windows and suppressions no longer in use. */
    async expireState(windowsBefore: Date, now: Date): Promise<number> {
      const w = await q().deleteFrom('detection_windows').where('window_start', '<', windowsBefore).executeTakeFirst();
      const s = await q().deleteFrom('detection_suppressions').where('until', '<', now).executeTakeFirst();
      return Number(w.numDeletedRows) + Number(s.numDeletedRows);
    },

    // Detections.
    /** Inserts new detections (an existing uid is left as it is); returns the ids inserted. */
    async insertDetections(rows: NewDetection[], now: Date): Promise<string[]> {
      if (rows.length === 0) return [];
      const res = await q()
        .insertInto('detections')
        .values(
          rows.map((r) => ({
            ...r,
            status: 'new' as const,
            mitre: toJson(r.mitre),
            event_ids: toJson(r.event_ids),
            finding: toJson(r.finding),
            created_at: now,
            updated_at: now,
          })),
        )
        .onConflict((oc) => oc.columns(['organization_id', 'source', 'uid']).doNothing())
        .returning('id')
        .execute();
      return res.map((r) => r.id);
    },
    /** A vendor finding: inserted, or the existing detection of its uid updated. Returns its id and whether it is new. */
    async upsertVendor(
      row: NewDetection,
      now: Date,
    ): Promise<{ id: string; inserted: boolean; before: { severity_id: number; title: string } | null }> {
      const existing = await q()
        .selectFrom('detections')
        .select(['id', 'severity_id', 'title'])
        .where('organization_id', '=', row.organization_id)
        .where('source', '=', 'vendor')
        .where('uid', '=', row.uid)
        .forUpdate()
        .executeTakeFirst();
      if (!existing) {
        await q()
          .insertInto('detections')
          .values({
            ...row,
            status: 'new',
            mitre: toJson(row.mitre),
            event_ids: toJson(row.event_ids),
            finding: toJson(row.finding),
            created_at: now,
            updated_at: now,
          })
          .execute();
        return { id: row.id, inserted: true, before: null };
      }
      await q()
        .updateTable('detections')
        .set({
          title: row.title,
          description: row.description,
          severity_id: row.severity_id,
          finding: toJson(row.finding),
          event_count: sql`event_count + 1`,
          event_ids: sql`case when jsonb_array_length(event_ids) >= 50 then event_ids else event_ids || ${toJson(row.event_ids)}::jsonb end`,
          last_seen_at: sql`greatest(last_seen_at, ${row.last_seen_at}::timestamptz)`,
          mitre: toJson(row.mitre),
          updated_at: now,
        } as never)
        .where('id', '=', existing.id)
        .execute();
      return { id: existing.id, inserted: false, before: { severity_id: existing.severity_id, title: existing.title } };
    },
    async addHistory(
      rows: {
        id: string;
        detection_id: string;
        at: Date;
        actor: string;
        kind: HistoryRow['kind'];
        change: Record<string, unknown>;
        comment: string | null;
      }[],
    ): Promise<void> {
      if (rows.length === 0) return;
      await q()
        .insertInto('detection_history')
        .values(rows.map((r) => ({ ...r, change: toJson(r.change) })))
        .execute();
    },
    async list(scope: Scope, f: DetectionFilter, page: OffsetPage): Promise<{ items: DetectionRow[]; total: number }> {
      let base = q().selectFrom('detections').where(scoped(scope, 'detections.organization_id'));
      if (f.organization_id !== undefined) base = base.where('organization_id', '=', f.organization_id);
      if (f.status?.length) base = base.where('status', 'in', f.status);
      if (f.severity_min !== undefined) base = base.where('severity_id', '>=', f.severity_min);
      if (f.from) base = base.where('last_seen_at', '>=', f.from);
      if (f.to) base = base.where('last_seen_at', '<', f.to);
      if (f.rule_id !== undefined) base = base.where('rule_id', '=', f.rule_id);
      if (f.source !== undefined) base = base.where('source', '=', f.source);
      if (f.integration_id !== undefined) base = base.where('integration_id', '=', f.integration_id);
      if (f.assignee_id !== undefined) base = base.where('assignee_id', '=', f.assignee_id);
      const [items, count] = await Promise.all([
        base
          .selectAll()
          .orderBy('last_seen_at', 'desc')
          .orderBy('id', 'desc')
          .limit(page.limit)
          .offset(page.offset)
          .execute(),
        base.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow(),
      ]);
      return { items, total: Number(count.n) };
    },
    async get(scope: Scope, id: string, lock = false): Promise<DetectionRow | undefined> {
      let query = q()
        .selectFrom('detections')
        .selectAll()
        .where('id', '=', id)
        .where(scoped(scope, 'detections.organization_id'));
      if (lock) query = query.forUpdate();
      return query.executeTakeFirst();
    },
    async update(
      id: string,
      patch: { status?: DetectionRow['status']; assignee_id?: number | null; case_id?: string; notified_at?: Date },
      now: Date,
    ): Promise<void> {
      await q()
        .updateTable('detections')
        .set({ ...patch, updated_at: now })
        .where('id', '=', id)
        .execute();
    },
    async history(id: string): Promise<HistoryRow[]> {
      return q()
        .selectFrom('detection_history')
        .selectAll()
        .where('detection_id', '=', id)
        .orderBy('at')
        .orderBy('id')
        .execute();
    },
    async userInOrganization(userId: number, organizationId: number): Promise<boolean> {
      const row = await q()
        .selectFrom('users')
        .select(['id', 'organization_id'])
        .where('id', '=', userId)
        .where('is_active', '=', true)
        .executeTakeFirst();
      return row !== undefined && (row.organization_id === null || row.organization_id === organizationId);
    },
    /** New high and critical detections not notified yet, oldest first, per organization. */
    async unnotified(limit: number): Promise<DetectionRow[]> {
      return q()
        .selectFrom('detections')
        .selectAll()
        .where('notified_at', 'is', null)
        .where('severity_id', '>=', 4)
        .orderBy('organization_id')
        .orderBy('created_at')
        .limit(limit)
        .execute();
    },
    async markNotified(ids: string[], now: Date): Promise<void> {
      if (ids.length === 0) return;
      await q().updateTable('detections').set({ notified_at: now }).where('id', 'in', ids).execute();
    },
    /** When each organization was last sent a detection e-mail. */
    async lastNotified(organizationIds: number[]): Promise<Map<number, Date>> {
      if (organizationIds.length === 0) return new Map();
      const rows = await q()
        .selectFrom('detections')
        .select(['organization_id', (eb) => eb.fn.max('notified_at').as('at')])
        .where('organization_id', 'in', organizationIds)
        .groupBy('organization_id')
        .execute();
      return new Map(rows.filter((r) => r.at).map((r) => [r.organization_id, new Date(r.at as unknown as string)]));
    },
    /** An organization's rows of one of the detection tables (its data deletion). */
    async deleteOrgRows(
      table: 'detections' | 'detection_windows' | 'detection_suppressions' | 'detection_rules',
      organizationId: number,
    ): Promise<number> {
      return Number(
        (await q().deleteFrom(table).where('organization_id', '=', organizationId).executeTakeFirst()).numDeletedRows,
      );
    },
    async openCount(scope: Scope, organizationId?: number): Promise<number> {
      let query = q()
        .selectFrom('detections')
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .where(scoped(scope, 'detections.organization_id'))
        .where('status', 'in', ['new', 'in_progress']);
      if (organizationId !== undefined) query = query.where('organization_id', '=', organizationId);
      return Number((await query.executeTakeFirstOrThrow()).n);
    },
  };
}

export type DetectionStore = ReturnType<typeof createDetectionStore>;
