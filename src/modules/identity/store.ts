import { sql, type Kysely, type Selectable } from 'kysely';
import { executor } from '../../platform/db/ambient.js';
import type { DB } from '../../platform/db/index.js';
import type { IdentityConfigTable, IdentitySyncRunsTable, UsersTable } from '../../platform/db/schema.js';

export type ConfigRow = Selectable<IdentityConfigTable>;
export type SyncRunRow = Selectable<IdentitySyncRunsTable>;
export type SsoUserRow = Selectable<UsersTable>;

export type ConfigValues = Omit<ConfigRow, 'id' | 'updated_at' | 'scopes' | 'rules'> & {
  scopes: string[];
  rules: unknown[];
};

/** An SSO user's password hash: not an argon2 hash, so no password ever matches it. */
export const NO_PASSWORD = '!sso';

export function createIdentityStore(db: Kysely<DB>) {
  const q = () => executor(db);
  return {
    config: () => q().selectFrom('identity_config').selectAll().where('id', '=', 1).executeTakeFirst(),
    saveConfig: (values: ConfigValues) => {
      const row = {
        ...values,
        scopes: JSON.stringify(values.scopes),
        rules: JSON.stringify(values.rules),
        updated_at: new Date(),
      };
      return q()
        .insertInto('identity_config')
        .values({ id: 1, ...row })
        .onConflict((oc) => oc.column('id').doUpdateSet(row))
        .returningAll()
        .executeTakeFirstOrThrow();
    },
    organizations: async (ids: number[]) =>
      ids.length === 0
        ? []
        : q().selectFrom('organizations').select(['id', 'is_active']).where('id', 'in', ids).execute(),

    // Pending logins.
    insertState: (values: {
      state_hash: string;
      nonce: string;
      code_verifier: string;
      return_to: string;
      expires_at: Date;
    }) => q().insertInto('sso_login_states').values(values).execute(),
    /** Removes and answers the pending login: a state is usable once, whoever asks first. */
    takeState: (stateHash: string) =>
      q().deleteFrom('sso_login_states').where('state_hash', '=', stateHash).returningAll().executeTakeFirst(),
    pruneStates: async (now: Date) =>
      Number(
        (await q().deleteFrom('sso_login_states').where('expires_at', '<', now).executeTakeFirst()).numDeletedRows,
      ),

    // SSO users.
    userBySso: (issuer: string, subject: string) =>
      q()
        .selectFrom('users')
        .selectAll()
        .where('sso_issuer', '=', issuer)
        .where('sso_subject', '=', subject)
        .executeTakeFirst(),
    userByUsername: (username: string) =>
      q()
        .selectFrom('users')
        .selectAll()
        .where((eb) => eb(eb.fn('lower', ['username']), '=', username.toLowerCase()))
        .executeTakeFirst(),
    insertUser: (values: {
      username: string;
      email: string;
      role: string;
      organization_id: number | null;
      sso_issuer: string;
      sso_subject: string;
      claims: unknown;
      now: Date;
    }) =>
      q()
        .insertInto('users')
        .values({
          username: values.username,
          email: values.email,
          password_hash: NO_PASSWORD,
          role: values.role,
          organization_id: values.organization_id,
          sso_issuer: values.sso_issuer,
          sso_subject: values.sso_subject,
          sso_claims: JSON.stringify(values.claims),
          last_login_at: values.now,
        })
        .onConflict((oc) => oc.expression(sql`lower(username)`).doNothing())
        .returningAll()
        .executeTakeFirst(),
    updateUser: (
      id: number,
      values: {
        email?: string;
        role?: string;
        organization_id?: number | null;
        is_active?: boolean;
        claims?: unknown;
        last_login_at?: Date;
      },
    ) => {
      const { claims, ...rest } = values;
      return q()
        .updateTable('users')
        .set({
          ...rest,
          ...(claims !== undefined ? { sso_claims: JSON.stringify(claims) } : {}),
          updated_at: new Date(),
        })
        .where('id', '=', id)
        .returningAll()
        .executeTakeFirstOrThrow();
    },
    ssoUsers: (issuer: string) =>
      q()
        .selectFrom('users')
        .selectAll()
        .where('sso_issuer', '=', issuer)
        .where('sso_subject', 'is not', null)
        .orderBy('id')
        .execute(),
    firstUserId: async () =>
      (
        await q()
          .selectFrom('users')
          .select((eb) => eb.fn.min<number>('id').as('id'))
          .executeTakeFirst()
      )?.id ?? null,

    // Sync runs.
    /** undefined when another run is queued or running (the partial unique index). */
    insertRun: (values: { id: string; source: string; requested_by: number | null }) =>
      q()
        .insertInto('identity_sync_runs')
        .values({ ...values, status: 'queued' })
        .onConflict((oc) =>
          oc
            .expression(sql`(true)`)
            .where(sql<boolean>`status in ('queued', 'running')`)
            .doNothing(),
        )
        .returningAll()
        .executeTakeFirst(),
    run: (id: string) => q().selectFrom('identity_sync_runs').selectAll().where('id', '=', id).executeTakeFirst(),
    activeRun: () =>
      q().selectFrom('identity_sync_runs').selectAll().where('status', 'in', ['queued', 'running']).executeTakeFirst(),
    lastFinishedRun: () =>
      q()
        .selectFrom('identity_sync_runs')
        .selectAll()
        .where('status', 'in', ['succeeded', 'failed'])
        .orderBy('finished_at', 'desc')
        .orderBy('created_at', 'desc')
        .limit(1)
        .executeTakeFirst(),
    updateRun: (
      id: string,
      values: Partial<{
        status: string;
        seen: number;
        total: number | null;
        result: unknown;
        error: string | null;
        started_at: Date;
        finished_at: Date;
      }>,
    ) => {
      const { result, ...rest } = values;
      return q()
        .updateTable('identity_sync_runs')
        .set({ ...rest, ...(result !== undefined ? { result: JSON.stringify(result) } : {}) })
        .where('id', '=', id)
        .execute();
    },
  };
}

export type IdentityStore = ReturnType<typeof createIdentityStore>;
