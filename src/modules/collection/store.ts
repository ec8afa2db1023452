// Collector state, runs and usage. State writes of a cycle that advance the cursor are
// guarded by reset_at: a cursor reset made while a cycle runs wins, and the cycle stops.
import { sql, type Kysely, type Selectable } from 'kysely';
import type { Scope } from '../../core/scope.js';
import { executor } from '../../platform/db/ambient.js';
import type { DB } from '../../platform/db/index.js';
import type { CollectorRunsTable, CollectorStateTable } from '../../platform/db/schema.js';
import { scoped } from '../../platform/db/scope.js';

export type StateRow = Selectable<CollectorStateTable>;
export type RunRow = Selectable<CollectorRunsTable>;

export interface CollectingIntegration {
  id: number;
  organization_id: number;
  platform: string;
  config: Record<string, unknown>;
  collection_filters: Record<string, unknown>;
}

export interface StatePatch {
  last_run_at?: Date;
  last_success_at?: Date;
  consecutive_failures?: number;
  last_run_capped?: boolean;
  paused_reason?: string | null;
  last_error?: string | null;
  last_error_at?: Date;
  last_events?: number;
  last_duration_ms?: number;
  next_run_at?: Date | null;
  gap_from?: Date;
  gap_to?: Date;
  gap_detected_at?: Date;
}

export interface Usage {
  requests: number;
  rate_limited: number;
  errors: number;
  pages: number;
  events: number;
  filtered: number;
  bytes: number;
}

export interface StateFilter {
  organizationId?: number;
  integrationId?: number;
  platform?: string;
}

export type ListedState = StateRow & { integration_name: string; platform: string };

const utcDay = (d: Date) => d.toISOString().slice(0, 10);

