// The search family's rows: saved queries, schedules, search runs (the history, with their
// encoded results) and replays. Every read that a caller makes is scoped (platform/db/scope).
import { sql, type Kysely, type Selectable } from 'kysely';
import type { OffsetPage } from '../../core/paging.js';
import type { Scope } from '../../core/scope.js';
import { executor } from '../../platform/db/ambient.js';
import { organizationLookup } from '../../platform/db/organizations.js';
import type { DB } from '../../platform/db/index.js';
import type { ReplaysTable, SavedQueriesTable, SchedulesTable, SearchRunsTable } from '../../platform/db/schema.js';
import { scoped } from '../../platform/db/scope.js';

export type SavedQueryRow = Selectable<SavedQueriesTable>;
export type ScheduleRow = Selectable<SchedulesTable>;
export type RunRow = Selectable<SearchRunsTable>;
export type ReplayRow = Selectable<ReplaysTable>;
/** A run without its result and CSV bodies. */
export type RunSummary = Omit<RunRow, 'result' | 'csv'> & { has_result: boolean; has_csv: boolean };

const RUN_COLUMNS = [
  'id',
  'organization_id',
  'user_id',
  'actor',
  'kind',
  'query_id',
  'schedule_id',
  'slot',
  'query',
  'state',
  'progress',
  'cancel_requested',
  'matched',
  'returned',
  'capped',
  'took_ms',
  'error',
  'notified',
  'created_at',
  'started_at',
  'finished_at',
  'result_expires_at',
  'csv_expires_at',
] as const;

export function isForeignKeyViolation(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === '23503';
}

