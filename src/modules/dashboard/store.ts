// What the dashboard reads: a handful of grouped statements over every organization of the
// scope at once (never one per organization), run in parallel by the service. The scope
// is narrowed to one organization by the caller's filter before it gets here.
import { sql, type Kysely } from 'kysely';
import type { Scope } from '../../core/scope.js';
import { executor } from '../../platform/db/ambient.js';
import type { DB } from '../../platform/db/index.js';
import { scoped } from '../../platform/db/scope.js';

const n = (v: unknown): number => Number(v ?? 0);

export interface DayTerms {
  day: string;
  events_in: number;
  quarantined: number;
  filtered: number;
  delivered: number;
  dead_lettered: number;
  dlq_reprocessed: number;
}

/** The ledger's terms summed over the hourly buckets of one window (ledger_hours). */
export interface HourTerms {
  events_in: number;
  quarantined: number;
  filtered: number;
  delivered: number;
  dead_lettered: number;
  dlq_reprocessed: number;
  /** Accepted batches not normalized yet, accepted at or after the window's start. */
  pending_normalization: number;
}

export interface HourWindowSpec {
  name: string;
  /** The start of the window's first hourly bucket. */
  from: Date;
}

export interface DestinationFacts {
  id: string;
  organization_id: number | null;
  enabled: boolean;
  breaker_state: string | null;
  last_success_at: Date | null;
  last_error_at: Date | null;
  last_test_at: Date | null;
  last_test_ok: boolean | null;
  recent_delivered: number;
  pending: number;
}

export interface IntegrationGroup {
  platform: string;
  is_active: boolean;
  collect: boolean;
  state: 'failing' | 'never_run' | 'ok';
  count: number;
}

