import type { Kysely } from 'kysely';

// Splunk HEC indexer acknowledgement (docs/inputs-splunk-hec.md): one row per (integration,
// data channel). next_ack_id is the channel's next ackId (issued by an atomic upsert, so several
// api processes never hand out the same one); pending maps each unanswered ackId to the ingest
// batch ids of its request. Idle channels are deleted after a while; rows of a deleted
// integration go with it.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('hec_channels')
    .addColumn('integration_id', 'integer', (c) => c.notNull().references('integrations.id').onDelete('cascade'))
    .addColumn('channel', 'text', (c) => c.notNull())
    .addColumn('next_ack_id', 'bigint', (c) => c.notNull())
    .addColumn('pending', 'jsonb', (c) => c.notNull())
    .addColumn('used_at', 'timestamptz', (c) => c.notNull())
    .addPrimaryKeyConstraint('hec_channels_pk', ['integration_id', 'channel'])
    .execute();
  await db.schema.createIndex('hec_channels_used_at').on('hec_channels').column('used_at').execute();
}
