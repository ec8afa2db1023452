// What the topology, flow, health and metrics answers read: integrations and their streams,
// mapping definitions, destinations and their breaker state, and the counters written by
// the pipeline (stream_counters and ledger per UTC day; route_stats and destination_stats
// per hour). Everything is filtered by the caller's scope here, once.
import { sql, type Kysely, type SqlBool } from 'kysely';
import type { Scope } from '../../core/scope.js';
import { executor } from '../../platform/db/ambient.js';
import type { DB } from '../../platform/db/index.js';
import { scoped } from '../../platform/db/scope.js';

const n = (v: unknown): number => Number(v ?? 0);

export interface IntegrationNodeRow {
  id: number;
  organization_id: number;
  name: string;
  platform: string;
  is_active: boolean;
}

export interface StreamRow {
  organization_id: number;
  integration_id: number;
  stream: string;
  events_in: number;
  normalized: number;
  quarantined: number;
  /** Quarantined events normalized by a later reprocess (they count in normalized, never again in events_in). */
  quarantine_released: number;
}

export interface MappingDefinitionRef {
  id: string;
  organization_id: number | null;
  platform: string;
  stream: string;
  name: string;
  live_version_id: string | null;
}

export interface DestinationNodeRow {
  id: string;
  organization_id: number | null;
  name: string;
  enabled: boolean;
  breaker_state: string | null;
}

const TOTAL_OUTCOMES = [
  'filtered',
  'routed',
  'copies',
  'replayed',
  'delivered',
  'dead_lettered',
  'dlq_reprocessed',
  'dropped',
] as const;

export interface LedgerTotals {
  filtered: Record<string, number>;
  routed: number;
  copies: number;
  delivered: number;
  dead_lettered: number;
  dlq_reprocessed: number;
  dropped: number;
}

export interface DestinationCounts {
  copies: number;
  delivered: number;
  dead_lettered: number;
  dropped: number;
}

