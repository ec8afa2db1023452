import { sql, type Kysely } from 'kysely';

// Single sign-on with OpenID Connect (docs/sso.md): the one identity configuration, the
// pending logins (state, nonce, PKCE verifier; single-use, a few minutes), the SSO identity
// of a user (issuer + subject, the claims of its last login), and the sync runs.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('identity_config')
    // One row: the platform has one identity provider.
    .addColumn('id', 'integer', (c) => c.primaryKey().check(sql`id = 1`))
    .addColumn('enabled', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('issuer', 'text', (c) => c.notNull())
    .addColumn('client_id', 'text', (c) => c.notNull())
    // base64(iv | tag | AES-256-GCM ciphertext); never leaves the server.
    .addColumn('client_secret', 'text')
    .addColumn('client_secret_key_id', 'text')
    .addColumn('scopes', 'jsonb', (c) => c.notNull())
    .addColumn('redirect_uri', 'text', (c) => c.notNull())
    .addColumn('username_claim', 'text', (c) => c.notNull())
    .addColumn('rules', 'jsonb', (c) => c.notNull())
    .addColumn('password_login_for_sso_users', 'boolean', (c) => c.notNull().defaultTo(true))
    .addColumn('scim_base_url', 'text')
    .addColumn('scim_token', 'text')
    .addColumn('scim_token_key_id', 'text')
    .addColumn('updated_by', 'integer')
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();

  await db.schema
    .createTable('sso_login_states')
    // SHA-256 of the state: a leaked table does not let anyone finish someone's login.
    .addColumn('state_hash', 'text', (c) => c.primaryKey())
    .addColumn('nonce', 'text', (c) => c.notNull())
    .addColumn('code_verifier', 'text', (c) => c.notNull())
    .addColumn('return_to', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await sql`create index sso_login_states_expiry on sso_login_states (expires_at)`.execute(db);

  await db.schema
    .alterTable('users')
    .addColumn('sso_issuer', 'text')
    .addColumn('sso_subject', 'text')
    .addColumn('sso_claims', 'jsonb')
    .execute();
  await sql`create unique index users_sso_identity on users (sso_issuer, sso_subject) where sso_subject is not null`.execute(
    db,
  );

  await db.schema
    .createTable('identity_sync_runs')
    .addColumn('id', 'text', (c) => c.primaryKey())
    // queued, running, succeeded, failed
    .addColumn('status', 'text', (c) => c.notNull())
    // scim or claims
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('seen', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('total', 'integer')
    .addColumn('result', 'jsonb')
    .addColumn('error', 'text')
    .addColumn('requested_by', 'integer')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('started_at', 'timestamptz')
    .addColumn('finished_at', 'timestamptz')
    .execute();
  // At most one run queued or running: a second request loses the race on this index.
  await sql`create unique index identity_sync_runs_one_active on identity_sync_runs ((true)) where status in ('queued', 'running')`.execute(
    db,
  );
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('identity_sync_runs').execute();
  await sql`drop index users_sso_identity`.execute(db);
  await db.schema
    .alterTable('users')
    .dropColumn('sso_issuer')
    .dropColumn('sso_subject')
    .dropColumn('sso_claims')
    .execute();
  await db.schema.dropTable('sso_login_states').execute();
  await db.schema.dropTable('identity_config').execute();
}
