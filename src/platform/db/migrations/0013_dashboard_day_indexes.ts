import { sql, type Kysely } from 'kysely';

// The dashboard summary of a platform caller reads two UTC days of the ledger and the
// stream counters across every organization. Their indexes lead with organization_id
// (or integration_id), so without these that read scans every day retention keeps
// (bench/dashboard.ts measures both).
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create index if not exists ledger_day on ledger (day)`.execute(db);
  await sql`create index if not exists stream_counters_day on stream_counters (day)`.execute(db);
}
