import { sql, type Kysely } from 'kysely';

// Enrichment (docs/enrichment.md): versioned lookup tables, sources (uploaded MaxMind
// databases, HTTP lookup APIs, indicator feeds), versioned policies, the per-policy live
// series (three hours) and the activity of the family.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('enrichment_tables')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'integer', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('key_column', 'text', (c) => c.notNull())
    .addColumn('match', 'text', (c) => c.notNull())
    // The live version (its number and row); a rollback writes a new version.
    .addColumn('version', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('live_version_id', 'text')
    .addColumn('row_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_by', 'integer')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await sql`create unique index enrichment_tables_name on enrichment_tables (organization_id, lower(name))`.execute(db);

  await db.schema
    .createTable('enrichment_table_versions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('table_id', 'text', (c) => c.notNull().references('enrichment_tables.id').onDelete('cascade'))
    .addColumn('version', 'integer', (c) => c.notNull())
    // create, replace, patch, rollback, feed
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('row_count', 'integer', (c) => c.notNull())
    .addColumn('columns', 'jsonb', (c) => c.notNull())
    // base64(gzip(encoded table)): the whole table at this version, patches applied.
    .addColumn('data', 'text', (c) => c.notNull())
    .addColumn('checksum', 'text', (c) => c.notNull())
    .addColumn('comment', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('created_by', 'integer')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addUniqueConstraint('enrichment_table_versions_number', ['table_id', 'version'])
    .execute();

  await db.schema
    .createTable('enrichment_sources')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'integer', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('config', 'jsonb', (c) => c.notNull())
    // base64(iv | tag | AES-256-GCM ciphertext), the source id as associated data. Never leaves the server.
    .addColumn('credential', 'text')
    .addColumn('credential_key_id', 'text')
    // Usable by every organization's policies (Enterprise).
    .addColumn('shared', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('enabled', 'boolean', (c) => c.notNull().defaultTo(true))
    // An uploaded MaxMind database: base64 of the file, and what its metadata says.
    .addColumn('blob', 'text')
    .addColumn('blob_info', 'jsonb')
    // A feed's table (the table its fetches write versions of).
    .addColumn('table_id', 'text')
    // Last fetch or call: at, ok, status, error, etag, last_modified, rows.
    .addColumn('status', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn('next_fetch_at', 'timestamptz')
    .addColumn('version', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('created_by', 'integer')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await sql`create unique index enrichment_sources_name on enrichment_sources (organization_id, lower(name))`.execute(
    db,
  );

  await db.schema
    .createTable('enrichment_policies')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'integer', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('enabled', 'boolean', (c) => c.notNull().defaultTo(true))
    .addColumn('version', 'integer', (c) => c.notNull().defaultTo(1))
    // The live definition (a copy of its version's), read by the pass.
    .addColumn('definition', 'jsonb', (c) => c.notNull())
    .addColumn('created_by', 'integer')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await sql`create unique index enrichment_policies_name on enrichment_policies (organization_id, lower(name))`.execute(
    db,
  );
  await sql`create index enrichment_policies_updated on enrichment_policies (organization_id, updated_at)`.execute(db);

  await db.schema
    .createTable('enrichment_policy_versions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('policy_id', 'text', (c) => c.notNull().references('enrichment_policies.id').onDelete('cascade'))
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('definition', 'jsonb', (c) => c.notNull())
    .addColumn('comment', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('created_by', 'integer')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addUniqueConstraint('enrichment_policy_versions_number', ['policy_id', 'version'])
    .execute();

  // The live series: one row per policy and minute, added to by every batch's transaction.
  await db.schema
    .createTable('enrichment_metrics')
    .addColumn('policy_id', 'text', (c) => c.notNull())
    .addColumn('minute', 'timestamptz', (c) => c.notNull())
    .addColumn('organization_id', 'integer', (c) => c.notNull())
    .addColumn('seen', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('hits', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('misses', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('errors', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('unanswered', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('micros', 'bigint', (c) => c.notNull().defaultTo(0))
    .addPrimaryKeyConstraint('enrichment_metrics_pk', ['policy_id', 'minute'])
    .execute();
  await sql`create index enrichment_metrics_org on enrichment_metrics (organization_id, minute)`.execute(db);

  await db.schema
    .createTable('enrichment_activity')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'integer', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('at', 'timestamptz', (c) => c.notNull())
    // table.created, policy.version, source.fetch_failed, source.error, ...
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('subject_type', 'text', (c) => c.notNull())
    .addColumn('subject_id', 'text', (c) => c.notNull())
    .addColumn('message', 'text', (c) => c.notNull())
    .addColumn('actor_id', 'integer')
    .execute();
  await sql`create index enrichment_activity_org on enrichment_activity (organization_id, at desc)`.execute(db);
}
