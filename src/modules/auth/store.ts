import type { Kysely, Selectable } from 'kysely';
import type { Scope } from '../../core/scope.js';
import { executor } from '../../platform/db/ambient.js';
import type { DB } from '../../platform/db/index.js';
import type { UsersTable } from '../../platform/db/schema.js';
import { scoped } from '../../platform/db/scope.js';

export type UserRow = Selectable<UsersTable>;

export function createUserStore(db: Kysely<DB>) {
  const q = () => executor(db);
  return {
    count: async () => Number((await q().selectFrom('users').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n),
    byUsername: (username: string) =>
      q().selectFrom('users').selectAll().where((eb) => eb(eb.fn('lower', ['username']), '=', username.toLowerCase())).executeTakeFirst(),
    byId: (id: number) => q().selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst(),
    /** A user the scope may see: platform users only for a global scope. */
    inScope: (scope: Scope, id: number) =>
      q().selectFrom('users').selectAll().where('id', '=', id).where(scoped(scope, 'users.organization_id')).executeTakeFirst(),
    list: (scope: Scope) => q().selectFrom('users').selectAll().where(scoped(scope, 'users.organization_id')).orderBy('id').execute(),
    insert: (values: { username: string; email: string; password_hash: string; role: string; organization_id: number | null }) =>
      q().insertInto('users').values(values).returningAll().executeTakeFirstOrThrow(),
    update: (id: number, values: Partial<Pick<UserRow, 'email' | 'role' | 'is_active' | 'password_hash' | 'display_name' | 'locale' | 'password_changed_at' | 'last_login_at'>>) =>
      q().updateTable('users').set({ ...values, updated_at: new Date() }).where('id', '=', id).returningAll().executeTakeFirst(),
    remove: async (id: number) => Number((await q().deleteFrom('users').where('id', '=', id).executeTakeFirst()).numDeletedRows),
  };
}

export function createSessionStore(db: Kysely<DB>) {
  const q = () => executor(db);
  return {
    insert: (values: { id_hash: string; user_id: number; expires_at: Date; ip: string | null; user_agent: string | null }) =>
      q().insertInto('sessions').values(values).execute(),
    withUser: (idHash: string) =>
      q()
        .selectFrom('sessions')
        .innerJoin('users', 'users.id', 'sessions.user_id')
        .select(['sessions.id_hash', 'sessions.user_id', 'sessions.created_at', 'sessions.last_seen_at', 'sessions.expires_at', 'users.username', 'users.role', 'users.organization_id', 'users.is_active'])
        .where('sessions.id_hash', '=', idHash)
        .executeTakeFirst(),
    touch: (idHash: string, lastSeen: Date, expiresAt: Date) =>
      q().updateTable('sessions').set({ last_seen_at: lastSeen, expires_at: expiresAt }).where('id_hash', '=', idHash).execute(),
    remove: (idHash: string) => q().deleteFrom('sessions').where('id_hash', '=', idHash).execute(),
    removeOthers: async (userId: number, keep: string | null) => {
      let d = q().deleteFrom('sessions').where('user_id', '=', userId);
      if (keep) d = d.where('id_hash', '<>', keep);
      return Number((await d.executeTakeFirst()).numDeletedRows);
    },
    pruneExpired: async (now: Date) => Number((await q().deleteFrom('sessions').where('expires_at', '<', now).executeTakeFirst()).numDeletedRows),
  };
}

export type UserStore = ReturnType<typeof createUserStore>;
export type SessionStore = ReturnType<typeof createSessionStore>;
