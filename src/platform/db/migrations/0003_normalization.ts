import { sql, type Kysely } from 'kysely';

// The first half of the data plane: ingestion tokens, mapping definitions and their
// versions, normalized output, the quarantine, drift fields, raw samples, OCSF policies
// and the per-stream counters that accounting and health read.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('ingestion_tokens')
    // One token per integration; creating a new one replaces the old.
    .addColumn('integration_id', 'integer', (c) => c.primaryKey().references('integrations.id').onDelete('cascade'))
    .addColumn('organization_id', 'integer', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('token_prefix', 'text', (c) => c.notNull())
    // HMAC-SHA-256(server key, token), hex.
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('created_by', 'integer')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('last_used_at', 'timestamptz')
    .execute();

  await db.schema
    .createTable('mapping_definitions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    // null: a built-in (platform-wide) definition; else an organization's own.
    .addColumn('organization_id', 'integer', (c) => c.references('organizations.id').onDelete('cascade'))
    .addColumn('platform', 'text', (c) => c.notNull())
    .addColumn('stream', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('builtin', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('live_version_id', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await sql`create unique index mapping_definitions_key on mapping_definitions (coalesce(organization_id, 0), platform, stream)`.execute(
    db,
  );
  await sql`create index mapping_definitions_updated on mapping_definitions (updated_at)`.execute(db);

  await db.schema
    .createTable('mapping_versions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('definition_id', 'text', (c) => c.notNull().references('mapping_definitions.id').onDelete('cascade'))
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('document', 'jsonb', (c) => c.notNull())
    .addColumn('checksum', 'text', (c) => c.notNull())
    .addColumn('comment', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('builtin', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('created_by', 'integer')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addUniqueConstraint('mapping_versions_number', ['definition_id', 'version'])
    .execute();

  await db.schema
    .createTable('normalized_batches')
    // The id of the ingest batch it came from: a redelivered job finds its output here.
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'integer', (c) => c.notNull())
    .addColumn('integration_id', 'integer', (c) => c.notNull())
    .addColumn('stream', 'text', (c) => c.notNull())
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('event_count', 'integer', (c) => c.notNull())
    .addColumn('flagged_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('quarantined_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('bytes', 'integer', (c) => c.notNull())
    // base64(gzip(NDJSON of normalized records)) (pipeline/batch-codec.ts); routing reads it.
    .addColumn('events', 'text', (c) => c.notNull())
    .addColumn('route_state', 'text', (c) => c.notNull().defaultTo('pending'))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  // Compressed already: no TOAST compression on top.
  await sql`alter table normalized_batches alter column events set storage external`.execute(db);
  await sql`create index normalized_batches_created on normalized_batches (created_at)`.execute(db);
  await sql`create index normalized_batches_integration on normalized_batches (integration_id, created_at)`.execute(db);

  await db.schema
    .createTable('quarantine_events')
    // The event's envelope id.
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'integer', (c) => c.notNull())
    .addColumn('integration_id', 'integer', (c) => c.notNull())
    .addColumn('stream', 'text', (c) => c.notNull())
    .addColumn('received_at', 'timestamptz', (c) => c.notNull())
    .addColumn('raw', 'jsonb', (c) => c.notNull())
    .addColumn('error_kind', 'text', (c) => c.notNull())
    .addColumn('error_detail', 'text', (c) => c.notNull())
    .addColumn('mapping_version_id', 'text')
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('quarantined'))
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('reprocessed_at', 'timestamptz')
    .execute();
  await sql`create index quarantine_events_org on quarantine_events (organization_id, status, created_at)`.execute(db);
  await sql`create index quarantine_events_created on quarantine_events (created_at)`.execute(db);

  await db.schema
    .createTable('drift_fields')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'integer', (c) => c.notNull())
    .addColumn('integration_id', 'integer', (c) => c.notNull().references('integrations.id').onDelete('cascade'))
    .addColumn('stream', 'text', (c) => c.notNull())
    .addColumn('path', 'text', (c) => c.notNull())
    .addColumn('value_type', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('new'))
    // Estimated from the sampled events (see docs/mappings.md, Drift).
    .addColumn('count', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('example', 'text')
    .addColumn('first_seen_at', 'timestamptz', (c) => c.notNull())
    .addColumn('last_seen_at', 'timestamptz', (c) => c.notNull())
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addUniqueConstraint('drift_fields_key', ['integration_id', 'stream', 'path'])
    .execute();
  await sql`create index drift_fields_org on drift_fields (organization_id, status)`.execute(db);

  await db.schema
    .createTable('raw_samples')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'integer', (c) => c.notNull())
    .addColumn('integration_id', 'integer', (c) => c.notNull().references('integrations.id').onDelete('cascade'))
    .addColumn('stream', 'text', (c) => c.notNull())
    .addColumn('received_at', 'timestamptz', (c) => c.notNull())
    .addColumn('raw', 'jsonb', (c) => c.notNull())
    .execute();
  await sql`create index raw_samples_stream on raw_samples (integration_id, stream, received_at desc)`.execute(db);

  await db.schema
    .createTable('ocsf_policies')
    .addColumn('organization_id', 'integer', (c) => c.primaryKey().references('organizations.id').onDelete('cascade'))
    .addColumn('mode', 'text', (c) => c.notNull())
    .addColumn('updated_by', 'integer')
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();

  await db.schema
    .createTable('ocsf_compliance')
    .addColumn('organization_id', 'integer', (c) => c.notNull())
    .addColumn('integration_id', 'integer', (c) => c.notNull())
    .addColumn('class_uid', 'integer', (c) => c.notNull())
    .addColumn('day', 'text', (c) => c.notNull()) // UTC YYYY-MM-DD
    .addColumn('valid', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('invalid', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('last_error', 'text')
    .addColumn('last_invalid_at', 'timestamptz')
    .addPrimaryKeyConstraint('ocsf_compliance_pk', ['integration_id', 'class_uid', 'day'])
    .execute();
  await sql`create index ocsf_compliance_org on ocsf_compliance (organization_id, day)`.execute(db);

  await db.schema
    .createTable('stream_counters')
    .addColumn('organization_id', 'integer', (c) => c.notNull())
    .addColumn('integration_id', 'integer', (c) => c.notNull())
    .addColumn('stream', 'text', (c) => c.notNull())
    .addColumn('day', 'text', (c) => c.notNull()) // UTC YYYY-MM-DD
    .addColumn('events_in', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('bytes_in', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('normalized', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('flagged', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('quarantined', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('last_event_at', 'timestamptz')
    .addPrimaryKeyConstraint('stream_counters_pk', ['integration_id', 'stream', 'day'])
    .execute();
  await sql`create index stream_counters_org on stream_counters (organization_id, day)`.execute(db);
}
