import { sql, type Kysely } from 'kysely';

// The second half of the data plane: destinations (with their encrypted credential),
// routes and their versions, the per-destination outbox the delivery engine works from,
// the dead-letter queue, breaker and health state, the accounting ledger, route and
// destination statistics, lineage (optional) and live taps. docs/delivery.md explains
// how they fit together.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('destinations')
    .addColumn('id', 'text', (c) => c.primaryKey())
    // null: a global destination (platform scope), usable by every organization's routes.
    .addColumn('organization_id', 'integer', (c) => c.references('organizations.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('type', 'text', (c) => c.notNull())
    // Non-secret settings, validated against the type's schema.
    .addColumn('config', 'jsonb', (c) => c.notNull())
    // Batching, retry, breaker and timeout settings (pipeline/delivery/settings.ts).
    .addColumn('delivery', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn('enabled', 'boolean', (c) => c.notNull().defaultTo(true))
    // Why delivery is stopped when enabled is false and an administrator did not say so ('credential_revoked').
    .addColumn('disabled_reason', 'text')
    // base64(iv | tag | AES-256-GCM ciphertext); the destination id is the associated data.
    .addColumn('credential', 'text')
    // Fingerprint of the key that encrypted it (rotation of WEIR_SECRET_KEY re-encrypts).
    .addColumn('credential_key_id', 'text')
    .addColumn('credential_updated_at', 'timestamptz')
    // Mirror of this destination's traffic (shadow), never affecting it.
    .addColumn('shadow_destination_id', 'text')
    .addColumn('version', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('created_by', 'integer')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await sql`create unique index destinations_name on destinations (coalesce(organization_id, 0), lower(name))`.execute(
    db,
  );
  await sql`create index destinations_updated on destinations (updated_at)`.execute(db);

  await db.schema
    .createTable('routes')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'integer', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
    // Evaluation order within the organization, 1-based, dense.
    .addColumn('position', 'integer', (c) => c.notNull())
    .addColumn('enabled', 'boolean', (c) => c.notNull().defaultTo(true))
    // Condition tree (pipeline/route/types.ts); null matches every event.
    .addColumn('condition', 'jsonb')
    .addColumn('transforms', 'jsonb', (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .addColumn('destination_ids', 'jsonb', (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    // true: a match stops evaluation; false: later routes may match too (fan-out).
    .addColumn('final', 'boolean', (c) => c.notNull().defaultTo(true))
    .addColumn('version', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('created_by', 'integer')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await sql`create unique index routes_name on routes (organization_id, lower(name))`.execute(db);
  await sql`create index routes_order on routes (organization_id, position)`.execute(db);
  await sql`create index routes_updated on routes (updated_at)`.execute(db);

  await db.schema
    .createTable('route_versions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('route_id', 'text', (c) => c.notNull().references('routes.id').onDelete('cascade'))
    .addColumn('version', 'integer', (c) => c.notNull())
    // The route's definition at this version (name, description, enabled, condition, transforms, destination_ids, final).
    .addColumn('definition', 'jsonb', (c) => c.notNull())
    .addColumn('comment', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('created_by', 'integer')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addUniqueConstraint('route_versions_number', ['route_id', 'version'])
    .execute();

  // The outbox: one row per (normalized batch, destination, kind) until it is delivered
  // or dead-lettered. Homogeneous in organization, integration and stream, so the ledger
  // is kept per row.
  await db.schema
    .createTable('delivery_batches')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('destination_id', 'text', (c) => c.notNull())
    .addColumn('organization_id', 'integer', (c) => c.notNull())
    .addColumn('integration_id', 'integer', (c) => c.notNull())
    .addColumn('stream', 'text', (c) => c.notNull())
    // The normalized batch it came from (or the DLQ reprocess that made it).
    .addColumn('source_batch_id', 'text', (c) => c.notNull())
    // primary: counted in the ledger; shadow: a mirror, never dead-lettered; reprocess: out of the DLQ.
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('event_count', 'integer', (c) => c.notNull())
    .addColumn('bytes', 'integer', (c) => c.notNull())
    // Envelope ids, comma-separated, in the order of the lines.
    .addColumn('event_ids', 'text', (c) => c.notNull())
    // base64(gzip(NDJSON)): one OCSF event per line, after the route's transforms.
    .addColumn('events', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    // A dispatcher holds the row until then; a killed one's rows come back after it.
    .addColumn('leased_until', 'timestamptz')
    .addColumn('lease_owner', 'text')
    .addColumn('last_error', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addUniqueConstraint('delivery_batches_source', ['source_batch_id', 'destination_id', 'kind'])
    .execute();
  await sql`alter table delivery_batches alter column events set storage external`.execute(db);
  await sql`create index delivery_batches_due on delivery_batches (destination_id, next_attempt_at)`.execute(db);
  await sql`create index delivery_batches_stream on delivery_batches (integration_id, stream)`.execute(db);

  // Quarantined events that a reprocess later normalized: they leave the ledger's
  // quarantined term (quarantined − quarantine_released) and flow on like any event.
  await sql`alter table stream_counters add column quarantine_released bigint not null default 0`.execute(db);

  // Routing claims normalized batches with a lease too.
  await sql`alter table normalized_batches add column leased_until timestamptz`.execute(db);
  await sql`create index normalized_batches_pending on normalized_batches (created_at) where route_state = 'pending'`.execute(
    db,
  );

  await db.schema
    .createTable('dlq_events')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('destination_id', 'text', (c) => c.notNull())
    .addColumn('organization_id', 'integer', (c) => c.notNull())
    .addColumn('integration_id', 'integer', (c) => c.notNull())
    .addColumn('stream', 'text', (c) => c.notNull())
    // The envelope id of the event.
    .addColumn('event_id', 'text', (c) => c.notNull())
    .addColumn('delivery_batch_id', 'text', (c) => c.notNull())
    // The OCSF event as it would have been delivered (JSON text).
    .addColumn('event', 'text', (c) => c.notNull())
    // rejected (a permanent 4xx or per-event refusal), retries_exhausted, credential_revoked, ...
    .addColumn('error_kind', 'text', (c) => c.notNull())
    .addColumn('reason', 'text', (c) => c.notNull())
    .addColumn('status_code', 'integer')
    .addColumn('attempts', 'integer', (c) => c.notNull())
    // dead, or reprocessed (sent back to the outbox)
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('dead'))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('reprocessed_at', 'timestamptz')
    .execute();
  await sql`create index dlq_events_destination on dlq_events (destination_id, status, created_at desc)`.execute(db);
  await sql`create index dlq_events_created on dlq_events (created_at)`.execute(db);

  // Shared breaker and health state of a destination (each dispatcher keeps its own
  // breaker and writes its transitions here).
  await db.schema
    .createTable('destination_state')
    .addColumn('destination_id', 'text', (c) => c.primaryKey())
    .addColumn('breaker_state', 'text', (c) => c.notNull().defaultTo('closed'))
    .addColumn('consecutive_failures', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('opened_at', 'timestamptz')
    .addColumn('last_attempt_at', 'timestamptz')
    .addColumn('last_success_at', 'timestamptz')
    .addColumn('last_error', 'text')
    .addColumn('last_error_at', 'timestamptz')
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();

  // The accounting ledger beyond what stream_counters holds (events_in, quarantined):
  // filtered, routed, fanout copies, delivered, dead_lettered, dlq_reprocessed; with the
  // destination and reason where they apply. docs/delivery.md states the invariant.
  await db.schema
    .createTable('ledger')
    .addColumn('organization_id', 'integer', (c) => c.notNull())
    .addColumn('integration_id', 'integer', (c) => c.notNull())
    .addColumn('stream', 'text', (c) => c.notNull())
    .addColumn('day', 'text', (c) => c.notNull()) // UTC YYYY-MM-DD
    .addColumn('outcome', 'text', (c) => c.notNull())
    .addColumn('destination_id', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('reason', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('count', 'bigint', (c) => c.notNull().defaultTo(0))
    .addPrimaryKeyConstraint('ledger_pk', ['integration_id', 'stream', 'day', 'outcome', 'destination_id', 'reason'])
    .execute();
  await sql`create index ledger_org on ledger (organization_id, day)`.execute(db);
  await sql`create index ledger_destination on ledger (destination_id, day) where destination_id <> ''`.execute(db);

  // Hourly statistics for route and destination health and metrics.
  await db.schema
    .createTable('route_stats')
    .addColumn('route_id', 'text', (c) => c.notNull())
    .addColumn('organization_id', 'integer', (c) => c.notNull())
    .addColumn('hour', 'timestamptz', (c) => c.notNull())
    .addColumn('matched', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('sampled_out', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('copies', 'bigint', (c) => c.notNull().defaultTo(0))
    .addPrimaryKeyConstraint('route_stats_pk', ['route_id', 'hour'])
    .execute();

  await db.schema
    .createTable('destination_stats')
    .addColumn('destination_id', 'text', (c) => c.notNull())
    .addColumn('hour', 'timestamptz', (c) => c.notNull())
    .addColumn('delivered', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('bytes', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('requests', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('failed_requests', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('dead_lettered', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('shadow_delivered', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('latency_ms_sum', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('latency_ms_max', 'integer', (c) => c.notNull().defaultTo(0))
    .addPrimaryKeyConstraint('destination_stats_pk', ['destination_id', 'hour'])
    .execute();

  // Lineage (optional, WEIR_LINEAGE_ENABLED): one row per event routed, one per copy, one
  // per attempt of a delivery batch; expires after about 7 days.
  await db.schema
    .createTable('lineage_events')
    .addColumn('event_id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'integer', (c) => c.notNull())
    .addColumn('integration_id', 'integer', (c) => c.notNull())
    .addColumn('stream', 'text', (c) => c.notNull())
    .addColumn('mapping_version_id', 'text')
    .addColumn('received_at', 'timestamptz', (c) => c.notNull())
    .addColumn('normalized_batch_id', 'text', (c) => c.notNull())
    // Route ids that matched, in order.
    .addColumn('routes', 'jsonb', (c) => c.notNull())
    // filtered reason when no copy was made (no_route, sampled_out, dropped_by_route)
    .addColumn('filtered', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await sql`create index lineage_events_created on lineage_events (created_at)`.execute(db);
  await db.schema
    .createTable('lineage_copies')
    .addColumn('event_id', 'text', (c) => c.notNull())
    .addColumn('destination_id', 'text', (c) => c.notNull())
    .addColumn('delivery_batch_id', 'text', (c) => c.notNull())
    .addColumn('route_id', 'text')
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('lineage_copies_pk', ['event_id', 'delivery_batch_id'])
    .execute();
  await sql`create index lineage_copies_destination on lineage_copies (destination_id, created_at desc)`.execute(db);
  await sql`create index lineage_copies_batch on lineage_copies (delivery_batch_id)`.execute(db);
  await db.schema
    .createTable('lineage_attempts')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('delivery_batch_id', 'text', (c) => c.notNull())
    .addColumn('destination_id', 'text', (c) => c.notNull())
    .addColumn('attempt', 'integer', (c) => c.notNull())
    // delivered, retry, dead_lettered, partial
    .addColumn('outcome', 'text', (c) => c.notNull())
    .addColumn('status_code', 'integer')
    .addColumn('error', 'text')
    .addColumn('duration_ms', 'integer')
    .addColumn('at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await sql`create index lineage_attempts_batch on lineage_attempts (delivery_batch_id)`.execute(db);
  await sql`create index lineage_attempts_at on lineage_attempts (at)`.execute(db);

  // Live taps: an open tap session makes the dispatchers copy a masked sample of what the
  // destination receives into tap_samples, which the API streams to the caller.
  await db.schema
    .createTable('tap_samples')
    .addColumn('id', 'bigserial', (c) => c.primaryKey())
    .addColumn('destination_id', 'text', (c) => c.notNull())
    .addColumn('session_id', 'text', (c) => c.notNull())
    .addColumn('event', 'text', (c) => c.notNull())
    .addColumn('at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await sql`create index tap_samples_session on tap_samples (session_id, id)`.execute(db);
  await db.schema
    .createTable('tap_sessions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('destination_id', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .addColumn('max_events', 'integer', (c) => c.notNull())
    .addColumn('created_by', 'integer')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await sql`create index tap_sessions_destination on tap_sessions (destination_id, expires_at)`.execute(db);
}
