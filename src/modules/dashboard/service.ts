// The dashboard summary: what a first screen needs in one call, for the caller's
// organizations (or one of them). Every part is a grouped statement over the whole scope,
// and the parts run in parallel: the cost grows with rows, not with organizations.
//
// Traffic uses the ledger's own terms (docs/delivery.md, The ledger), in two resolutions:
// hourly buckets (ledger_hours, written in the same statements as the ledger and the stream
// counters) for the last hour and the last 24 hours, whole UTC days (ledger, stream_counters)
// for today and yesterday. An hourly window is made of whole buckets: it starts at the
// start of an hour and ends now, so "the last hour" is the current hour so far plus the
// whole hour before it (60 to 120 minutes; from/to say which). docs/decisions/0034.
import type { Clock } from '../../core/clock.js';
import { errors } from '../../core/errors.js';
import { inScope, type Scope } from '../../core/scope.js';
import type { EditionState } from '../licenses/service.js';
import { errorIsCurrent, healthStatus, type HealthStatus } from '../delivery-status/service.js';
import type { DashboardStore, DayTerms, HourTerms, IntegrationGroup } from './store.js';

const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;

export interface DashboardDeps {
  store: DashboardStore;
  clock: Clock;
  editions: { current(): Promise<EditionState> };
  /** True when a platform name has a pull connector (collection is possible). */
  isPull(platform: string): boolean;
}

export type CollectionState = 'collecting' | 'failing' | 'never_run' | 'push' | 'not_collecting' | 'inactive';

const utcDay = (at: Date) => at.toISOString().slice(0, 10);
const dayStart = (day: string) => new Date(`${day}T00:00:00.000Z`);

/** Whole hourly buckets before the current one that the hourly windows add to it. */
export const HOUR_WINDOWS = { last_hour: 1, last_24_hours: 24 } as const;

function hourWindowOf(from: Date, to: Date, terms: HourTerms | undefined) {
  return {
    resolution: 'hour' as const,
    from,
    to,
    events_in: (terms?.events_in ?? 0) + (terms?.pending_normalization ?? 0),
    delivered: terms?.delivered ?? 0,
    filtered: terms?.filtered ?? 0,
    quarantined: terms?.quarantined ?? 0,
    dead_lettered: terms?.dead_lettered ?? 0,
    dlq_reprocessed: terms?.dlq_reprocessed ?? 0,
  };
}

function hourlyPoints(from: number, currentHour: number, series: Map<number, Record<string, number>>) {
  const points = [];
  for (let hour = from; hour <= currentHour; hour += HOUR_MS) {
    const t = series.get(hour) ?? {};
    points.push({
      hour: new Date(hour),
      events_in: t.events_in ?? 0,
      delivered: t.delivered ?? 0,
      filtered: t.filtered ?? 0,
      quarantined: (t.quarantined ?? 0) - (t.quarantine_released ?? 0),
      dead_lettered: t.dead_lettered ?? 0,
      dlq_reprocessed: t.dlq_reprocessed ?? 0,
    });
  }
  return points;
}

function windowOf(day: string, terms: DayTerms | undefined, to: Date, pendingNormalization: number) {
  return {
    resolution: 'utc_day' as const,
    day,
    from: dayStart(day),
    to,
    events_in: (terms?.events_in ?? 0) + pendingNormalization,
    delivered: terms?.delivered ?? 0,
    filtered: terms?.filtered ?? 0,
    quarantined: terms?.quarantined ?? 0,
    dead_lettered: terms?.dead_lettered ?? 0,
    dlq_reprocessed: terms?.dlq_reprocessed ?? 0,
  };
}

export function collectionState(
  g: Pick<IntegrationGroup, 'is_active' | 'collect' | 'state'>,
  pull: boolean,
): CollectionState {
  if (!g.is_active) return 'inactive';
  if (!pull) return 'push';
  if (!g.collect) return 'not_collecting';
  if (g.state === 'failing') return 'failing';
  if (g.state === 'never_run') return 'never_run';
  return 'collecting';
}

