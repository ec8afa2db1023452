import { sql, type Kysely } from 'kysely';

// Large job payloads are stored gzipped (platform/queue/payload-codec.ts); the column is
// text (base64) because PGlite moves text parameters far faster than bytea. Stored
// without TOAST compression: it is compressed already.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table jobs add column payload_gz text`.execute(db);
  await sql`alter table jobs alter column payload_gz set storage external`.execute(db);
}
