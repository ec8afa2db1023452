import { sql, type Kysely } from 'kysely';

// Identity and access: organizations, users and their sessions, service accounts, API
// tokens, the hash-chained audit trail, licenses, and integrations (the first
// organization-scoped resource).
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('organizations')
    .addColumn('id', 'serial', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('is_active', 'boolean', (c) => c.notNull().defaultTo(true))
    .addColumn('retention_days', 'integer', (c) => c.notNull().defaultTo(7))
    .addColumn('case_customer_id', 'text')
    .addColumn('partner_tenant_ids', 'jsonb', (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await sql`create unique index organizations_name on organizations (lower(name))`.execute(db);
  await sql`create unique index organizations_case_customer on organizations (case_customer_id) where case_customer_id is not null`.execute(
    db,
  );

  await db.schema
    .createTable('users')
    .addColumn('id', 'serial', (c) => c.primaryKey())
    .addColumn('username', 'text', (c) => c.notNull())
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('password_hash', 'text', (c) => c.notNull())
    .addColumn('role', 'text', (c) => c.notNull())
    .addColumn('organization_id', 'integer', (c) => c.references('organizations.id').onDelete('cascade'))
    .addColumn('is_active', 'boolean', (c) => c.notNull().defaultTo(true))
    .addColumn('display_name', 'text')
    .addColumn('locale', 'text', (c) => c.notNull().defaultTo('en'))
    .addColumn('password_changed_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('last_login_at', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await sql`create unique index users_username on users (lower(username))`.execute(db);
  await sql`create index users_organization on users (organization_id)`.execute(db);

  await db.schema
    .createTable('sessions')
    // SHA-256 of the cookie value: a stolen table does not yield usable sessions.
    .addColumn('id_hash', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('last_seen_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .addColumn('ip', 'text')
    .addColumn('user_agent', 'text')
    .execute();
  await sql`create index sessions_user on sessions (user_id)`.execute(db);

  await db.schema
    .createTable('service_accounts')
    .addColumn('id', 'serial', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('role', 'text', (c) => c.notNull())
    .addColumn('organization_id', 'integer', (c) => c.references('organizations.id').onDelete('cascade'))
    .addColumn('is_active', 'boolean', (c) => c.notNull().defaultTo(true))
    .addColumn('created_by', 'integer')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();

  await db.schema
    .createTable('api_tokens')
    .addColumn('id', 'serial', (c) => c.primaryKey())
    .addColumn('user_id', 'integer', (c) => c.references('users.id').onDelete('cascade'))
    .addColumn('service_account_id', 'integer', (c) => c.references('service_accounts.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('token_prefix', 'text', (c) => c.notNull())
    // HMAC-SHA-256(server key, token), hex: one indexed lookup per request.
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('scopes', 'jsonb')
    .addColumn('expires_at', 'timestamptz')
    .addColumn('is_eternal', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('last_used_at', 'timestamptz')
    .addColumn('revoked_at', 'timestamptz')
    .addCheckConstraint('api_tokens_one_owner', sql`(user_id is null) <> (service_account_id is null)`)
    .execute();
  // Names are unique per owner, revoked ones included (they stay reserved).
  await sql`create unique index api_tokens_user_name on api_tokens (user_id, name) where user_id is not null`.execute(
    db,
  );
  await sql`create unique index api_tokens_sa_name on api_tokens (service_account_id, name) where service_account_id is not null`.execute(
    db,
  );

  await db.schema
    .createTable('audit_log')
    // Gapless sequence assigned under the chain-head lock; ids from a sequence could
    // skip on rollback and hide a deleted row.
    .addColumn('seq', 'bigint', (c) => c.primaryKey())
    .addColumn('at', 'timestamptz', (c) => c.notNull())
    .addColumn('actor_kind', 'text', (c) => c.notNull())
    .addColumn('actor_id', 'integer')
    .addColumn('actor_name', 'text')
    .addColumn('organization_id', 'integer')
    .addColumn('operation_id', 'text', (c) => c.notNull())
    .addColumn('method', 'text', (c) => c.notNull())
    .addColumn('path', 'text', (c) => c.notNull())
    .addColumn('target_type', 'text')
    .addColumn('target_id', 'text')
    .addColumn('outcome', 'text', (c) => c.notNull())
    .addColumn('status', 'integer', (c) => c.notNull())
    .addColumn('error_code', 'text')
    .addColumn('correlation_id', 'text', (c) => c.notNull())
    .addColumn('details', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn('prev_hash', 'text', (c) => c.notNull())
    .addColumn('hash', 'text', (c) => c.notNull())
    .execute();
  await sql`create index audit_log_at on audit_log (at)`.execute(db);
  await sql`create index audit_log_actor on audit_log (actor_kind, actor_id, seq)`.execute(db);
  await sql`create index audit_log_org on audit_log (organization_id, seq)`.execute(db);

  await db.schema
    .createTable('audit_chain_head')
    .addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('seq', 'bigint', (c) => c.notNull())
    .addColumn('hash', 'text', (c) => c.notNull())
    .execute();
  await sql`insert into audit_chain_head (id, seq, hash) values (1, 0, ${'0'.repeat(64)})`.execute(db);

  await db.schema
    .createTable('licenses')
    .addColumn('id', 'serial', (c) => c.primaryKey())
    .addColumn('token', 'text', (c) => c.notNull())
    .addColumn('edition', 'text', (c) => c.notNull())
    .addColumn('claims', 'jsonb', (c) => c.notNull())
    .addColumn('activated_by', 'integer')
    .addColumn('activated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('removed_at', 'timestamptz')
    .execute();

  await db.schema
    .createTable('integrations')
    .addColumn('id', 'serial', (c) => c.primaryKey())
    .addColumn('organization_id', 'integer', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('platform', 'text', (c) => c.notNull())
    .addColumn('is_active', 'boolean', (c) => c.notNull().defaultTo(true))
    .addColumn('parent_id', 'integer', (c) => c.references('integrations.id').onDelete('cascade'))
    .addColumn('config', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await sql`create unique index integrations_org_name on integrations (organization_id, lower(name))`.execute(db);
  await sql`create index integrations_parent on integrations (parent_id) where parent_id is not null`.execute(db);

  await db.schema
    .createTable('org_data_deletions')
    .addColumn('id', 'uuid', (c) => c.primaryKey())
    .addColumn('organization_id', 'integer', (c) => c.notNull())
    .addColumn('requested_by', 'integer')
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('detail', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('finished_at', 'timestamptz')
    .execute();
}
