import { sql, type Kysely } from 'kysely';

// Pull collection: encrypted connector secrets on integrations, per-stream collector state
// (cursor, watermark, failures), the deduplication keys of collected events, cycle history
// and vendor API usage, backfill jobs, managed-provider tenants, connection-test history,
// global collector settings and live capture. docs/collection.md explains how they fit.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('integrations')
    // base64(iv | tag | AES-256-GCM) of {path: value} of the platform's secret fields; the
    // integration id is the associated data. config keeps {"configured": true} in their place.
    .addColumn('secrets', 'text')
    .addColumn('secrets_key_id', 'text')
    // {streams: string[] | null, exclude: condition[]}: what collection fetches and drops at the source.
    .addColumn('collection_filters', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    // Managed-provider parents: which discovered tenants are selected automatically.
    .addColumn('auto_approve_policy', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    // A child of a managed-provider parent collects this customer tenant with the parent's credentials.
    .addColumn('external_tenant_id', 'text')
    .execute();

  await db.schema
    .createTable('collector_state')
    .addColumn('integration_id', 'integer', (c) => c.notNull().references('integrations.id').onDelete('cascade'))
    .addColumn('stream', 'text', (c) => c.notNull())
    .addColumn('organization_id', 'integer', (c) => c.notNull())
    // The connector's resume point (opaque to everything else); null = start from the default window.
    .addColumn('cursor', 'text')
    // Date cursors: everything up to here has been durably accepted. Null for opaque cursors.
    .addColumn('watermark_at', 'timestamptz')
    .addColumn('last_run_at', 'timestamptz')
    .addColumn('last_success_at', 'timestamptz')
    .addColumn('consecutive_failures', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('last_run_capped', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('last_error', 'text')
    .addColumn('last_error_at', 'timestamptz')
    .addColumn('last_events', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('last_duration_ms', 'integer')
    .addColumn('events_total', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('cycles_skipped_locked', 'bigint', (c) => c.notNull().defaultTo(0))
    // When the beat next enqueues a cycle; retry backoff and Retry-After move it later.
    .addColumn('next_run_at', 'timestamptz')
    // A window the vendor no longer holds: the watermark had fallen behind its retention.
    .addColumn('gap_from', 'timestamptz')
    .addColumn('gap_to', 'timestamptz')
    .addColumn('gap_detected_at', 'timestamptz')
    .addColumn('reset_at', 'timestamptz')
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('collector_state_pk', ['integration_id', 'stream'])
    .execute();
  await sql`create index collector_state_org on collector_state (organization_id)`.execute(db);
  await sql`create index collector_state_due on collector_state (next_run_at)`.execute(db);

  // Vendor event keys seen per stream, for the deduplication period: the normalization stage
  // drops a collected event whose key is here (re-fetched after a crash, a cursor reset or a
  // backfill overlapping live collection) and counts it in stream_counters.duplicates.
  await db.schema
    .createTable('collected_keys')
    .addColumn('integration_id', 'integer', (c) => c.notNull().references('integrations.id').onDelete('cascade'))
    .addColumn('stream', 'text', (c) => c.notNull())
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('seen_at', 'timestamptz', (c) => c.notNull())
    .addPrimaryKeyConstraint('collected_keys_pk', ['integration_id', 'stream', 'key'])
    .execute();
  await sql`create index collected_keys_seen on collected_keys (seen_at)`.execute(db);
  await db.schema
    .alterTable('stream_counters')
    .addColumn('duplicates', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute();

  // One row per collection task (scheduled cycle or trigger): its outcome, for history and triggers' task ids.
  await db.schema
    .createTable('collector_runs')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'integer', (c) => c.notNull())
    .addColumn('integration_id', 'integer', (c) => c.notNull().references('integrations.id').onDelete('cascade'))
    .addColumn('stream', 'text', (c) => c.notNull())
    // 'schedule' | 'trigger'
    .addColumn('reason', 'text', (c) => c.notNull())
    // queued | running | succeeded | failed | skipped_locked
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('requested_by', 'integer')
    .addColumn('pages', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('events', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('capped', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('error', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('started_at', 'timestamptz')
    .addColumn('finished_at', 'timestamptz')
    .execute();
  await sql`create index collector_runs_stream on collector_runs (integration_id, stream, created_at desc)`.execute(db);
  await sql`create index collector_runs_created on collector_runs (created_at)`.execute(db);

  // Vendor API usage per integration, stream and UTC day (cost summary).
  await db.schema
    .createTable('collector_usage')
    .addColumn('organization_id', 'integer', (c) => c.notNull())
    .addColumn('integration_id', 'integer', (c) => c.notNull().references('integrations.id').onDelete('cascade'))
    .addColumn('stream', 'text', (c) => c.notNull())
    .addColumn('day', 'text', (c) => c.notNull())
    .addColumn('requests', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('rate_limited', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('errors', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('pages', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('events', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('filtered', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('bytes', 'bigint', (c) => c.notNull().defaultTo(0))
    .addPrimaryKeyConstraint('collector_usage_pk', ['integration_id', 'stream', 'day'])
    .execute();

  await db.schema
    .createTable('backfill_jobs')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'integer', (c) => c.notNull())
    .addColumn('integration_id', 'integer', (c) => c.notNull().references('integrations.id').onDelete('cascade'))
    .addColumn('streams', 'jsonb', (c) => c.notNull())
    .addColumn('from_ts', 'timestamptz', (c) => c.notNull())
    .addColumn('to_ts', 'timestamptz', (c) => c.notNull())
    // queued | running | completed | failed | cancelled
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('cancel_requested', 'boolean', (c) => c.notNull().defaultTo(false))
    // Per stream: {cursor, chunk_from, chunk_to, events, pages, done, clamped_from}
    .addColumn('progress', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn('events', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('pages', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('warnings', 'jsonb', (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .addColumn('error', 'text')
    .addColumn('created_by', 'integer')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('started_at', 'timestamptz')
    .addColumn('finished_at', 'timestamptz')
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
    // Queued again after a vendor's long Retry-After: when it resumes (so it is not reported as stuck meanwhile).
    .addColumn('resume_at', 'timestamptz')
    .execute();
  await sql`create index backfill_jobs_integration on backfill_jobs (integration_id, created_at desc)`.execute(db);
  // The broker each process uses (platform/queue/identity.ts, no credentials): backfill diagnostics compare them.
  await db.schema.alterTable('process_heartbeats').addColumn('broker', 'text').execute();

  // Tenants a managed-provider parent can see at its vendor (partner relationships).
  await db.schema
    .createTable('discovered_tenants')
    .addColumn('integration_id', 'integer', (c) => c.notNull().references('integrations.id').onDelete('cascade'))
    .addColumn('external_id', 'text', (c) => c.notNull())
    .addColumn('organization_id', 'integer', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('domain', 'text')
    .addColumn('details', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn('selected', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('selected_at', 'timestamptz')
    // The child integration that collects it, once materialized (Enterprise).
    .addColumn('child_integration_id', 'integer', (c) => c.references('integrations.id').onDelete('set null'))
    .addColumn('first_seen_at', 'timestamptz', (c) => c.notNull())
    .addColumn('last_seen_at', 'timestamptz', (c) => c.notNull())
    // false when the last discovery no longer listed it.
    .addColumn('present', 'boolean', (c) => c.notNull().defaultTo(true))
    .addPrimaryKeyConstraint('discovered_tenants_pk', ['integration_id', 'external_id'])
    .execute();
  await db.schema
    .createTable('tenant_syncs')
    .addColumn('integration_id', 'integer', (c) => c.primaryKey().references('integrations.id').onDelete('cascade'))
    .addColumn('organization_id', 'integer', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('discovered', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('materialized', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('error', 'text')
    .addColumn('warning', 'text')
    .addColumn('synced_at', 'timestamptz', (c) => c.notNull())
    .execute();

  // Results of test-connection, newest first: the integration's health history.
  await db.schema
    .createTable('integration_checks')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'integer', (c) => c.notNull())
    .addColumn('integration_id', 'integer', (c) => c.notNull().references('integrations.id').onDelete('cascade'))
    .addColumn('ok', 'boolean', (c) => c.notNull())
    .addColumn('status', 'integer')
    .addColumn('latency_ms', 'integer', (c) => c.notNull())
    .addColumn('detail', 'text', (c) => c.notNull())
    .addColumn('checked_by', 'integer')
    .addColumn('checked_at', 'timestamptz', (c) => c.notNull())
    .execute();
  await sql`create index integration_checks_integration on integration_checks (integration_id, checked_at desc)`.execute(
    db,
  );

  // Global collector settings (one row, id 1): written with global scope only.
  await db.schema
    .createTable('collector_settings')
    .addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('settings', 'jsonb', (c) => c.notNull())
    .addColumn('updated_by', 'integer')
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('capture_sessions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'integer', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('integration_id', 'integer', (c) => c.notNull().references('integrations.id').onDelete('cascade'))
    // null: every stream of the integration.
    .addColumn('stream', 'text')
    // active | stopped | expired | full
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('max_events', 'integer', (c) => c.notNull())
    .addColumn('events_captured', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_by', 'integer')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .addColumn('stopped_at', 'timestamptz')
    .execute();
  await sql`create index capture_sessions_active on capture_sessions (integration_id) where status = 'active'`.execute(
    db,
  );
  await db.schema
    .createTable('capture_events')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('session_id', 'text', (c) => c.notNull().references('capture_sessions.id').onDelete('cascade'))
    .addColumn('organization_id', 'integer', (c) => c.notNull())
    .addColumn('integration_id', 'integer', (c) => c.notNull())
    .addColumn('stream', 'text', (c) => c.notNull())
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('raw', 'jsonb', (c) => c.notNull())
    .addColumn('bytes', 'integer', (c) => c.notNull())
    .addColumn('captured_at', 'timestamptz', (c) => c.notNull())
    .execute();
  await sql`create index capture_events_session on capture_events (session_id, captured_at, id)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of [
    'capture_events',
    'capture_sessions',
    'collector_settings',
    'integration_checks',
    'tenant_syncs',
    'discovered_tenants',
    'backfill_jobs',
    'collector_usage',
    'collector_runs',
    'collected_keys',
    'collector_state',
  ]) {
    await db.schema.dropTable(table).ifExists().execute();
  }
  await db.schema.alterTable('stream_counters').dropColumn('duplicates').execute();
  await db.schema.alterTable('process_heartbeats').dropColumn('broker').execute();
  await db.schema
    .alterTable('integrations')
    .dropColumn('secrets')
    .dropColumn('secrets_key_id')
    .dropColumn('collection_filters')
    .dropColumn('auto_approve_policy')
    .dropColumn('external_tenant_id')
    .execute();
}