export function createSearchStore(db: Kysely<DB>) {
  const q = () => executor(db);

  const runSummary = () =>
    q()
      .selectFrom('search_runs')
      .select([...RUN_COLUMNS])
      .select([sql<boolean>`result is not null`.as('has_result'), sql<boolean>`csv is not null`.as('has_csv')]);

  return {
    ...organizationLookup(db),

    // Saved queries.
    async listQueries(
      scope: Scope,
      organizationId: number | undefined,
      page: OffsetPage,
    ): Promise<{ items: SavedQueryRow[]; total: number }> {
      let base = q().selectFrom('saved_queries').where(scoped(scope, 'saved_queries.organization_id'));
      if (organizationId !== undefined) base = base.where('organization_id', '=', organizationId);
      const [items, count] = await Promise.all([
        base.selectAll().orderBy('name').orderBy('id').limit(page.limit).offset(page.offset).execute(),
        base.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow(),
      ]);
      return { items, total: Number(count.n) };
    },
    async getQuery(scope: Scope, id: string, lock = false): Promise<SavedQueryRow | undefined> {
      let query = q()
        .selectFrom('saved_queries')
        .selectAll()
        .where('id', '=', id)
        .where(scoped(scope, 'saved_queries.organization_id'));
      if (lock) query = query.forUpdate();
      return query.executeTakeFirst();
    },
    async insertQuery(
      row: Omit<SavedQueryRow, 'created_at' | 'updated_at' | 'description'> & { description: string },
      now: Date,
    ): Promise<void> {
      await q()
        .insertInto('saved_queries')
        .values({ ...row, query: JSON.stringify(row.query), created_at: now, updated_at: now })
        .execute();
    },
    async updateQuery(
      id: string,
      patch: { name?: string; description?: string; query?: Record<string, unknown>; updated_by: number | null },
      now: Date,
    ): Promise<void> {
      await q()
        .updateTable('saved_queries')
        .set({ ...patch, ...(patch.query ? { query: JSON.stringify(patch.query) } : {}), updated_at: now })
        .where('id', '=', id)
        .execute();
    },
    async deleteQuery(id: string): Promise<void> {
      await q().deleteFrom('saved_queries').where('id', '=', id).execute();
    },
    async schedulesUsing(queryId: string): Promise<string[]> {
      return (
        await q().selectFrom('schedules').select('id').where('query_id', '=', queryId).orderBy('id').execute()
      ).map((r) => r.id);
    },

    // Schedules.
    async listSchedules(
      scope: Scope,
      organizationId: number | undefined,
      page: OffsetPage,
    ): Promise<{ items: ScheduleRow[]; total: number }> {
      let base = q().selectFrom('schedules').where(scoped(scope, 'schedules.organization_id'));
      if (organizationId !== undefined) base = base.where('organization_id', '=', organizationId);
      const [items, count] = await Promise.all([
        base.selectAll().orderBy('name').orderBy('id').limit(page.limit).offset(page.offset).execute(),
        base.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow(),
      ]);
      return { items, total: Number(count.n) };
    },
    async getSchedule(scope: Scope, id: string): Promise<ScheduleRow | undefined> {
      return q()
        .selectFrom('schedules')
        .selectAll()
        .where('id', '=', id)
        .where(scoped(scope, 'schedules.organization_id'))
        .executeTakeFirst();
    },
    async insertSchedule(
      row: Omit<ScheduleRow, 'created_at' | 'timezone' | 'enabled' | 'last_slot'> & {
        timezone: string;
        enabled: boolean;
      },
      now: Date,
    ): Promise<void> {
      await q()
        .insertInto('schedules')
        .values({ ...row, notify: JSON.stringify(row.notify), created_at: now })
        .execute();
    },
    async deleteSchedule(id: string): Promise<void> {
      await q().deleteFrom('schedules').where('id', '=', id).execute();
    },
    /** Due schedules, locked (skipping those another beat holds) for the caller's transaction. */
    async dueSchedules(now: Date, limit: number): Promise<ScheduleRow[]> {
      return q()
        .selectFrom('schedules')
        .selectAll()
        .where('enabled', '=', true)
        .where('next_run_at', '<=', now)
        .orderBy('next_run_at')
        .limit(limit)
        .forUpdate()
        .skipLocked()
        .execute();
    },
    async advanceSchedule(id: string, slot: Date, next: Date): Promise<void> {
      await q().updateTable('schedules').set({ last_slot: slot, next_run_at: next }).where('id', '=', id).execute();
    },

    // Search runs.
    async insertRun(
      row: Pick<
        RunRow,
        'id' | 'organization_id' | 'user_id' | 'actor' | 'kind' | 'query_id' | 'schedule_id' | 'slot' | 'query'
      >,
      now: Date,
    ): Promise<boolean> {
      const res = await q()
        .insertInto('search_runs')
        .values({ ...row, query: JSON.stringify(row.query), state: 'queued', created_at: now })
        .onConflict((oc) => oc.columns(['schedule_id', 'slot']).where('schedule_id', 'is not', null).doNothing())
        .executeTakeFirst();
      return Number(res.numInsertedOrUpdatedRows ?? 0) > 0;
    },
    async getRun(id: string): Promise<RunRow | undefined> {
      return q().selectFrom('search_runs').selectAll().where('id', '=', id).executeTakeFirst();
    },
    async getRunSummary(id: string): Promise<RunSummary | undefined> {
      return runSummary().where('id', '=', id).executeTakeFirst();
    },
    async updateRun(id: string, patch: Partial<Omit<RunRow, 'id' | 'query'>>): Promise<void> {
      await q()
        .updateTable('search_runs')
        .set({ ...patch, ...(patch.notified ? { notified: JSON.stringify(patch.notified) } : {}) } as never)
        .where('id', '=', id)
        .execute();
    },
    /** Asks a queued or running search to stop; a queued one is cancelled at once. The row after. */
    async requestCancel(id: string, now: Date): Promise<void> {
      await q()
        .updateTable('search_runs')
        .set({
          cancel_requested: true,
          state: sql`case when state = 'queued' then 'cancelled' else state end`,
          finished_at: sql`case when state = 'queued' then ${now}::timestamptz else finished_at end`,
        } as never)
        .where('id', '=', id)
        .where('state', 'in', ['queued', 'running'])
        .execute();
    },
    async cancelRequested(id: string): Promise<boolean> {
      const row = await q()
        .selectFrom('search_runs')
        .select('cancel_requested')
        .where('id', '=', id)
        .executeTakeFirst();
      return row?.cancel_requested ?? true;
    },
    /**
     * The history a caller sees: their own runs (`owner`), or, for an administrator asking for
     * the organization's, every run of their organizations.
     */
    async listRuns(
      filter: { scope: Scope; owner?: string; organizationId?: number; scheduleId?: string },
      page: OffsetPage,
    ): Promise<{ items: RunSummary[]; total: number }> {
      const where = (b: ReturnType<typeof runSummary>) => {
        let out = b.where(scoped(filter.scope, 'search_runs.organization_id'));
        if (filter.owner !== undefined) out = out.where('actor', '=', filter.owner);
        if (filter.organizationId !== undefined) out = out.where('organization_id', '=', filter.organizationId);
        if (filter.scheduleId !== undefined) out = out.where('schedule_id', '=', filter.scheduleId);
        return out;
      };
      const [items, count] = await Promise.all([
        where(runSummary())
          .orderBy('created_at', 'desc')
          .orderBy('id', 'desc')
          .limit(page.limit)
          .offset(page.offset)
          .execute(),
        where(runSummary())
          .clearSelect()
          .select((eb) => eb.fn.countAll<string>().as('n'))
          .executeTakeFirstOrThrow(),
      ]);
      return { items, total: Number(count.n) };
    },
    /** Expiry (background, never on reads): CSVs, then results, then history rows; counts of each. */
    async expire(now: Date, historyBefore: Date): Promise<{ csv: number; results: number; runs: number }> {
      const csv = await q()
        .updateTable('search_runs')
        .set({ csv: null })
        .where('csv', 'is not', null)
        .where('csv_expires_at', '<=', now)
        .executeTakeFirst();
      const results = await q()
        .updateTable('search_runs')
        .set({ result: null, csv: null })
        .where('result', 'is not', null)
        .where('result_expires_at', '<=', now)
        .executeTakeFirst();
      const runs = await q()
        .deleteFrom('search_runs')
        .where('created_at', '<', historyBefore)
        .where('state', 'not in', ['queued', 'running'])
        .executeTakeFirst();
      return {
        csv: Number(csv.numUpdatedRows),
        results: Number(results.numUpdatedRows),
        runs: Number(runs.numDeletedRows),
      };
    },

    // Replays.
    async insertReplay(
      row: Pick<ReplayRow, 'id' | 'organization_id' | 'destination_id' | 'query' | 'created_by' | 'actor'>,
      now: Date,
    ): Promise<void> {
      await q()
        .insertInto('replays')
        .values({ ...row, query: JSON.stringify(row.query), state: 'queued', created_at: now })
        .execute();
    },
    async getReplay(scope: Scope | undefined, id: string): Promise<ReplayRow | undefined> {
      let query = q().selectFrom('replays').selectAll().where('id', '=', id);
      if (scope) query = query.where(scoped(scope, 'replays.organization_id'));
      return query.executeTakeFirst();
    },
    async updateReplay(id: string, patch: Partial<Omit<ReplayRow, 'id' | 'query'>>): Promise<void> {
      await q()
        .updateTable('replays')
        .set(patch as never)
        .where('id', '=', id)
        .execute();
    },
    async listReplays(scope: Scope, page: OffsetPage): Promise<{ items: ReplayRow[]; total: number }> {
      const base = q().selectFrom('replays').where(scoped(scope, 'replays.organization_id'));
      const [items, count] = await Promise.all([
        base
          .selectAll()
          .orderBy('created_at', 'desc')
          .orderBy('id', 'desc')
          .limit(page.limit)
          .offset(page.offset)
          .execute(),
        base.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow(),
      ]);
      return { items, total: Number(count.n) };
    },

    /** What a replay needs of its destination. */
    async destination(
      id: string,
    ): Promise<{ organization_id: number | null; enabled: boolean; name: string; type: string } | undefined> {
      return q()
        .selectFrom('destinations')
        .select(['organization_id', 'enabled', 'name', 'type'])
        .where('id', '=', id)
        .executeTakeFirst();
    },

    /** Adds what the event store's retention removed to each (existing) organization's count. */
    async countRemoved(removed: ReadonlyMap<number, number>, at: Date): Promise<void> {
      for (const [id, n] of removed) {
        await q()
          .updateTable('organizations')
          .set({ store_removed: sql`store_removed + ${n}`, store_removed_at: at } as never)
          .where('id', '=', id)
          .execute();
      }
    },

    /** Every organization's retention in days (the event store's retention). */
    async retentions(): Promise<Map<number, number>> {
      const rows = await q().selectFrom('organizations').select(['id', 'retention_days']).execute();
      return new Map(rows.map((r) => [r.id, r.retention_days]));
    },
  };
}

export type SearchStore = ReturnType<typeof createSearchStore>;
