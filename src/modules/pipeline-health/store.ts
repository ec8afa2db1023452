// What pipeline health reads, all of it stored: integrations, collector state, quarantine,
// new drift fields and daily stream counters. One grouped query per table for every
// integration of the scope (or only one), never a query per integration.
import { sql, type Kysely, type Selectable } from 'kysely';
import type { Scope } from '../../core/scope.js';
import { executor } from '../../platform/db/ambient.js';
import type { DB } from '../../platform/db/index.js';
import type { CollectorStateTable } from '../../platform/db/schema.js';
import { scoped } from '../../platform/db/scope.js';

export interface HealthIntegrationRow {
  id: number;
  organization_id: number;
  name: string;
  platform: string;
  is_active: boolean;
  config: Record<string, unknown>;
  collection_filters: Record<string, unknown>;
}

export type StateRow = Pick<
  Selectable<CollectorStateTable>,
  | 'integration_id'
  | 'stream'
  | 'watermark_at'
  | 'last_run_at'
  | 'last_success_at'
  | 'consecutive_failures'
  | 'last_run_capped'
  | 'last_error'
  | 'last_error_at'
  | 'gap_from'
  | 'gap_to'
  | 'gap_detected_at'
>;

export interface QuarantineCount {
  integration_id: number;
  error_kind: string;
  open: number;
  recent: number;
}

export interface NewFieldRow {
  integration_id: number;
  stream: string;
  path: string;
  total: number;
}

export interface CounterRow {
  integration_id: number;
  stream: string;
  events_in: number;
  last_event_at: Date | null;
}

/** How many new-field paths each integration's answer names. */
export const NEW_FIELD_PATHS = 5;

export function createPipelineHealthStore(db: Kysely<DB>) {
  const q = () => executor(db);

  return {
    /** Integrations of the scope (only: just that one), by id. The other reads take the same filter. */
    async integrations(scope: Scope, integrationId?: number): Promise<HealthIntegrationRow[]> {
      let query = q()
        .selectFrom('integrations')
        .select(['id', 'organization_id', 'name', 'platform', 'is_active', 'config', 'collection_filters'])
        .where(scoped(scope, 'integrations.organization_id'));
      if (integrationId !== undefined) query = query.where('id', '=', integrationId);
      return (await query.orderBy('id').execute()) as HealthIntegrationRow[];
    },

    async states(scope: Scope, only?: number): Promise<StateRow[]> {
      let query = q().selectFrom('collector_state').where(scoped(scope, 'collector_state.organization_id'));
      if (only !== undefined) query = query.where('integration_id', '=', only);
      return query
        .select([
          'integration_id',
          'stream',
          'watermark_at',
          'last_run_at',
          'last_success_at',
          'consecutive_failures',
          'last_run_capped',
          'last_error',
          'last_error_at',
          'gap_from',
          'gap_to',
          'gap_detected_at',
        ])
        .orderBy('integration_id')
        .orderBy('stream')
        .execute();
    },

    /** Per integration and error kind: events still quarantined, and events quarantined since `since`. */
    async quarantine(scope: Scope, only: number | undefined, since: Date): Promise<QuarantineCount[]> {
      let query = q()
        .selectFrom('quarantine_events')
        .select((eb) => [
          'integration_id',
          'error_kind',
          eb.fn.sum<number>(sql`case when status = 'quarantined' then 1 else 0 end`).as('open'),
          eb.fn.sum<number>(sql`case when created_at >= ${since} then 1 else 0 end`).as('recent'),
        ])
        // The organization filter uses the (organization_id, status, created_at) index.
        .where(scoped(scope, 'quarantine_events.organization_id'))
        .where((eb) => eb.or([eb('status', '=', 'quarantined'), eb('created_at', '>=', since)]));
      if (only !== undefined) query = query.where('integration_id', '=', only);
      const rows = await query.groupBy(['integration_id', 'error_kind']).execute();
      return rows.map((r) => ({ ...r, open: Number(r.open), recent: Number(r.recent) }));
    },

    /** The most recently seen new fields of each integration (NEW_FIELD_PATHS at most), with each integration's total. */
    async newFields(scope: Scope, only?: number): Promise<NewFieldRow[]> {
      const one = only === undefined ? sql`true` : sql`integration_id = ${only}`;
      const rows = await sql<NewFieldRow>`
        select integration_id, stream, path, total from (
          select integration_id, stream, path,
                 count(*) over (partition by integration_id) as total,
                 row_number() over (partition by integration_id order by last_seen_at desc, path) as rank
          from drift_fields
          where status = 'new' and ${scoped(scope, 'drift_fields.organization_id')}
            and ${one}) ranked
        where rank <= ${NEW_FIELD_PATHS}
        order by integration_id, rank`.execute(q());
      return rows.rows.map((r) => ({ ...r, total: Number(r.total) }));
    },

    /** events_in per integration and stream on the UTC days from sinceDay (YYYY-MM-DD) on. */
    async counters(scope: Scope, only: number | undefined, sinceDay: string): Promise<CounterRow[]> {
      let query = q()
        .selectFrom('stream_counters')
        .select((eb) => [
          'integration_id',
          'stream',
          eb.fn.sum<number>('events_in').as('events_in'),
          eb.fn.max('last_event_at').as('last_event_at'),
        ])
        .where(scoped(scope, 'stream_counters.organization_id'))
        .where('day', '>=', sinceDay);
      if (only !== undefined) query = query.where('integration_id', '=', only);
      const rows = await query.groupBy(['integration_id', 'stream']).execute();
      return rows.map((r) => ({
        ...r,
        events_in: Number(r.events_in),
        last_event_at: (r.last_event_at as Date | null) ?? null,
      }));
    },
  };
}

export type PipelineHealthStore = ReturnType<typeof createPipelineHealthStore>;
