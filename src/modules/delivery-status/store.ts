// Reads of the delivery tables (migration 0006) for the status APIs, and the only writes
// they make: DLQ reprocess (outbox rows, marks: store-dlq.ts) and tap sessions. Every query
// about events is filtered by the caller's scope on the event's organization, so a global
// destination's rows of other organizations stay invisible to an organization's administrator.
import type { BodyLog } from '../../platform/bodylog/log.js';
import { sql, type Kysely, type Selectable } from 'kysely';
import type { OffsetPage } from '../../core/paging.js';
import type { Scope } from '../../core/scope.js';
import { executor } from '../../platform/db/ambient.js';
import type { DB } from '../../platform/db/index.js';
import type {
  DestinationStateTable,
  DestinationStatsTable,
  DlqEventsTable,
  LineageAttemptsTable,
  LineageCopiesTable,
  LineageEventsTable,
} from '../../platform/db/schema.js';
import { scoped } from '../../platform/db/scope.js';
import { dlqQueries } from './store-dlq.js';

export interface DestinationRow {
  id: string;
  organization_id: number | null;
  name: string;
  type: string;
  enabled: boolean;
  disabled_reason: string | null;
  delivery: Record<string, unknown>;
}

export type DlqRow = Selectable<DlqEventsTable>;
export type StateRow = Selectable<DestinationStateTable>;
export type StatsRow = Selectable<DestinationStatsTable>;
export type LineageEventRow = Selectable<LineageEventsTable>;
export type LineageCopyRow = Selectable<LineageCopiesTable>;
export type LineageAttemptRow = Selectable<LineageAttemptsTable>;

export interface DlqFilter {
  status?: 'dead' | 'reprocessed';
  errorKind?: string;
  organizationId?: number;
  integrationId?: number;
  stream?: string;
  since?: Date;
  until?: Date;
}

/** A group key and its counts, as the grouped queries answer them. */
export interface StreamKey {
  organization_id: number;
  integration_id: number;
  stream: string;
}

export interface NewDeliveryBatch extends StreamKey {
  id: string;
  destination_id: string;
  source_batch_id: string;
  event_count: number;
  bytes: number;
  event_ids: string;
  events: string;
  next_attempt_at: Date;
}

const n = (v: unknown): number => Number(v ?? 0);

