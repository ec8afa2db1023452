import { sql, type Kysely } from 'kysely';

// The event store's size budget (WEIR_SEARCH_MAX_BYTES, docs/search.md): each event keeps the
// length of its JSON text in UTF-8 bytes as the pass wrote it, so the store's size is the same
// sum on every engine (PostgreSQL's jsonb renders the text differently, and its relation size
// counts dead tuples). Rows stored before have none and count their jsonb text's length.
// A nullable column without a default: no rewrite of the table.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table events add column bytes integer`.execute(db);
}
