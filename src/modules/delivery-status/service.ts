// The status side of delivery: dead-letter queue (list, reprocess: dlq.ts), destination health,
// metrics and lineage. Visibility follows the destinations module: a caller sees their
// organizations' destinations and the global ones; any other id is "not found". Inside a
// global destination, events and per-organization counts are limited to the caller's
// organizations unless the caller has platform scope (docs/delivery.md, Dead-letter queue).
//
// Decisions (the spec leaves them open):
// - A global destination's hourly statistics (destination_stats) span every organization,
//   so for a caller without platform scope metrics withhold them (per_organization: true)
//   and answer only the caller's ledger counts; health gives delivered_last_hour null. The
//   destination-wide state (enabled, breaker, last error, status) is shown to everyone who
//   may route to the destination: it is about the destination, not about anyone's events.
// - Lineage off answers an empty list (spec). With lineage on, an unknown event or one of
//   another organization is 404 on GET /lineage/{event_id}.
// - Dead-lettered events are shown unmasked only to callers holding user.manage (those who
//   may reprocess them); destination.read alone gets them masked like the tap.
import type { Clock } from '../../core/clock.js';
import { AppError, errors } from '../../core/errors.js';
import { isUuid } from '../../core/ids.js';
import type { OffsetPage } from '../../core/paging.js';
import type { Scope } from '../../core/scope.js';
import {
  deliverySettings,
  overBacklogBudget,
  type DeliverySettings,
  type DeliverySettingsInput,
} from '../../pipeline/delivery/settings.js';
import { redactSecrets } from '../../pipeline/sinks/types.js';
import { balanceLedger, destinationLedger } from './balance.js';
import { dlqOperations } from './dlq.js';
import { assembleLineage } from './lineage.js';
import type { DeliveryStatusStore, DestinationRow } from './store.js';

const HOUR_MS = 3_600_000;

export interface DeliveryStatusDeps {
  store: DeliveryStatusStore;
  clock: Clock;
  lineageEnabled: boolean;
  /** Runs fn's reads in one snapshot (a read-only REPEATABLE READ transaction). */
  snapshot: <T>(fn: () => Promise<T>) => Promise<T>;
}

export type HealthStatus = 'healthy' | 'degraded' | 'unhealthy' | 'idle';

export interface HealthFacts {
  enabled: boolean;
  breaker_state: string;
  /** The latest outcome (delivery or test) was a failure. */
  failing: boolean;
  recent_delivered: number;
  pending: number;
}

/**
 * The one-word health of a destination from where it stands now: its latest outcome, not
 * the failures of the last hour, so a destination that delivered (or passed a test) after
 * failing is healthy again at once. Half-open alone is not degraded: with nothing to send,
 * a dispatcher's breaker waits half-open for its probe as long as no event comes.
 */
export function healthStatus(f: HealthFacts): HealthStatus {
  if (!f.enabled || f.breaker_state === 'open') return 'unhealthy';
  if (f.failing) return 'degraded';
  if (f.recent_delivered === 0 && f.pending === 0) return 'idle';
  return 'healthy';
}

interface OutcomeTimes {
  last_success_at: Date | null;
  last_error_at: Date | null;
  last_test_at: Date | null;
  last_test_ok: boolean | null;
}

/** The last error is current when nothing succeeded after it: no delivery, no test. */
export function errorIsCurrent(s: OutcomeTimes | undefined): boolean {
  if (!s?.last_error_at) return false;
  const good = [s.last_success_at, s.last_test_ok ? s.last_test_at : null].filter((d): d is Date => d !== null);
  return !good.some((d) => d.getTime() >= s.last_error_at!.getTime());
}

const hourStart = (at: Date) => new Date(Math.floor(at.getTime() / HOUR_MS) * HOUR_MS);
const utcDay = (at: Date) => at.toISOString().slice(0, 10);
const redacted = (text: string | null) => (text === null ? null : redactSecrets(text));

