// Queries of the integration operations around collection: filters and auto-approve policy
// columns, connection-test history, and the read-only figures of health, overview and
// sync-status. Callers have already resolved the integration inside the caller's scope,
// so these queries take its id; nothing here widens what a caller can see.
import { sql, type Insertable, type Kysely, type Selectable } from 'kysely';
import type { OffsetPage } from '../../core/paging.js';
import { executor } from '../../platform/db/ambient.js';
import type { DB } from '../../platform/db/index.js';
import type { CollectorStateTable, IntegrationChecksTable } from '../../platform/db/schema.js';

export type CheckRow = Selectable<IntegrationChecksTable>;
export type StateRow = Selectable<CollectorStateTable>;

// Required: every column is written (checked_at has no default, nullable ones are given as null).
export type NewCheck = Required<Insertable<IntegrationChecksTable>>;

export interface Traffic {
  events: number;
  bytes: number;
}

export function createOpsStore(db: Kysely<DB>) {
  const q = () => executor(db);
  const count = (v: unknown) => Number(v ?? 0);

  return {
    async setCollectionFilters(id: number, filters: Record<string, unknown>, now: Date): Promise<void> {
      await q()
        .updateTable('integrations')
        .set({ collection_filters: JSON.stringify(filters), updated_at: now })
        .where('id', '=', id)
        .execute();
    },

    async setAutoApprovePolicy(id: number, policy: Record<string, unknown>, now: Date): Promise<void> {
      await q()
        .updateTable('integrations')
        .set({ auto_approve_policy: JSON.stringify(policy), updated_at: now })
        .where('id', '=', id)
        .execute();
    },

    async insertCheck(check: NewCheck): Promise<void> {
      await q().insertInto('integration_checks').values(check).execute();
    },

    /** Newest first. */
    async checks(integrationId: number, page: OffsetPage): Promise<{ items: CheckRow[]; total: number }> {
      const base = q().selectFrom('integration_checks').where('integration_id', '=', integrationId);
      const [items, n] = await Promise.all([
        base
          .selectAll()
          .orderBy('checked_at', 'desc')
          .orderBy('id', 'desc')
          .limit(page.limit)
          .offset(page.offset)
          .execute(),
        base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
      ]);
      return { items, total: count(n.n) };
    },

    async lastCheck(integrationId: number): Promise<CheckRow | undefined> {
      return q()
        .selectFrom('integration_checks')
        .selectAll()
        .where('integration_id', '=', integrationId)
        .orderBy('checked_at', 'desc')
        .orderBy('id', 'desc')
        .limit(1)
        .executeTakeFirst();
    },

    async states(integrationId: number): Promise<StateRow[]> {
      return q()
        .selectFrom('collector_state')
        .selectAll()
        .where('integration_id', '=', integrationId)
        .orderBy('stream')
        .execute();
    },

    /** Collection tasks not finished yet, per stream and status (queued, running). */
    async activeRuns(integrationId: number): Promise<{ stream: string; status: string; n: number }[]> {
      const rows = await q()
        .selectFrom('collector_runs')
        .select(['stream', 'status', (eb) => eb.fn.countAll<number>().as('n')])
        .where('integration_id', '=', integrationId)
        .where('status', 'in', ['queued', 'running'])
        .groupBy(['stream', 'status'])
        .execute();
      return rows.map((r) => ({ stream: r.stream, status: r.status, n: count(r.n) }));
    },

    /** Events and bytes received on the UTC days from `fromDay` (YYYY-MM-DD) on, per stream. */
    async traffic(integrationId: number, fromDay: string): Promise<Map<string, Traffic>> {
      const rows = await q()
        .selectFrom('stream_counters')
        .select([
          'stream',
          (eb) => eb.fn.sum<number>('events_in').as('events'),
          (eb) => eb.fn.sum<number>('bytes_in').as('bytes'),
        ])
        .where('integration_id', '=', integrationId)
        .where('day', '>=', fromDay)
        .groupBy('stream')
        .execute();
      return new Map(rows.map((r) => [r.stream, { events: count(r.events), bytes: count(r.bytes) }]));
    },

    async lastEventAt(integrationId: number): Promise<Date | null> {
      const row = await q()
        .selectFrom('stream_counters')
        .select((eb) => eb.fn.max('last_event_at').as('at'))
        .where('integration_id', '=', integrationId)
        .executeTakeFirst();
      const at = row?.at as Date | string | null | undefined;
      return at ? new Date(at) : null;
    },

    async ingestionTokenConfigured(integrationId: number): Promise<boolean> {
      return Boolean(
        await q()
          .selectFrom('ingestion_tokens')
          .select('integration_id')
          .where('integration_id', '=', integrationId)
          .executeTakeFirst(),
      );
    },

    async quarantined(integrationId: number): Promise<number> {
      const row = await q()
        .selectFrom('quarantine_events')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('integration_id', '=', integrationId)
        .where('status', '=', 'quarantined')
        .executeTakeFirstOrThrow();
      return count(row.n);
    },

    async newDriftFields(integrationId: number): Promise<number> {
      const row = await q()
        .selectFrom('drift_fields')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('integration_id', '=', integrationId)
        .where('status', '=', 'new')
        .executeTakeFirstOrThrow();
      return count(row.n);
    },

    async children(integrationId: number): Promise<{ total: number; active: number }> {
      const row = await q()
        .selectFrom('integrations')
        .select([
          (eb) => eb.fn.countAll<number>().as('total'),
          sql<number>`count(*) filter (where is_active)`.as('active'),
        ])
        .where('parent_id', '=', integrationId)
        .executeTakeFirstOrThrow();
      return { total: count(row.total), active: count(row.active) };
    },

    async backfillsActive(integrationId: number): Promise<{ queued: number; running: number }> {
      const rows = await q()
        .selectFrom('backfill_jobs')
        .select(['status', (eb) => eb.fn.countAll<number>().as('n')])
        .where('integration_id', '=', integrationId)
        .where('status', 'in', ['queued', 'running'])
        .groupBy('status')
        .execute();
      const of = (s: string) => count(rows.find((r) => r.status === s)?.n);
      return { queued: of('queued'), running: of('running') };
    },
  };
}

export type OpsStore = ReturnType<typeof createOpsStore>;
