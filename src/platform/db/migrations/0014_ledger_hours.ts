import { sql, type Kysely } from 'kysely';

// The hourly ledger: the dashboard's traffic terms per stream and UTC hour, written in the
// same statement as the ledger (delivery/ledger.ts addLedger) and the stream counters
// (normalization/store.ts addCounters), so an hour and its day never disagree. Terms:
// events_in, quarantined, quarantine_released (from the counters' writes), filtered,
// delivered, dead_lettered, dlq_reprocessed (from the ledger's). Kept 48 hours (delivery
// housekeeping); docs/decisions/0034.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('ledger_hours')
    .addColumn('organization_id', 'integer', (c) => c.notNull())
    .addColumn('integration_id', 'integer', (c) => c.notNull())
    .addColumn('stream', 'text', (c) => c.notNull())
    .addColumn('hour', 'timestamptz', (c) => c.notNull()) // truncated to the UTC hour
    .addColumn('term', 'text', (c) => c.notNull())
    .addColumn('count', 'bigint', (c) => c.notNull().defaultTo(0))
    .addPrimaryKeyConstraint('ledger_hours_pk', ['integration_id', 'stream', 'hour', 'term'])
    .execute();
  // An organization's summary (and its data deletion); a platform caller's summary and the retention delete.
  await sql`create index ledger_hours_org on ledger_hours (organization_id, hour)`.execute(db);
  await sql`create index ledger_hours_hour on ledger_hours (hour)`.execute(db);
}
