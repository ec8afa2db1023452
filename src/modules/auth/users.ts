// User administration (user.manage), scoped like every other resource: an organization
// admin sees and changes only the users of its organizations; platform users (no
// organization) exist only for a global caller. Outside scope is 404, never 403.
import type { Actor } from '../../core/actor.js';
import type { Clock } from '../../core/clock.js';
import { AppError, errors } from '../../core/errors.js';
import type { RoleName } from '../../core/roles.js';
import { scopeOf } from '../../core/scope.js';
import { setAuditTarget } from '../audit/service.js';
import type { TokenService } from '../tokens/service.js';
import { hashPassword } from './passwords.js';
import { toUser, type UserView } from './service.js';
import type { SessionService } from './sessions.js';
import type { DirectoryStore, UserRow, UserStore } from './store.js';

export interface UserAdminDeps {
  users: UserStore;
  directory: DirectoryStore;
  sessions: SessionService;
  tokens: Pick<TokenService, 'invalidateOwner'>;
  clock: Clock;
}

export interface CreateUserInput {
  username: string;
  password: string;
  email: string;
  role: RoleName;
  organization_id?: number;
}

export interface UpdateUserInput {
  role?: RoleName;
  is_active?: boolean;
  email?: string;
  password?: string;
}

const isPlatformAdmin = (u: UserRow) => u.organization_id === null && u.role === 'admin' && u.is_active;

export function createUserAdmin(deps: UserAdminDeps) {
  const { users, directory, sessions, tokens, clock } = deps;
  const taken = (username: string) =>
    new AppError('auth.username_taken', { detail: `The username "${username}" is already taken` });

  async function found(actor: Actor, id: number): Promise<UserRow> {
    setAuditTarget({ type: 'user', id });
    const row = await users.inScope(scopeOf(actor), id);
    if (!row) throw errors.notFound('User');
    return row;
  }

  /** Refuses a change that would leave the platform without an active administrator. */
  async function keepOnePlatformAdmin(row: UserRow): Promise<void> {
    await users.lockAdministration();
    if ((await users.otherPlatformAdmins(row.id)) === 0) {
      throw new AppError('auth.last_platform_admin', {
        detail: `${row.username} is the last active platform administrator; make another one first`,
      });
    }
  }

  return {
    async list(actor: Actor, filter: { organizationId?: number }): Promise<UserView[]> {
      return (await users.list(scopeOf(actor), filter)).map(toUser);
    },

    async create(actor: Actor, input: CreateUserInput): Promise<UserView> {
      const organizationId = input.organization_id ?? null;
      setAuditTarget({ type: 'user', organizationId, details: { username: input.username, role: input.role } });
      if (organizationId === null) {
        if (!actor.global) {
          throw errors.forbidden(
            'Only a caller with platform (global) scope may create a platform user; send organization_id',
          );
        }
      } else if (!(await directory.organizationInScope(scopeOf(actor), organizationId))) {
        throw errors.notFound('Organization');
      }
      // Checked before hashing; the insert below settles a race on the unique index.
      if (await users.byUsername(input.username)) throw taken(input.username);
      const password_hash = await hashPassword(input.password);
      const row = await users.insertUnique({
        username: input.username,
        email: input.email,
        password_hash,
        role: input.role,
        organization_id: organizationId,
      });
      if (!row) throw taken(input.username);
      setAuditTarget({ type: 'user', id: row.id, organizationId, details: { username: row.username, role: row.role } });
      return toUser(row);
    },

    /**
     * Role, activity, e-mail, password. A role change or deactivation takes effect on the
     * user's tokens at once; deactivation and a password reset end the user's sessions
     * (the caller's own current session excepted).
     */
    async update(actor: Actor, id: number, input: UpdateUserInput, sessionHash?: string): Promise<UserView> {
      const row = await found(actor, id);
      const deactivates = input.is_active === false && row.is_active;
      const roleChanges = input.role !== undefined && input.role !== row.role;
      if (isPlatformAdmin(row) && (deactivates || (roleChanges && input.role !== 'admin')))
        await keepOnePlatformAdmin(row);

      const changes: Parameters<UserStore['update']>[1] = {};
      if (input.role !== undefined) changes.role = input.role;
      if (input.is_active !== undefined) changes.is_active = input.is_active;
      if (input.email !== undefined) changes.email = input.email;
      if (input.password !== undefined) {
        changes.password_hash = await hashPassword(input.password);
        changes.password_changed_at = clock.now();
      }
      const updated = Object.keys(changes).length ? await users.update(id, changes) : row;
      if (!updated) throw errors.notFound('User');

      if (roleChanges || input.is_active !== undefined) await tokens.invalidateOwner({ kind: 'user', id });
      if (deactivates || input.password !== undefined) {
        const keep = actor.kind === 'user' && actor.id === id && actor.via === 'session' ? (sessionHash ?? null) : null;
        await sessions.closeOthers(id, keep);
      }
      setAuditTarget({
        type: 'user',
        id,
        organizationId: row.organization_id,
        // Which fields changed, and the new role/state; never the password itself.
        details: {
          username: row.username,
          changed: Object.keys(input),
          ...(input.role !== undefined ? { role: input.role } : {}),
          ...(input.is_active !== undefined ? { is_active: input.is_active } : {}),
        },
      });
      return toUser(updated);
    },

    async remove(actor: Actor, id: number): Promise<void> {
      if (actor.kind === 'user' && actor.id === id) throw errors.invalid('You cannot delete your own account');
      const row = await found(actor, id);
      if (isPlatformAdmin(row)) await keepOnePlatformAdmin(row);
      // Before the delete: the token rows (and their hashes) go with the user.
      await tokens.invalidateOwner({ kind: 'user', id });
      await users.remove(id);
      setAuditTarget({ type: 'user', id, organizationId: row.organization_id, details: { username: row.username } });
    },
  };
}

export type UserAdmin = ReturnType<typeof createUserAdmin>;
