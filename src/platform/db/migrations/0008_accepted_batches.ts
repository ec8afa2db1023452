import type { Kysely } from 'kysely';

// Ingest batches accepted and not yet normalized: one row per batch, written with its queue
// job and deleted by the normalization transaction that writes its results, so the ledger
// counts queued events in events_in and pending from one snapshot (docs/delivery.md, The
// ledger). Only the backlog lives here; no foreign keys, like stream_counters: an
// organization's rows go with its data (normalization ORG_TABLES).
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('accepted_batches')
    .addColumn('id', 'text', (c) => c.primaryKey()) // the ingest batch id = queue job id = normalized batch id
    .addColumn('organization_id', 'integer', (c) => c.notNull())
    .addColumn('integration_id', 'integer', (c) => c.notNull())
    .addColumn('stream', 'text', (c) => c.notNull())
    .addColumn('event_count', 'integer', (c) => c.notNull())
    .addColumn('accepted_at', 'timestamptz', (c) => c.notNull())
    .execute();
}