export function createCollectionStore(db: Kysely<DB>) {
  const q = () => executor(db);

  return {
    /** Active integrations whose config switches collection on (connector and partner checks are the caller's). */
    async collectingIntegrations(): Promise<CollectingIntegration[]> {
      return q()
        .selectFrom('integrations')
        .select(['id', 'organization_id', 'platform', 'config', 'collection_filters'])
        .where('is_active', '=', true)
        .where(sql<boolean>`config->>'collect' = 'true'`)
        .orderBy('id')
        .execute();
    },

    async dueTimes(integrationIds: number[]): Promise<Map<string, Date | null>> {
      if (integrationIds.length === 0) return new Map();
      const rows = await q()
        .selectFrom('collector_state')
        .select(['integration_id', 'stream', 'next_run_at'])
        .where('integration_id', 'in', integrationIds)
        .execute();
      return new Map(rows.map((r) => [`${r.integration_id}/${r.stream}`, r.next_run_at]));
    },

    /**
     * Moves next_run_at from `previous` (what the scheduler read) to `next`, creating the row
     * on first sight. A compare-and-set: of two schedulers that read the same value, one wins.
     */
    async claimDue(
      integrationId: number,
      organizationId: number,
      stream: string,
      previous: Date | null,
      next: Date,
      now: Date,
    ): Promise<boolean> {
      const row = await q()
        .insertInto('collector_state')
        .values({
          integration_id: integrationId,
          stream,
          organization_id: organizationId,
          next_run_at: next,
          updated_at: now,
        })
        .onConflict((oc) =>
          oc
            .columns(['integration_id', 'stream'])
            .doUpdateSet({ next_run_at: next, organization_id: organizationId, updated_at: now })
            .where(sql<boolean>`collector_state.next_run_at is not distinct from ${previous}`),
        )
        .returning('integration_id')
        .executeTakeFirst();
      return row !== undefined;
    },

    async ensureState(integrationId: number, organizationId: number, stream: string, now: Date): Promise<void> {
      await q()
        .insertInto('collector_state')
        .values({ integration_id: integrationId, stream, organization_id: organizationId, updated_at: now })
        .onConflict((oc) => oc.columns(['integration_id', 'stream']).doNothing())
        .execute();
    },

    async getState(integrationId: number, stream: string): Promise<StateRow | undefined> {
      return q()
        .selectFrom('collector_state')
        .selectAll()
        .where('integration_id', '=', integrationId)
        .where('stream', '=', stream)
        .executeTakeFirst();
    },

    /** Writes the resume point after an accepted page; false when a reset happened since resetAt was read. */
    async advance(
      integrationId: number,
      stream: string,
      resetAt: Date | null,
      point: { cursor: string | null; watermark_at?: Date },
      now: Date,
    ): Promise<boolean> {
      const res = await q()
        .updateTable('collector_state')
        .set({
          cursor: point.cursor,
          ...(point.watermark_at ? { watermark_at: point.watermark_at } : {}),
          updated_at: now,
        })
        .where('integration_id', '=', integrationId)
        .where('stream', '=', stream)
        .where(sql<boolean>`reset_at is not distinct from ${resetAt}`)
        .executeTakeFirst();
      return Number(res.numUpdatedRows) > 0;
    },

    async updateState(
      integrationId: number,
      stream: string,
      patch: StatePatch,
      now: Date,
      eventsAdded = 0,
    ): Promise<void> {
      await q()
        .updateTable('collector_state')
        .set({ ...patch, events_total: sql<number>`events_total + ${eventsAdded}`, updated_at: now })
        .where('integration_id', '=', integrationId)
        .where('stream', '=', stream)
        .execute();
    },

    async countSkipped(integrationId: number, stream: string, now: Date): Promise<void> {
      await q()
        .updateTable('collector_state')
        .set({ cycles_skipped_locked: sql<number>`cycles_skipped_locked + 1`, updated_at: now })
        .where('integration_id', '=', integrationId)
        .where('stream', '=', stream)
        .execute();
    },

    /** Clears the resume point: the next cycle starts at the stream's default window. */
    async resetCursor(integrationId: number, organizationId: number, stream: string, now: Date): Promise<StateRow> {
      const cleared = {
        cursor: null,
        watermark_at: null,
        last_run_capped: false,
        gap_from: null,
        gap_to: null,
        gap_detected_at: null,
        reset_at: now,
        next_run_at: now,
        updated_at: now,
      };
      return q()
        .insertInto('collector_state')
        .values({ integration_id: integrationId, stream, organization_id: organizationId, ...cleared })
        .onConflict((oc) => oc.columns(['integration_id', 'stream']).doUpdateSet(cleared))
        .returningAll()
        .executeTakeFirstOrThrow();
    },

    async insertRun(run: {
      id: string;
      organization_id: number;
      integration_id: number;
      stream: string;
      reason: 'schedule' | 'trigger';
      requested_by: number | null;
      created_at: Date;
    }): Promise<void> {
      await q()
        .insertInto('collector_runs')
        .values({ ...run, status: 'queued' })
        .onConflict((oc) => oc.column('id').doNothing())
        .execute();
    },

    async getRun(id: string): Promise<RunRow | undefined> {
      return q().selectFrom('collector_runs').selectAll().where('id', '=', id).executeTakeFirst();
    },

    async startRun(id: string, now: Date): Promise<void> {
      await q()
        .updateTable('collector_runs')
        .set({ status: 'running', started_at: now })
        .where('id', '=', id)
        .execute();
    },

    async finishRun(
      id: string,
      outcome: { status: RunRow['status']; pages: number; events: number; capped: boolean; error: string | null },
      now: Date,
    ): Promise<void> {
      await q()
        .updateTable('collector_runs')
        .set({ ...outcome, finished_at: now })
        .where('id', '=', id)
        .execute();
    },

    async addUsage(
      key: { organization_id: number; integration_id: number; stream: string },
      usage: Usage,
      now: Date,
    ): Promise<void> {
      const add = (c: keyof Usage) => sql<number>`collector_usage.${sql.ref(c)} + ${usage[c]}`;
      await q()
        .insertInto('collector_usage')
        .values({ ...key, day: utcDay(now), ...usage })
        .onConflict((oc) =>
          oc.columns(['integration_id', 'stream', 'day']).doUpdateSet({
            requests: add('requests'),
            rate_limited: add('rate_limited'),
            errors: add('errors'),
            pages: add('pages'),
            events: add('events'),
            filtered: add('filtered'),
            bytes: add('bytes'),
          }),
        )
        .execute();
    },

    async pruneKeys(before: Date, limit: number): Promise<number> {
      const res = await sql`
        delete from collected_keys where ctid in (select ctid from collected_keys where seen_at < ${before} limit ${limit})`.execute(
        q(),
      );
      return Number(res.numAffectedRows ?? 0);
    },

    async pruneRuns(before: Date, limit: number): Promise<number> {
      const res = await sql`
        delete from collector_runs where id in (select id from collector_runs where created_at < ${before} and status not in ('queued', 'running') limit ${limit})`.execute(
        q(),
      );
      return Number(res.numAffectedRows ?? 0);
    },

    /** Every state row with its integration's platform: the gauges' source. */
    async gaugeRows(): Promise<
      {
        integration_id: number;
        stream: string;
        platform: string;
        watermark_at: Date | null;
        last_success_at: Date | null;
      }[]
    > {
      return q()
        .selectFrom('collector_state as s')
        .innerJoin('integrations as i', 'i.id', 's.integration_id')
        .select(['s.integration_id', 's.stream', 'i.platform', 's.watermark_at', 's.last_success_at'])
        .where('i.is_active', '=', true)
        .execute();
    },

    async listStates(scope: Scope, f: StateFilter): Promise<ListedState[]> {
      let query = q()
        .selectFrom('collector_state as s')
        .innerJoin('integrations as i', 'i.id', 's.integration_id')
        .selectAll('s')
        .select(['i.name as integration_name', 'i.platform'])
        .where(scoped(scope, 's.organization_id'));
      if (f.organizationId !== undefined) query = query.where('s.organization_id', '=', f.organizationId);
      if (f.integrationId !== undefined) query = query.where('s.integration_id', '=', f.integrationId);
      if (f.platform !== undefined) query = query.where('i.platform', '=', f.platform);
      return query.orderBy('s.integration_id').orderBy('s.stream').execute();
    },

    /** Events and bytes in per integration and UTC day (every stream), from fromDay on. */
    async dailyIntake(scope: Scope, fromDay: string, f: StateFilter) {
      let query = q()
        .selectFrom('stream_counters as c')
        .innerJoin('integrations as i', 'i.id', 'c.integration_id')
        .select(['c.integration_id', 'c.organization_id', 'i.name', 'i.platform', 'c.day'])
        .select((eb) => [eb.fn.sum<number>('c.events_in').as('events'), eb.fn.sum<number>('c.bytes_in').as('bytes')])
        .where(scoped(scope, 'c.organization_id'))
        .where('c.day', '>=', fromDay);
      if (f.organizationId !== undefined) query = query.where('c.organization_id', '=', f.organizationId);
      if (f.integrationId !== undefined) query = query.where('c.integration_id', '=', f.integrationId);
      if (f.platform !== undefined) query = query.where('i.platform', '=', f.platform);
      return query.groupBy(['c.integration_id', 'c.organization_id', 'i.name', 'i.platform', 'c.day']).execute();
    },

    /** Vendor API usage per integration and UTC day (every stream), from fromDay on. */
    async dailyUsage(scope: Scope, fromDay: string, f: StateFilter) {
      let query = q()
        .selectFrom('collector_usage as u')
        .innerJoin('integrations as i', 'i.id', 'u.integration_id')
        .select(['u.integration_id', 'u.organization_id', 'i.name', 'i.platform', 'u.day'])
        .select((eb) => [
          eb.fn.sum<number>('u.requests').as('requests'),
          eb.fn.sum<number>('u.rate_limited').as('rate_limited'),
          eb.fn.sum<number>('u.errors').as('errors'),
          eb.fn.sum<number>('u.pages').as('pages'),
          eb.fn.sum<number>('u.filtered').as('filtered'),
        ])
        .where(scoped(scope, 'u.organization_id'))
        .where('u.day', '>=', fromDay);
      if (f.organizationId !== undefined) query = query.where('u.organization_id', '=', f.organizationId);
      if (f.integrationId !== undefined) query = query.where('u.integration_id', '=', f.integrationId);
      if (f.platform !== undefined) query = query.where('i.platform', '=', f.platform);
      return query.groupBy(['u.integration_id', 'u.organization_id', 'i.name', 'i.platform', 'u.day']).execute();
    },
  };
}

export type CollectionStore = ReturnType<typeof createCollectionStore>;