export function createDashboardStore(db: Kysely<DB>) {
  const q = () => executor(db);

  return {
    async organizationExists(id: number): Promise<boolean> {
      return (await q().selectFrom('organizations').select('id').where('id', '=', id).executeTakeFirst()) !== undefined;
    },

    async organizations(scope: Scope): Promise<number> {
      const row = await q()
        .selectFrom('organizations')
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .where(scoped(scope, 'organizations.id'))
        .executeTakeFirstOrThrow();
      return n(row.n);
    },

    /** The ledger's terms per UTC day for these days (stream_counters and ledger, as the balance reads them). */
    async ledgerDays(scope: Scope, days: string[]): Promise<DayTerms[]> {
      const { rows } = await sql<Record<string, string>>`
        with sc as (
          select day, sum(events_in)::bigint as events_in, sum(quarantined - quarantine_released)::bigint as quarantined
          from stream_counters where ${scoped(scope, 'stream_counters.organization_id')} and day in (${sql.join(days)})
          group by day
        ), lg as (
          select day,
            coalesce(sum(count) filter (where outcome = 'filtered'), 0)::bigint as filtered,
            coalesce(sum(count) filter (where outcome = 'delivered'), 0)::bigint as delivered,
            coalesce(sum(count) filter (where outcome = 'dead_lettered'), 0)::bigint as dead_lettered,
            coalesce(sum(count) filter (where outcome = 'dlq_reprocessed'), 0)::bigint as dlq_reprocessed
          from ledger
          where ${scoped(scope, 'ledger.organization_id')} and day in (${sql.join(days)})
            and outcome in ('filtered', 'delivered', 'dead_lettered', 'dlq_reprocessed')
          group by day
        )
        select day, sc.events_in, sc.quarantined, lg.filtered, lg.delivered, lg.dead_lettered, lg.dlq_reprocessed
        from sc full join lg using (day)`.execute(q());
      return rows.map((r) => ({
        day: String(r.day),
        events_in: n(r.events_in),
        quarantined: n(r.quarantined),
        filtered: n(r.filtered),
        delivered: n(r.delivered),
        dead_lettered: n(r.dead_lettered),
        dlq_reprocessed: n(r.dlq_reprocessed),
      }));
    },

    /**
     * The ledger's terms per window from the hourly ledger: every bucket whose hour is at or
     * after the window's start, plus the accepted events not yet normalized that were
     * accepted in the window. One pass over the earliest window's rows for all the windows
     * (they nest): a filtered sum per window and term, no join.
     */
    async ledgerHours(scope: Scope, windows: HourWindowSpec[]): Promise<Map<string, HourTerms>> {
      const out = new Map<string, HourTerms>();
      if (windows.length === 0) return out;
      const earliest = new Date(Math.min(...windows.map((w) => w.from.getTime())));
      const sums = (column: string, time: string) =>
        sql.join(
          windows.map(
            (w, i) =>
              sql`coalesce(sum(${sql.ref(column)}) filter (where ${sql.ref(time)} >= ${w.from}::timestamptz), 0)::bigint as ${sql.ref(`w${i}`)}`,
          ),
        );
      const [hours, accepted] = await Promise.all([
        sql<Record<string, string>>`
          select term, ${sums('count', 'hour')} from ledger_hours
          where ${scoped(scope, 'ledger_hours.organization_id')} and hour >= ${earliest}::timestamptz
          group by term`.execute(q()),
        sql<Record<string, string>>`
          select ${sums('event_count', 'accepted_at')} from accepted_batches
          where event_count > 0 and ${scoped(scope, 'accepted_batches.organization_id')} and accepted_at >= ${earliest}::timestamptz`.execute(
          q(),
        ),
      ]);
      windows.forEach((w, i) => {
        const terms: HourTerms = {
          events_in: 0,
          quarantined: 0,
          filtered: 0,
          delivered: 0,
          dead_lettered: 0,
          dlq_reprocessed: 0,
          pending_normalization: n(accepted.rows[0]?.[`w${i}`]),
        };
        for (const r of hours.rows) {
          const v = n(r[`w${i}`]);
          if (r.term === 'quarantine_released') terms.quarantined -= v;
          else if (r.term !== undefined && r.term in terms) terms[r.term as keyof HourTerms] += v;
        }
        out.set(w.name, terms);
      });
      return out;
    },

    /** The ledger's terms per hourly bucket from `from` on (ledger_hours), oldest first; hours without rows are absent. */
    async ledgerSeries(scope: Scope, from: Date): Promise<Map<number, Record<string, number>>> {
      const { rows } = await sql<{ hour: Date | string; term: string; count: string }>`
        select hour, term, sum(count)::bigint as count from ledger_hours
        where ${scoped(scope, 'ledger_hours.organization_id')} and hour >= ${from}::timestamptz
        group by hour, term`.execute(q());
      const out = new Map<number, Record<string, number>>();
      for (const r of rows) {
        const hour = new Date(r.hour).getTime();
        const terms = out.get(hour) ?? {};
        terms[r.term] = (terms[r.term] ?? 0) + n(r.count);
        out.set(hour, terms);
      }
      return out;
    },

    /** The measured pending terms now: accepted and not normalized, normalized and not routed, in the outbox. */
    async pending(scope: Scope): Promise<{ normalization: number; routing: number; outbox: number }> {
      const { rows } = await sql<Record<string, string>>`
        select
          (select coalesce(sum(event_count), 0) from accepted_batches where event_count > 0 and ${scoped(scope, 'accepted_batches.organization_id')})::bigint as normalization,
          (select coalesce(sum(event_count), 0) from normalized_batches where route_state = 'pending' and ${scoped(scope, 'normalized_batches.organization_id')})::bigint as routing,
          (select coalesce(sum(event_count), 0) from delivery_batches where kind in ('primary', 'reprocess', 'replay') and ${scoped(scope, 'delivery_batches.organization_id')})::bigint as outbox`.execute(
        q(),
      );
      const r = rows[0] ?? {};
      return { normalization: n(r.normalization), routing: n(r.routing), outbox: n(r.outbox) };
    },

    /**
     * The facts the destination health word is made of, per destination: the organizations'
     * own, and the global ones when `withGlobal`. Recent deliveries are the current and the
     * previous hourly bucket, as the health answer reads them.
     */
    async destinations(scope: Scope, withGlobal: boolean, statsFrom: Date): Promise<DestinationFacts[]> {
      const own = scoped(scope, 'd.organization_id');
      const { rows } = await sql<Record<string, unknown>>`
        select d.id, d.organization_id, d.enabled, s.breaker_state, s.last_success_at, s.last_error_at, s.last_test_at, s.last_test_ok,
          coalesce(st.delivered, 0)::bigint as recent_delivered, coalesce(p.events, 0)::bigint as pending
        from destinations d
        left join destination_state s on s.destination_id = d.id
        -- Per destination, by its keys (destination_stats pk, delivery_batches_due): the cost follows the scope's destinations.
        left join lateral (
          select sum(delivered) as delivered from destination_stats where destination_id = d.id and hour >= ${statsFrom}
        ) st on true
        left join lateral (
          select sum(event_count) as events from delivery_batches
          where destination_id = d.id and kind in ('primary', 'reprocess', 'replay') and ${scoped(scope, 'delivery_batches.organization_id')}
        ) p on true
        where ${withGlobal ? sql`(d.organization_id is null or ${own})` : sql`(d.organization_id is not null and ${own})`}`.execute(
        q(),
      );
      const date = (v: unknown) => (v === null || v === undefined ? null : new Date(v as string));
      return rows.map((r) => ({
        id: String(r.id),
        organization_id: r.organization_id === null ? null : Number(r.organization_id),
        enabled: Boolean(r.enabled),
        breaker_state: (r.breaker_state as string | null) ?? null,
        last_success_at: date(r.last_success_at),
        last_error_at: date(r.last_error_at),
        last_test_at: date(r.last_test_at),
        last_test_ok: (r.last_test_ok as boolean | null) ?? null,
        recent_delivered: n(r.recent_delivered),
        pending: n(r.pending),
      }));
    },

    /** Integrations grouped by platform, activity, collect flag and the worst collector state of their streams. */
    async integrations(scope: Scope): Promise<IntegrationGroup[]> {
      const { rows } = await sql<Record<string, unknown>>`
        select i.platform, i.is_active,
          (coalesce(i.config->>'collect', '') = 'true' and coalesce(i.config->>'partner', '') <> 'true') as collect,
          case when coalesce(s.failing, 0) > 0 then 'failing' when coalesce(s.runs, 0) = 0 then 'never_run' else 'ok' end as state,
          count(*)::bigint as count
        from integrations i
        left join (
          select integration_id, max(consecutive_failures) as failing, count(last_success_at) as runs
          from collector_state where ${scoped(scope, 'collector_state.organization_id')} group by integration_id
        ) s on s.integration_id = i.id
        where ${scoped(scope, 'i.organization_id')}
        group by 1, 2, 3, 4`.execute(q());
      return rows.map((r) => ({
        platform: String(r.platform),
        is_active: Boolean(r.is_active),
        collect: Boolean(r.collect),
        state: r.state as IntegrationGroup['state'],
        count: n(r.count),
      }));
    },

    /** New drift fields and events still quarantined. */
    async openWork(scope: Scope): Promise<{ drift: number; quarantine: number; detections: number }> {
      const { rows } = await sql<Record<string, string>>`
        select
          (select count(*) from drift_fields where status = 'new' and ${scoped(scope, 'drift_fields.organization_id')})::bigint as drift,
          (select count(*) from quarantine_events where status = 'quarantined' and ${scoped(scope, 'quarantine_events.organization_id')})::bigint as quarantine,
          (select count(*) from detections where status in ('new', 'in_progress') and ${scoped(scope, 'detections.organization_id')})::bigint as detections`.execute(
        q(),
      );
      const r = rows[0] ?? {};
      return { drift: n(r.drift), quarantine: n(r.quarantine), detections: n(r.detections) };
    },
  };
}

export type DashboardStore = ReturnType<typeof createDashboardStore>;