export function createDashboardService(deps: DashboardDeps) {
  const { store, clock } = deps;

  /** The scope the summary covers: the caller's, or one organization of it (404 outside). */
  async function narrowed(scope: Scope, organizationId: number | undefined): Promise<Scope> {
    if (organizationId === undefined) return scope;
    if (!inScope(scope, organizationId) || !(await store.organizationExists(organizationId)))
      throw errors.notFound('Organization');
    return { global: false, organizationIds: [organizationId] };
  }

  return {
    async summary(callerScope: Scope, organizationId?: number) {
      const now = clock.now();
      const scope = await narrowed(callerScope, organizationId);
      const today = utcDay(now);
      const yesterday = utcDay(new Date(now.getTime() - DAY_MS));
      const currentHour = Math.floor(now.getTime() / HOUR_MS) * HOUR_MS;
      const statsFrom = new Date(currentHour - HOUR_MS);
      const hourFrom = {
        last_hour: new Date(currentHour - HOUR_WINDOWS.last_hour * HOUR_MS),
        last_24_hours: new Date(currentHour - HOUR_WINDOWS.last_24_hours * HOUR_MS),
      };
      // Global destinations serve every organization: counted for a platform caller looking at everything.
      const withGlobal = callerScope.global && organizationId === undefined;
      const [organizations, hours, series, days, pending, destinations, integrations, open, edition] =
        await Promise.all([
          store.organizations(scope),
          store.ledgerHours(
            scope,
            Object.entries(hourFrom).map(([name, from]) => ({ name, from })),
          ),
          store.ledgerSeries(scope, hourFrom.last_24_hours),
          store.ledgerDays(scope, [today, yesterday]),
          store.pending(scope),
          store.destinations(scope, withGlobal, statsFrom),
          store.integrations(scope),
          store.openWork(scope),
          deps.editions.current(),
        ]);
      const byDay = new Map(days.map((d) => [d.day, d]));

      const destinationCounts: Record<HealthStatus, number> = { healthy: 0, degraded: 0, unhealthy: 0, idle: 0 };
      for (const d of destinations) {
        const status = healthStatus({
          enabled: d.enabled,
          breaker_state: d.breaker_state ?? 'closed',
          failing: errorIsCurrent(d),
          recent_delivered: d.recent_delivered,
          pending: d.pending,
        });
        destinationCounts[status] += 1;
      }

      const integrationCounts: Record<CollectionState, number> = {
        collecting: 0,
        failing: 0,
        never_run: 0,
        push: 0,
        not_collecting: 0,
        inactive: 0,
      };
      let integrationTotal = 0;
      for (const g of integrations) {
        integrationCounts[collectionState(g, deps.isPull(g.platform))] += g.count;
        integrationTotal += g.count;
      }

      return {
        generated_at: now,
        organization_id: organizationId ?? null,
        organizations,
        traffic: {
          last_hour: hourWindowOf(hourFrom.last_hour, now, hours.get('last_hour')),
          last_24_hours: hourWindowOf(hourFrom.last_24_hours, now, hours.get('last_24_hours')),
          today: windowOf(today, byDay.get(today), now, pending.normalization),
          yesterday: windowOf(yesterday, byDay.get(yesterday), dayStart(today), 0),
          pending: {
            total: pending.normalization + pending.routing + pending.outbox,
            normalization: pending.normalization,
            routing: pending.routing,
            outbox: pending.outbox,
          },
          hourly: hourlyPoints(hourFrom.last_24_hours.getTime(), currentHour, series),
        },
        destinations: { total: destinations.length, by_health: destinationCounts },
        integrations: { total: integrationTotal, by_collection_state: integrationCounts },
        drift: { open: open.drift },
        quarantine: { open: open.quarantine },
        detections: { open: open.detections, available: true },
        license: {
          edition: edition.edition,
          status: edition.status,
          expires_at: edition.expiresAt,
          expired_in_grace: edition.expiredInGrace,
          org_limit: edition.orgLimit,
          features: edition.features,
        },
      };
    },
  };
}

export type DashboardService = ReturnType<typeof createDashboardService>;