export function createRoutingStatsStore(db: Kysely<DB>) {
  const q = () => executor(db);
  const orgFilter = (scope: Scope, column: string, organizationId?: number) =>
    organizationId === undefined
      ? scoped(scope, column)
      : sql<SqlBool>`${scoped(scope, column)} and ${sql.ref(column)} = ${organizationId}`;

  return {
    async integrations(scope: Scope, organizationId?: number): Promise<IntegrationNodeRow[]> {
      return q()
        .selectFrom('integrations')
        .select(['id', 'organization_id', 'name', 'platform', 'is_active'])
        .where(orgFilter(scope, 'integrations.organization_id', organizationId))
        .orderBy('organization_id')
        .orderBy('id')
        .execute();
    },

    /** Every (integration, stream) seen, with its counts since `sinceDay` (zero when it was seen only before). */
    async streams(scope: Scope, organizationId: number | undefined, sinceDay: string): Promise<StreamRow[]> {
      const rows = await q()
        .selectFrom('stream_counters')
        .select((eb) => [
          'organization_id',
          'integration_id',
          'stream',
          eb.fn.sum<string>(sql`case when day >= ${sinceDay} then events_in else 0 end`).as('events_in'),
          eb.fn.sum<string>(sql`case when day >= ${sinceDay} then normalized else 0 end`).as('normalized'),
          eb.fn.sum<string>(sql`case when day >= ${sinceDay} then quarantined else 0 end`).as('quarantined'),
          eb.fn
            .sum<string>(sql`case when day >= ${sinceDay} then quarantine_released else 0 end`)
            .as('quarantine_released'),
        ])
        .where(orgFilter(scope, 'stream_counters.organization_id', organizationId))
        .groupBy(['organization_id', 'integration_id', 'stream'])
        .orderBy('integration_id')
        .orderBy('stream')
        .execute();
      return rows.map((r) => ({
        ...r,
        events_in: n(r.events_in),
        normalized: n(r.normalized),
        quarantined: n(r.quarantined),
        quarantine_released: n(r.quarantine_released),
      }));
    },

    /** Mapping definitions of these platforms: built-in ones and those of the organizations in scope. */
    async mappingDefinitions(scope: Scope, platforms: string[]): Promise<MappingDefinitionRef[]> {
      if (platforms.length === 0) return [];
      return q()
        .selectFrom('mapping_definitions as d')
        .select(['d.id', 'd.organization_id', 'd.platform', 'd.stream', 'd.name', 'd.live_version_id'])
        .where('d.platform', 'in', platforms)
        .where(sql<SqlBool>`(d.organization_id is null or ${scoped(scope, 'd.organization_id')})`)
        .execute();
    },

    /** Destinations with their breaker state: the organizations' own (in scope) and those the given ids name, if global or in scope. */
    async destinations(
      scope: Scope,
      organizationId: number | undefined,
      referenced: string[],
    ): Promise<DestinationNodeRow[]> {
      const own = orgFilter(scope, 'd.organization_id', organizationId);
      const named =
        referenced.length === 0
          ? sql<SqlBool>`false`
          : sql<SqlBool>`(d.id in (${sql.join([...new Set(referenced)])}) and (d.organization_id is null or ${scoped(scope, 'd.organization_id')}))`;
      return q()
        .selectFrom('destinations as d')
        .leftJoin('destination_state as s', 's.destination_id', 'd.id')
        .select(['d.id', 'd.organization_id', 'd.name', 'd.enabled', 's.breaker_state'])
        .where(sql<SqlBool>`(${own} or ${named})`)
        .orderBy('d.name')
        .orderBy('d.id')
        .execute();
    },

    /** matched and sampled_out per route since `from` (hourly rows). */
    async routeTotals(
      routeIds: string[],
      from: Date,
    ): Promise<Map<string, { matched: number; sampled_out: number; copies: number }>> {
      const out = new Map<string, { matched: number; sampled_out: number; copies: number }>();
      if (routeIds.length === 0) return out;
      const rows = await q()
        .selectFrom('route_stats')
        .select((eb) => [
          'route_id',
          eb.fn.sum<string>('matched').as('matched'),
          eb.fn.sum<string>('sampled_out').as('sampled_out'),
          eb.fn.sum<string>('copies').as('copies'),
        ])
        .where('route_id', 'in', routeIds)
        .where('hour', '>=', from)
        .groupBy('route_id')
        .execute();
      for (const r of rows)
        out.set(r.route_id, { matched: n(r.matched), sampled_out: n(r.sampled_out), copies: n(r.copies) });
      return out;
    },

    async routeSeries(
      routeId: string,
      from: Date,
    ): Promise<{ hour: Date; matched: number; sampled_out: number; copies: number }[]> {
      const rows = await q()
        .selectFrom('route_stats')
        .select(['hour', 'matched', 'sampled_out', 'copies'])
        .where('route_id', '=', routeId)
        .where('hour', '>=', from)
        .orderBy('hour')
        .execute();
      return rows.map((r) => ({
        hour: new Date(r.hour),
        matched: n(r.matched),
        sampled_out: n(r.sampled_out),
        copies: n(r.copies),
      }));
    },

    async destinationTotals(
      ids: string[],
      from: Date,
    ): Promise<Map<string, { delivered: number; dead_lettered: number; failed_requests: number }>> {
      const out = new Map<string, { delivered: number; dead_lettered: number; failed_requests: number }>();
      if (ids.length === 0) return out;
      const rows = await q()
        .selectFrom('destination_stats')
        .select((eb) => [
          'destination_id',
          eb.fn.sum<string>('delivered').as('delivered'),
          eb.fn.sum<string>('dead_lettered').as('dead_lettered'),
          eb.fn.sum<string>('failed_requests').as('failed_requests'),
        ])
        .where('destination_id', 'in', ids)
        .where('hour', '>=', from)
        .groupBy('destination_id')
        .execute();
      for (const r of rows)
        out.set(r.destination_id, {
          delivered: n(r.delivered),
          dead_lettered: n(r.dead_lettered),
          failed_requests: n(r.failed_requests),
        });
      return out;
    },

    /**
     * The ledger's counts since `sinceDay` for the organizations in scope: filtered by reason,
     * routed, copies (replayed ones included), delivered, dead_lettered (net of DLQ reprocess),
     * dlq_reprocessed and dropped.
     */
    async ledgerTotals(scope: Scope, organizationId: number | undefined, sinceDay: string): Promise<LedgerTotals> {
      const rows = await q()
        .selectFrom('ledger')
        .select((eb) => ['outcome', 'reason', eb.fn.sum<string>('count').as('count')])
        .where(orgFilter(scope, 'ledger.organization_id', organizationId))
        .where('day', '>=', sinceDay)
        .where('outcome', 'in', [...TOTAL_OUTCOMES])
        .groupBy(['outcome', 'reason'])
        .execute();
      const t: LedgerTotals = {
        filtered: {},
        routed: 0,
        copies: 0,
        delivered: 0,
        dead_lettered: 0,
        dlq_reprocessed: 0,
        dropped: 0,
      };
      for (const r of rows) {
        const count = n(r.count);
        if (r.outcome === 'filtered') t.filtered[r.reason] = (t.filtered[r.reason] ?? 0) + count;
        else if (r.outcome === 'replayed') t.copies += count;
        else t[r.outcome as Exclude<keyof LedgerTotals, 'filtered'>] += count;
      }
      t.dead_lettered -= t.dlq_reprocessed;
      return t;
    },

    /**
     * Per destination since `sinceDay`, counting the organizations in scope only: the copies it
     * was handed (replayed ones included) and where they are: delivered, dead_lettered (net of
     * DLQ reprocess), dropped.
     */
    async ledgerByDestination(
      scope: Scope,
      organizationId: number | undefined,
      sinceDay: string,
    ): Promise<Map<string, DestinationCounts>> {
      // Copies may name their destination in reason (docs/delivery.md) or in destination_id.
      const dest = sql<string>`case when outcome = 'copies' and destination_id = '' then reason else destination_id end`;
      const rows = await q()
        .selectFrom('ledger')
        .select((eb) => [dest.as('destination'), 'outcome', eb.fn.sum<string>('count').as('count')])
        .where(orgFilter(scope, 'ledger.organization_id', organizationId))
        .where('day', '>=', sinceDay)
        .where('outcome', 'in', ['copies', 'replayed', 'delivered', 'dead_lettered', 'dlq_reprocessed', 'dropped'])
        .groupBy([dest, 'outcome'])
        .execute();
      const out = new Map<string, DestinationCounts>();
      for (const r of rows) {
        if (!r.destination) continue;
        const c = out.get(r.destination) ?? { copies: 0, delivered: 0, dead_lettered: 0, dropped: 0 };
        const count = n(r.count);
        if (r.outcome === 'copies' || r.outcome === 'replayed') c.copies += count;
        else if (r.outcome === 'delivered') c.delivered += count;
        else if (r.outcome === 'dead_lettered') c.dead_lettered += count;
        else if (r.outcome === 'dlq_reprocessed') c.dead_lettered -= count;
        else c.dropped += count;
        out.set(r.destination, c);
      }
      return out;
    },

    /** The destinations among `ids` (any organization: the caller keeps those the route may use) with their breaker state. */
    async destinationStates(ids: string[]): Promise<DestinationNodeRow[]> {
      if (ids.length === 0) return [];
      return q()
        .selectFrom('destinations as d')
        .leftJoin('destination_state as s', 's.destination_id', 'd.id')
        .select(['d.id', 'd.organization_id', 'd.name', 'd.enabled', 's.breaker_state'])
        .where('d.id', 'in', [...new Set(ids)])
        .execute();
    },

    /** Events of one organization dead-lettered per destination since `from`. */
    async dlqCounts(organizationId: number, ids: string[], from: Date): Promise<Map<string, number>> {
      const out = new Map<string, number>();
      if (ids.length === 0) return out;
      const rows = await q()
        .selectFrom('dlq_events')
        .select((eb) => ['destination_id', eb.fn.countAll<string>().as('n')])
        .where('organization_id', '=', organizationId)
        .where('destination_id', 'in', ids)
        .where('created_at', '>=', from)
        .groupBy('destination_id')
        .execute();
      for (const r of rows) out.set(r.destination_id, n(r.n));
      return out;
    },
  };
}

export type RoutingStatsStore = ReturnType<typeof createRoutingStatsStore>;
