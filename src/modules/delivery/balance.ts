// The accounting invariant (docs/delivery.md, The ledger), measured: per organization,
// integration and stream, over every day,
//   events_in + copies_added + replayed = delivered + filtered + quarantined + (dead_lettered − dlq_reprocessed) + dropped + pending
// with pending measured (accepted batches not yet normalized, normalized batches still
// pending routing, primary, reprocess and replay rows in the outbox) and events_in counting the
// accepted ones not yet normalized too. One statement, so one snapshot. `unaccounted` is
// the difference and is 0 at every consistent snapshot. quarantined is net of the events a quarantine reprocess later normalized
// (stream_counters.quarantine_released). Used by the tests, the chaos and kill tests, and health.
import { sql, type Kysely } from 'kysely';
import type { DB } from '../../platform/db/index.js';

export interface LedgerBalanceFilter {
  organization_id?: number;
  integration_id?: number;
  stream?: string;
}

export interface LedgerBalance {
  organization_id: number;
  integration_id: number;
  stream: string;
  events_in: number;
  quarantined: number;
  filtered: number;
  routed: number;
  copies: number;
  /** copies − routed: what fan-out added. */
  copies_added: number;
  /** Copies of stored events replayed to a destination (docs/search.md, Replay). */
  replayed: number;
  delivered: number;
  dead_lettered: number;
  dlq_reprocessed: number;
  /** Copies a full drop_newest destination did not take (backlog budgets, docs/delivery.md). */
  dropped: number;
  /** Events accepted and not yet normalized (accepted_batches; in events_in too). */
  pending_normalization: number;
  /** Events of normalized batches still pending routing. */
  pending_routing: number;
  /** Events of primary and reprocess rows in the outbox. */
  pending_outbox: number;
  pending: number;
  unaccounted: number;
}

export async function ledgerBalance(db: Kysely<DB>, filter: LedgerBalanceFilter = {}): Promise<LedgerBalance[]> {
  const where = () => {
    const parts = [sql`true`];
    if (filter.organization_id !== undefined) parts.push(sql`organization_id = ${filter.organization_id}`);
    if (filter.integration_id !== undefined) parts.push(sql`integration_id = ${filter.integration_id}`);
    if (filter.stream !== undefined) parts.push(sql`stream = ${filter.stream}`);
    return sql.join(parts, sql` and `);
  };
  const { rows } = await sql<Omit<LedgerBalance, 'copies_added' | 'pending' | 'unaccounted'>>`
    with sc as (
      select organization_id, integration_id, stream, sum(events_in)::bigint as events_in, sum(quarantined - quarantine_released)::bigint as quarantined
      from stream_counters where ${where()} group by 1, 2, 3
    ), lg as (
      select organization_id, integration_id, stream,
        coalesce(sum(count) filter (where outcome = 'filtered'), 0)::bigint as filtered,
        coalesce(sum(count) filter (where outcome = 'routed'), 0)::bigint as routed,
        coalesce(sum(count) filter (where outcome = 'copies'), 0)::bigint as copies,
        coalesce(sum(count) filter (where outcome = 'replayed'), 0)::bigint as replayed,
        coalesce(sum(count) filter (where outcome = 'delivered'), 0)::bigint as delivered,
        coalesce(sum(count) filter (where outcome = 'dead_lettered'), 0)::bigint as dead_lettered,
        coalesce(sum(count) filter (where outcome = 'dlq_reprocessed'), 0)::bigint as dlq_reprocessed,
        coalesce(sum(count) filter (where outcome = 'dropped'), 0)::bigint as dropped
      from ledger where ${where()} group by 1, 2, 3
    ), ab as (
      select organization_id, integration_id, stream, sum(event_count)::bigint as pending_normalization
      from accepted_batches where event_count > 0 and ${where()} group by 1, 2, 3
    ), nb as (
      select organization_id, integration_id, stream, sum(event_count)::bigint as pending_routing
      from normalized_batches where route_state = 'pending' and ${where()} group by 1, 2, 3
    ), ob as (
      select organization_id, integration_id, stream, sum(event_count)::bigint as pending_outbox
      from delivery_batches where kind in ('primary', 'reprocess', 'replay') and ${where()} group by 1, 2, 3
    )
    select organization_id, integration_id, stream,
      coalesce(events_in, 0) + coalesce(pending_normalization, 0) as events_in, coalesce(quarantined, 0) as quarantined,
      coalesce(filtered, 0) as filtered, coalesce(routed, 0) as routed, coalesce(copies, 0) as copies, coalesce(replayed, 0) as replayed,
      coalesce(delivered, 0) as delivered, coalesce(dead_lettered, 0) as dead_lettered, coalesce(dlq_reprocessed, 0) as dlq_reprocessed, coalesce(dropped, 0) as dropped,
      coalesce(pending_normalization, 0) as pending_normalization,
      coalesce(pending_routing, 0) as pending_routing, coalesce(pending_outbox, 0) as pending_outbox
    from sc
      full join ab using (organization_id, integration_id, stream)
      full join lg using (organization_id, integration_id, stream)
      full join nb using (organization_id, integration_id, stream)
      full join ob using (organization_id, integration_id, stream)
    order by organization_id, integration_id, stream`.execute(db);
  return rows.map((r) => {
    const n = Object.fromEntries(Object.entries(r).map(([k, v]) => [k, k === 'stream' ? v : Number(v)])) as typeof r;
    const copiesAdded = n.copies - n.routed;
    const pending = n.pending_normalization + n.pending_routing + n.pending_outbox;
    const accounted = n.delivered + n.filtered + n.quarantined + (n.dead_lettered - n.dlq_reprocessed) + n.dropped + pending;
    return { ...n, copies_added: copiesAdded, pending, unaccounted: n.events_in + copiesAdded + n.replayed - accounted };
  });
}
