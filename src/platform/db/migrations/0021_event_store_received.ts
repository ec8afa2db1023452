import { sql, type Kysely } from 'kysely';

// The event store keeps when Weir received each event (docs/search.md, decision 0058):
// retention counts from there, not from the event's own time, so a backfill or a replayed
// archive of old events stays for the organization's whole retention. Rows stored before have
// none and count from their time. What retention removed is counted on the organization
// (GET /api/organizations/{org_id}/retention).
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table events add column received timestamptz`.execute(db);
  await sql`alter table organizations add column store_removed bigint not null default 0`.execute(db);
  await sql`alter table organizations add column store_removed_at timestamptz`.execute(db);
}
