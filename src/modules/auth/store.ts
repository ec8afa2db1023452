import { sql, type Kysely, type Selectable } from 'kysely';
import type { Scope } from '../../core/scope.js';
import { executor } from '../../platform/db/ambient.js';
import type { DB } from '../../platform/db/index.js';
import type { UsersTable } from '../../platform/db/schema.js';
import { scoped } from '../../platform/db/scope.js';

export type UserRow = Selectable<UsersTable>;
type NewUser = { username: string; email: string; password_hash: string; role: string; organization_id: number | null };

// Arbitrary constant key of the advisory lock that serializes platform-administration changes.
const ADMINISTRATION_LOCK = 0x7765_6972_0001;

export function createUserStore(db: Kysely<DB>) {
  const q = () => executor(db);
  return {
    count: async () =>
      Number(
        (
          await q()
            .selectFrom('users')
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      ),
    byUsername: (username: string) =>
      q()
        .selectFrom('users')
        .selectAll()
        .where((eb) => eb(eb.fn('lower', ['username']), '=', username.toLowerCase()))
        .executeTakeFirst(),
    byId: (id: number) => q().selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst(),
    /** A user the scope may see: platform users only for a global scope. */
    inScope: (scope: Scope, id: number) =>
      q()
        .selectFrom('users')
        .selectAll()
        .where('id', '=', id)
        .where(scoped(scope, 'users.organization_id'))
        .executeTakeFirst(),
    list: (scope: Scope, filter: { organizationId?: number } = {}) => {
      let s = q().selectFrom('users').selectAll().where(scoped(scope, 'users.organization_id'));
      if (filter.organizationId !== undefined) s = s.where('organization_id', '=', filter.organizationId);
      return s.orderBy('id').execute();
    },
    insert: (values: NewUser) => q().insertInto('users').values(values).returningAll().executeTakeFirstOrThrow(),
    /** Inserts unless the username is taken in any letter case (then undefined, transaction intact). */
    insertUnique: (values: NewUser) =>
      q()
        .insertInto('users')
        .values(values)
        .onConflict((oc) => oc.expression(sql`lower(username)`).doNothing())
        .returningAll()
        .executeTakeFirst(),
    /**
     * Serializes changes to who administers the platform (bootstrap, last-admin checks)
     * until the current transaction ends.
     */
    lockAdministration: async () => {
      await sql`select pg_advisory_xact_lock(${ADMINISTRATION_LOCK}::bigint)`.execute(q());
    },
    /** Active platform (no organization) admins other than `exceptId`. */
    otherPlatformAdmins: async (exceptId: number) =>
      Number(
        (
          await q()
            .selectFrom('users')
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .where('organization_id', 'is', null)
            .where('role', '=', 'admin')
            .where('is_active', '=', true)
            .where('id', '<>', exceptId)
            .executeTakeFirstOrThrow()
        ).n,
      ),
    update: (
      id: number,
      values: Partial<
        Pick<
          UserRow,
          | 'email'
          | 'role'
          | 'is_active'
          | 'password_hash'
          | 'display_name'
          | 'locale'
          | 'password_changed_at'
          | 'last_login_at'
        >
      >,
    ) =>
      q()
        .updateTable('users')
        .set({ ...values, updated_at: new Date() })
        .where('id', '=', id)
        .returningAll()
        .executeTakeFirst(),
    remove: async (id: number) =>
      Number((await q().deleteFrom('users').where('id', '=', id).executeTakeFirst()).numDeletedRows),
  };
}

export function createSessionStore(db: Kysely<DB>) {
  const q = () => executor(db);
  return {
    insert: (values: {
      id_hash: string;
      user_id: number;
      expires_at: Date;
      ip: string | null;
      user_agent: string | null;
    }) => q().insertInto('sessions').values(values).execute(),
    withUser: (idHash: string) =>
      q()
        .selectFrom('sessions')
        .innerJoin('users', 'users.id', 'sessions.user_id')
        .leftJoin('organizations', 'organizations.id', 'users.organization_id')
        .select([
          'sessions.id_hash',
          'sessions.user_id',
          'sessions.created_at',
          'sessions.last_seen_at',
          'sessions.expires_at',
          'users.username',
          'users.role',
          'users.organization_id',
          'users.is_active',
        ])
        .select((eb) => eb.fn.coalesce('organizations.is_active', eb.val(true)).as('organization_active'))
        .where('sessions.id_hash', '=', idHash)
        .executeTakeFirst(),
    touch: (idHash: string, lastSeen: Date, expiresAt: Date) =>
      q()
        .updateTable('sessions')
        .set({ last_seen_at: lastSeen, expires_at: expiresAt })
        .where('id_hash', '=', idHash)
        .execute(),
    remove: (idHash: string) => q().deleteFrom('sessions').where('id_hash', '=', idHash).execute(),
    removeOthers: async (userId: number, keep: string | null) => {
      let d = q().deleteFrom('sessions').where('user_id', '=', userId);
      if (keep) d = d.where('id_hash', '<>', keep);
      return Number((await d.executeTakeFirst()).numDeletedRows);
    },
    pruneExpired: async (now: Date) =>
      Number((await q().deleteFrom('sessions').where('expires_at', '<', now).executeTakeFirst()).numDeletedRows),
  };
}

/** Read-only look-ups of what a caller is attached to (organizations, its service account). */
export function createDirectoryStore(db: Kysely<DB>) {
  const q = () => executor(db);
  return {
    organization: (id: number) =>
      q().selectFrom('organizations').select(['id', 'name', 'is_active']).where('id', '=', id).executeTakeFirst(),
    organizationInScope: (scope: Scope, id: number) =>
      q()
        .selectFrom('organizations')
        .select(['id', 'name'])
        .where('id', '=', id)
        .where(scoped(scope, 'organizations.id'))
        .executeTakeFirst(),
    organizations: (scope: Scope) =>
      q()
        .selectFrom('organizations')
        .select(['id', 'name'])
        .where(scoped(scope, 'organizations.id'))
        .orderBy('id')
        .execute(),
    serviceAccount: (id: number) =>
      q()
        .selectFrom('service_accounts')
        .select(['id', 'name', 'role', 'organization_id', 'is_active', 'created_at'])
        .where('id', '=', id)
        .executeTakeFirst(),
  };
}

export type UserStore = ReturnType<typeof createUserStore>;
export type DirectoryStore = ReturnType<typeof createDirectoryStore>;
export type SessionStore = ReturnType<typeof createSessionStore>;