/** bodies: the embedded body log, where reprocessed rows' compressed events go. */
/** `outboxWritten` is told after a commit that added outbox rows (this process's dispatcher claims them at once). */
export function createDeliveryStatusStore(db: Kysely<DB>, bodies?: BodyLog, outboxWritten?: () => void) {
  const q = () => executor(db);
  /** Destinations of the caller's organizations and the global ones. */
  const visible = (scope: Scope) =>
    q()
      .selectFrom('destinations')
      .select(['id', 'organization_id', 'name', 'type', 'enabled', 'disabled_reason', 'delivery'])
      .where(sql<boolean>`(destinations.organization_id is null or ${scoped(scope, 'destinations.organization_id')})`);
  const idsIn = (column: string, ids: readonly string[]) => sql<boolean>`${sql.ref(column)} in (${sql.join(ids)})`;

  return {
    async destination(scope: Scope, id: string): Promise<DestinationRow | undefined> {
      return (await visible(scope).where('id', '=', id).executeTakeFirst()) as DestinationRow | undefined;
    },

    async destinations(scope: Scope): Promise<DestinationRow[]> {
      return (await visible(scope).orderBy('name').orderBy('id').execute()) as DestinationRow[];
    },

    ...dlqQueries(db, bodies, outboxWritten),

    // ------------------------------------------------------------------ health

    async states(ids: readonly string[]): Promise<StateRow[]> {
      if (ids.length === 0) return [];
      return q().selectFrom('destination_state').selectAll().where(idsIn('destination_id', ids)).execute();
    },

    /** Per destination: dead letters waiting, and dead letters written since `since`. */
    async dlqCounts(
      scope: Scope,
      ids: readonly string[],
      since: Date,
    ): Promise<Map<string, { dead: number; recent: number }>> {
      if (ids.length === 0) return new Map();
      const rows = await q()
        .selectFrom('dlq_events')
        .select([
          'destination_id',
          sql<number>`count(*) filter (where status = 'dead')`.as('dead'),
          sql<number>`count(*) filter (where created_at >= ${since})`.as('recent'),
        ])
        .where(idsIn('destination_id', ids))
        .where(scoped(scope, 'dlq_events.organization_id'))
        .where((eb) => eb.or([eb('status', '=', 'dead'), eb('created_at', '>=', since)]))
        .groupBy('destination_id')
        .execute();
      return new Map(rows.map((r) => [r.destination_id, { dead: n(r.dead), recent: n(r.recent) }]));
    },

    /** Per destination: events of primary and reprocess rows in the outbox and the oldest row. */
    async pending(scope: Scope, ids: readonly string[]): Promise<Map<string, { events: number; oldest: Date | null }>> {
      if (ids.length === 0) return new Map();
      const rows = await q()
        .selectFrom('delivery_batches')
        .select([
          'destination_id',
          sql<string>`sum(event_count)::bigint`.as('events'),
          sql<Date | null>`min(created_at)`.as('oldest'),
        ])
        .where(idsIn('destination_id', ids))
        .where('kind', 'in', ['primary', 'reprocess', 'replay'])
        .where(scoped(scope, 'delivery_batches.organization_id'))
        .groupBy('destination_id')
        .execute();
      return new Map(
        rows.map((r) => [r.destination_id, { events: n(r.events), oldest: r.oldest ? new Date(r.oldest) : null }]),
      );
    },

    /** Per destination: the whole outbox (every organization and kind), what its backlog budget counts. */
    async backlog(ids: readonly string[]): Promise<Map<string, { events: number; bytes: number }>> {
      if (ids.length === 0) return new Map();
      const rows = await q()
        .selectFrom('delivery_batches')
        .select([
          'destination_id',
          sql<string>`sum(event_count)::bigint`.as('events'),
          sql<string>`sum(bytes)::bigint`.as('bytes'),
        ])
        .where(idsIn('destination_id', ids))
        .groupBy('destination_id')
        .execute();
      return new Map(rows.map((r) => [r.destination_id, { events: n(r.events), bytes: n(r.bytes) }]));
    },

    /** Per destination: delivered events and failed requests in the hourly buckets from `from`. */
    async recentStats(ids: readonly string[], from: Date): Promise<Map<string, { delivered: number; failed: number }>> {
      if (ids.length === 0) return new Map();
      const rows = await q()
        .selectFrom('destination_stats')
        .select([
          'destination_id',
          sql<string>`sum(delivered)::bigint`.as('delivered'),
          sql<string>`sum(failed_requests)::bigint`.as('failed'),
        ])
        .where(idsIn('destination_id', ids))
        .where('hour', '>=', from)
        .groupBy('destination_id')
        .execute();
      return new Map(rows.map((r) => [r.destination_id, { delivered: n(r.delivered), failed: n(r.failed) }]));
    },

    // ------------------------------------------------------------------ ledger

    /** stream_counters summed over the days kept, per stream in scope. */
    async streamCounters(scope: Scope): Promise<(StreamKey & { events_in: number; quarantined: number })[]> {
      const rows = await q()
        .selectFrom('stream_counters')
        .select([
          'organization_id',
          'integration_id',
          'stream',
          sql<string>`sum(events_in)::bigint`.as('events_in'),
          sql<string>`sum(quarantined - quarantine_released)::bigint`.as('quarantined'),
        ])
        .where(scoped(scope, 'stream_counters.organization_id'))
        .groupBy(['organization_id', 'integration_id', 'stream'])
        .execute();
      return rows.map((r) => ({ ...r, events_in: n(r.events_in), quarantined: n(r.quarantined) }));
    },

    /** Ledger rows summed over days (and destinations), per stream, outcome and reason, in scope; optionally one destination's. */
    async ledger(
      scope: Scope,
      destinationId?: string,
    ): Promise<(StreamKey & { outcome: string; reason: string; count: number })[]> {
      let base = q().selectFrom('ledger').where(scoped(scope, 'ledger.organization_id'));
      // Copies may name their destination in reason (docs/delivery.md) or in destination_id.
      if (destinationId !== undefined) {
        base = base.where((eb) =>
          eb.or([
            eb('destination_id', '=', destinationId),
            eb.and([eb('outcome', '=', 'copies'), eb('reason', '=', destinationId)]),
          ]),
        );
      }
      const rows = await base
        .select([
          'organization_id',
          'integration_id',
          'stream',
          'outcome',
          'reason',
          sql<string>`sum(count)::bigint`.as('count'),
        ])
        .groupBy(['organization_id', 'integration_id', 'stream', 'outcome', 'reason'])
        .execute();
      return rows.map((r) => ({ ...r, count: n(r.count) }));
    },

    /** Events accepted and not yet normalized, per stream in scope. */
    async pendingNormalization(scope: Scope): Promise<(StreamKey & { events: number })[]> {
      const rows = await q()
        .selectFrom('accepted_batches')
        .select(['organization_id', 'integration_id', 'stream', sql<string>`sum(event_count)::bigint`.as('events')])
        .where('event_count', '>', 0)
        .where(scoped(scope, 'accepted_batches.organization_id'))
        .groupBy(['organization_id', 'integration_id', 'stream'])
        .execute();
      return rows.map((r) => ({ ...r, events: n(r.events) }));
    },

    /** Events still waiting for routing, per stream in scope. */
    async pendingRouting(scope: Scope): Promise<(StreamKey & { events: number })[]> {
      const rows = await q()
        .selectFrom('normalized_batches')
        .select(['organization_id', 'integration_id', 'stream', sql<string>`sum(event_count)::bigint`.as('events')])
        .where('route_state', '=', 'pending')
        .where(scoped(scope, 'normalized_batches.organization_id'))
        .groupBy(['organization_id', 'integration_id', 'stream'])
        .execute();
      return rows.map((r) => ({ ...r, events: n(r.events) }));
    },

    /** Events in the outbox (primary and reprocess), per stream in scope; optionally one destination's. */
    async pendingOutbox(scope: Scope, destinationId?: string): Promise<(StreamKey & { events: number })[]> {
      let base = q()
        .selectFrom('delivery_batches')
        .where('kind', 'in', ['primary', 'reprocess', 'replay'])
        .where(scoped(scope, 'delivery_batches.organization_id'));
      if (destinationId !== undefined) base = base.where('destination_id', '=', destinationId);
      const rows = await base
        .select(['organization_id', 'integration_id', 'stream', sql<string>`sum(event_count)::bigint`.as('events')])
        .groupBy(['organization_id', 'integration_id', 'stream'])
        .execute();
      return rows.map((r) => ({ ...r, events: n(r.events) }));
    },

    // ------------------------------------------------------------------ metrics

    async stats(destinationId: string, from: Date): Promise<StatsRow[]> {
      return q()
        .selectFrom('destination_stats')
        .selectAll()
        .where('destination_id', '=', destinationId)
        .where('hour', '>=', from)
        .orderBy('hour')
        .execute();
    },

    /** One destination's ledger counts per day from `fromDay`, in scope. */
    async ledgerDaily(
      scope: Scope,
      destinationId: string,
      fromDay: string,
    ): Promise<{ day: string; outcome: string; count: number }[]> {
      const rows = await q()
        .selectFrom('ledger')
        .select(['day', 'outcome', sql<string>`sum(count)::bigint`.as('count')])
        .where('destination_id', '=', destinationId)
        .where('outcome', 'in', ['delivered', 'dead_lettered', 'dlq_reprocessed'])
        .where('day', '>=', fromDay)
        .where(scoped(scope, 'ledger.organization_id'))
        .groupBy(['day', 'outcome'])
        .orderBy('day')
        .execute();
      return rows.map((r) => ({ ...r, count: n(r.count) }));
    },

    // ------------------------------------------------------------------ lineage

    /** Events copied to the destination, in scope, the most recently copied first. */
    async lineageOfDestination(
      scope: Scope,
      destinationId: string,
      page: OffsetPage,
    ): Promise<{ items: LineageEventRow[]; total: number }> {
      const copied = q()
        .selectFrom('lineage_copies as c')
        .innerJoin('lineage_events as e', 'e.event_id', 'c.event_id')
        .where('c.destination_id', '=', destinationId)
        .where(scoped(scope, 'e.organization_id'));
      const [items, total] = await Promise.all([
        copied
          .selectAll('e')
          .select(sql<Date>`max(c.created_at)`.as('last_copied_at'))
          .groupBy('e.event_id')
          .orderBy('last_copied_at', 'desc')
          .orderBy('e.event_id', 'desc')
          .limit(page.limit)
          .offset(page.offset)
          .execute(),
        copied.select(sql<string>`count(distinct e.event_id)`.as('n')).executeTakeFirstOrThrow(),
      ]);
      return { items: items.map(({ last_copied_at: _, ...e }) => e), total: n(total.n) };
    },

    async lineageEvent(scope: Scope, eventId: string): Promise<LineageEventRow | undefined> {
      return q()
        .selectFrom('lineage_events')
        .selectAll()
        .where('event_id', '=', eventId)
        .where(scoped(scope, 'lineage_events.organization_id'))
        .executeTakeFirst();
    },

    async lineageCopies(eventIds: readonly string[]): Promise<LineageCopyRow[]> {
      if (eventIds.length === 0) return [];
      return q()
        .selectFrom('lineage_copies')
        .selectAll()
        .where(idsIn('event_id', eventIds))
        .orderBy('created_at')
        .orderBy('delivery_batch_id')
        .execute();
    },

    async lineageAttempts(batchIds: readonly string[]): Promise<LineageAttemptRow[]> {
      if (batchIds.length === 0) return [];
      return q()
        .selectFrom('lineage_attempts')
        .selectAll()
        .where(idsIn('delivery_batch_id', batchIds))
        .orderBy('at')
        .orderBy('attempt')
        .execute();
    },

    /** (event, destination) pairs waiting in a dead-letter queue. */
    async deadPairs(eventIds: readonly string[]): Promise<{ event_id: string; destination_id: string }[]> {
      if (eventIds.length === 0) return [];
      return q()
        .selectFrom('dlq_events')
        .select(['event_id', 'destination_id'])
        .where(idsIn('event_id', eventIds))
        .where('status', '=', 'dead')
        .execute();
    },

    // ------------------------------------------------------------------ tap

    async openTapSession(s: {
      id: string;
      destination_id: string;
      expires_at: Date;
      max_events: number;
      created_by: number | null;
      created_at: Date;
    }): Promise<void> {
      await q().insertInto('tap_sessions').values(s).execute();
    },

    async tapSamples(
      sessionId: string,
      afterId: number,
      limit: number,
    ): Promise<{ id: number; event: string; at: Date }[]> {
      const rows = await q()
        .selectFrom('tap_samples')
        .select(['id', 'event', 'at'])
        .where('session_id', '=', sessionId)
        .where('id', '>', afterId)
        .orderBy('id')
        .limit(limit)
        .execute();
      return rows.map((r) => ({ ...r, id: n(r.id) }));
    },

    async closeTapSession(sessionId: string): Promise<void> {
      await q().deleteFrom('tap_sessions').where('id', '=', sessionId).execute();
      await q().deleteFrom('tap_samples').where('session_id', '=', sessionId).execute();
    },
  };
}

export type DeliveryStatusStore = ReturnType<typeof createDeliveryStatusStore>;