/** The backlog budget's state; a tenant sees a shared destination's state, not its volume. */
function backlogOf(s: DeliverySettings, b: { events: number; bytes: number }, shared: boolean) {
  const full = overBacklogBudget(s, b);
  return {
    events: shared ? null : b.events,
    bytes: shared ? null : b.bytes,
    max_events: s.backlog_max_events,
    max_bytes: s.backlog_max_bytes,
    when_full: s.when_full,
    state: !full ? ('ok' as const) : s.when_full === 'block' ? ('blocking' as const) : ('dropping' as const),
  };
}

export function createDeliveryStatusService(deps: DeliveryStatusDeps) {
  const { store, clock, lineageEnabled, snapshot } = deps;

  async function visible(scope: Scope, id: string): Promise<DestinationRow> {
    const row = await store.destination(scope, id);
    if (!row) throw errors.notFound('Destination');
    return row;
  }

  async function healthItems(scope: Scope, dests: DestinationRow[], now: Date) {
    const ids = dests.map((d) => d.id);
    const [states, dlq, pending, stats, backlog] = await Promise.all([
      store.states(ids),
      store.dlqCounts(scope, ids, new Date(now.getTime() - HOUR_MS)),
      store.pending(scope, ids),
      // The current and the previous hourly bucket: at least the last hour, at most two.
      store.recentStats(ids, new Date(hourStart(now).getTime() - HOUR_MS)),
      store.backlog(ids),
    ]);
    const stateOf = new Map(states.map((s) => [s.destination_id, s]));
    return dests.map((d) => {
      const state = stateOf.get(d.id);
      const dl = dlq.get(d.id) ?? { dead: 0, recent: 0 };
      const p = pending.get(d.id) ?? { events: 0, oldest: null };
      const st = stats.get(d.id) ?? { delivered: 0, failed: 0 };
      const breaker = state?.breaker_state ?? 'closed';
      const shared = d.organization_id === null && !scope.global;
      const failing = errorIsCurrent(state);
      return {
        destination_id: d.id,
        name: d.name,
        type: d.type,
        organization_id: d.organization_id,
        enabled: d.enabled,
        disabled_reason: d.disabled_reason,
        breaker_state: breaker,
        consecutive_failures: state?.consecutive_failures ?? 0,
        dlq_count: dl.dead,
        pending_events: p.events,
        oldest_pending_at: p.oldest,
        lag_seconds: p.oldest ? Math.max(0, Math.floor((now.getTime() - p.oldest.getTime()) / 1000)) : 0,
        last_success_at: state?.last_success_at ?? null,
        current_error: failing ? redacted(state?.last_error ?? null) : null,
        last_error: redacted(state?.last_error ?? null),
        last_error_at: state?.last_error_at ?? null,
        last_test_at: state?.last_test_at ?? null,
        last_test_ok: state?.last_test_ok ?? null,
        delivered_last_hour: shared ? null : st.delivered,
        status: healthStatus({
          enabled: d.enabled,
          breaker_state: breaker,
          failing,
          recent_delivered: st.delivered,
          pending: p.events,
        }),
        backlog: backlogOf(
          deliverySettings(d.delivery as DeliverySettingsInput),
          backlog.get(d.id) ?? { events: 0, bytes: 0 },
          shared,
        ),
      };
    });
  }

  return {
    ...dlqOperations(deps, visible),

    /**
     * One snapshot for every term: read apart at different moments, a batch moving from one
     * term to the next (queued -> normalized -> routed -> delivered, each one transaction)
     * would be counted twice or not at all, and the ledger would not balance mid-run.
     */
    async healthAll(scope: Scope) {
      const now = clock.now();
      return snapshot(async () => {
        const dests = await store.destinations(scope);
        const [items, counters, ledger, pendingNormalization, pendingRouting, pendingOutbox] = await Promise.all([
          healthItems(scope, dests, now),
          store.streamCounters(scope),
          store.ledger(scope),
          store.pendingNormalization(scope),
          store.pendingRouting(scope),
          store.pendingOutbox(scope),
        ]);
        return {
          items,
          ledger: balanceLedger({ counters, ledger, pendingNormalization, pendingRouting, pendingOutbox }),
          generated_at: now,
        };
      });
    },

    async health(scope: Scope, destinationId: string) {
      const now = clock.now();
      return snapshot(async () => {
        const dest = await visible(scope, destinationId);
        const [[item], ledger, pendingOutbox] = await Promise.all([
          healthItems(scope, [dest], now),
          store.ledger(scope, dest.id),
          store.pendingOutbox(scope, dest.id),
        ]);
        return { ...item!, ledger: destinationLedger({ ledger, pendingOutbox }), generated_at: now };
      });
    },

    async metrics(scope: Scope, destinationId: string, hours: number) {
      const dest = await visible(scope, destinationId);
      const from = new Date(hourStart(clock.now()).getTime() - (hours - 1) * HOUR_MS);
      const perOrganization = dest.organization_id === null && !scope.global;
      const [stats, daily] = await Promise.all([
        perOrganization ? Promise.resolve([]) : store.stats(dest.id, from),
        store.ledgerDaily(scope, dest.id, utcDay(from)),
      ]);
      const byHour = new Map(stats.map((s) => [new Date(s.hour).getTime(), s]));
      const series = perOrganization
        ? []
        : Array.from({ length: hours }, (_, i) => {
            const hour = new Date(from.getTime() + i * HOUR_MS);
            const s = byHour.get(hour.getTime());
            const requests = Number(s?.requests ?? 0);
            return {
              hour,
              delivered: Number(s?.delivered ?? 0),
              bytes: Number(s?.bytes ?? 0),
              requests,
              failed_requests: Number(s?.failed_requests ?? 0),
              dead_lettered: Number(s?.dead_lettered ?? 0),
              latency_ms_avg: requests > 0 ? Math.round(Number(s?.latency_ms_sum ?? 0) / requests) : 0,
              latency_ms_max: Number(s?.latency_ms_max ?? 0),
            };
          });
      const latencySum = stats.reduce((n, s) => n + Number(s.latency_ms_sum), 0);
      const totals = perOrganization
        ? null
        : series.reduce(
            (t, p) => ({
              delivered: t.delivered + p.delivered,
              bytes: t.bytes + p.bytes,
              requests: t.requests + p.requests,
              failed_requests: t.failed_requests + p.failed_requests,
              dead_lettered: t.dead_lettered + p.dead_lettered,
              latency_ms_avg: t.latency_ms_avg,
              latency_ms_max: Math.max(t.latency_ms_max, p.latency_ms_max),
            }),
            {
              delivered: 0,
              bytes: 0,
              requests: 0,
              failed_requests: 0,
              dead_lettered: 0,
              latency_ms_avg: 0,
              latency_ms_max: 0,
            },
          );
      if (totals) totals.latency_ms_avg = totals.requests > 0 ? Math.round(latencySum / totals.requests) : 0;
      const days = new Map<
        string,
        { day: string; delivered: number; dead_lettered: number; dlq_reprocessed: number }
      >();
      for (const d of daily) {
        const entry = days.get(d.day) ?? { day: d.day, delivered: 0, dead_lettered: 0, dlq_reprocessed: 0 };
        if (d.outcome === 'delivered' || d.outcome === 'dead_lettered' || d.outcome === 'dlq_reprocessed')
          entry[d.outcome] += d.count;
        days.set(d.day, entry);
      }
      return {
        destination_id: dest.id,
        hours,
        from,
        per_organization: perOrganization,
        series,
        totals,
        ledger: [...days.values()],
      };
    },

    /** Lineage off: an empty list, after the destination check (an unknown destination is still 404). */
    async lineageOfDestination(scope: Scope, destinationId: string, page: OffsetPage) {
      const dest = await visible(scope, destinationId);
      if (!lineageEnabled) return { items: [], total: 0 };
      const { items, total } = await store.lineageOfDestination(scope, dest.id, page);
      return { items: await assembleLineage(store, items), total };
    },

    async lineageOfEvent(scope: Scope, eventId: string) {
      if (!lineageEnabled) return [];
      const event = isUuid(eventId) ? await store.lineageEvent(scope, eventId.toLowerCase()) : undefined;
      if (!event)
        throw new AppError('resource.not_found', {
          detail: 'No lineage for this event (unknown, expired or outside your scope)',
        });
      return assembleLineage(store, [event]);
    },
  };
}

export type DeliveryStatusService = ReturnType<typeof createDeliveryStatusService>;
