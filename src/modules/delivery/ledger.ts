// Writes to the accounting ledger (docs/delivery.md, The ledger). Every state change of an
// event after normalization adds its count here IN THE SAME TRANSACTION as the change, so
// the ledger and the outbox can never disagree. The dashboard's outcomes also go, in the
// same statement, to the hourly ledger (ledger_hours), so an hour and its day agree. Used
// by the one pass's routing, the delivery lanes, DLQ reprocess and destination deletion.
import { sql, type Kysely } from 'kysely';
import { executor } from '../../platform/db/ambient.js';
import type { DB } from '../../platform/db/index.js';

export const LEDGER_OUTCOMES = [
  'filtered',
  'routed',
  'copies',
  'replayed',
  'delivered',
  'dead_lettered',
  'dlq_reprocessed',
  'dropped',
  'shadow_delivered',
  'shadow_dropped',
] as const;
export type LedgerOutcome = (typeof LEDGER_OUTCOMES)[number];

export interface LedgerDelta {
  organization_id: number;
  integration_id: number;
  stream: string;
  outcome: LedgerOutcome;
  /** '' when the outcome is not about one destination. */
  destination_id?: string;
  /** '' when there is no reason to give (filtered and dead_lettered always have one). */
  reason?: string;
  count: number;
}

/** UTC YYYY-MM-DD, the ledger's day key. */
export function ledgerDay(at: Date): string {
  return at.toISOString().slice(0, 10);
}

const HOUR_MS = 3_600_000;

/** The start of `at`'s UTC hour, the hourly ledger's key (ledger_hours, 0014). */
export function ledgerHour(at: Date): Date {
  return new Date(Math.floor(at.getTime() / HOUR_MS) * HOUR_MS);
}

/** The ledger outcomes the hourly ledger keeps (the dashboard's terms). */
export const HOURLY_OUTCOMES = ['filtered', 'delivered', 'dead_lettered', 'dlq_reprocessed'] as const;

/** Sums deltas with the same key so one statement carries a whole batch's changes. */
export function mergeDeltas(deltas: LedgerDelta[]): LedgerDelta[] {
  const byKey = new Map<string, LedgerDelta>();
  for (const d of deltas) {
    if (d.count === 0) continue;
    const key = `${d.integration_id}\u0000${d.stream}\u0000${d.outcome}\u0000${d.destination_id ?? ''}\u0000${d.reason ?? ''}`;
    const seen = byKey.get(key);
    if (seen) seen.count += d.count;
    else byKey.set(key, { ...d, destination_id: d.destination_id ?? '', reason: d.reason ?? '' });
  }
  return [...byKey.values()];
}

/**
 * Adds the deltas to the ledger and, in the same statement, the dashboard's outcomes to
 * the hourly ledger (ledger_hours) for `at`'s hour: the hour and the day are written
 * together or not at all. Joins the ambient transaction when there is one. Rows are taken
 * in key order in both tables. Which table goes first is not documented (PostgreSQL says
 * the parts of a statement run "concurrently"); its executor finishes the main insert and
 * then runs an unreferenced data-modifying WITH, the same way for every writer, so
 * concurrent writers lock the rows in the same order.
 */
export async function addLedger(db: Kysely<DB>, deltas: LedgerDelta[], at: Date): Promise<void> {
  const rows = mergeDeltas(deltas);
  if (rows.length === 0) return;
  const day = ledgerDay(at);
  await sql`
    with v as (
      select * from jsonb_to_recordset(${JSON.stringify(rows)}::jsonb)
        as v(organization_id integer, integration_id integer, stream text, outcome text, destination_id text, reason text, count bigint)
    ), hours as (
      insert into ledger_hours (organization_id, integration_id, stream, hour, term, count)
      select v.organization_id, v.integration_id, v.stream, ${ledgerHour(at)}::timestamptz, v.outcome, sum(v.count)
      from v where v.outcome in (${sql.join([...HOURLY_OUTCOMES])})
      group by v.organization_id, v.integration_id, v.stream, v.outcome
      order by v.integration_id, v.stream, v.outcome
      on conflict (integration_id, stream, hour, term)
      do update set count = ledger_hours.count + excluded.count
    )
    insert into ledger (organization_id, integration_id, stream, day, outcome, destination_id, reason, count)
    select v.organization_id, v.integration_id, v.stream, ${day}, v.outcome, v.destination_id, v.reason, v.count
    from v
    order by v.integration_id, v.stream, v.outcome, v.destination_id, v.reason
    on conflict (integration_id, stream, day, outcome, destination_id, reason)
    do update set count = ledger.count + excluded.count`.execute(executor(db));
}
