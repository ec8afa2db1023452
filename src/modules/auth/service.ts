// Signing in and the caller's own account: first-run bootstrap, password login with
// throttling, logout, and the `me` family. User administration lives in users.ts.
// Passwords never leave this file except as argon2id hashes; audit entries carry the
// username, never the password.
import type { Actor } from '../../core/actor.js';
import type { Clock } from '../../core/clock.js';
import { AppError } from '../../core/errors.js';
import { ROLE_PERMISSIONS, ROLES, type RoleName } from '../../core/roles.js';
import { scopeOf } from '../../core/scope.js';
import { rateLimited } from '../../platform/ratelimit/headers.js';
import type { RateDecision, RateLimiterPort } from '../../platform/ratelimit/port.js';
import { setAuditTarget } from '../audit/service.js';
import { actorFor } from '../tokens/service.js';
import { hashPassword, verifyPassword } from './passwords.js';
import { SESSION_MAX_AGE_MS, type SessionService } from './sessions.js';
import type { DirectoryStore, UserRow, UserStore } from './store.js';

export interface LoginLimits {
  perUsername: number;
  perAddress: number;
  windowMs: number;
}

export const DEFAULT_LOGIN_LIMITS: LoginLimits = { perUsername: 10, perAddress: 50, windowMs: 15 * 60_000 };
// Password changes by a signed-in caller: enough for typos, too few to guess a password.
const PASSWORD_CHANGE_LIMIT = { limit: 10, windowMs: 15 * 60_000 };

export interface AuthServiceDeps {
  users: UserStore;
  directory: DirectoryStore;
  sessions: SessionService;
  rateLimiter: RateLimiterPort;
  clock: Clock;
  loginLimits?: LoginLimits;
  /** Single sign-on's say on password login (modules/identity); absent: password only. */
  sso?: SsoPolicy;
}

export interface SsoPolicy {
  status(): Promise<{ enabled: boolean }>;
  passwordLoginAllowed(user: { id: number; sso_subject: string | null }): Promise<boolean>;
}

/** The user as the API shows it: never the password hash. */
export function toUser(row: UserRow) {
  return {
    id: row.id,
    username: row.username,
    email: row.email,
    role: row.role,
    organization_id: row.organization_id,
    is_active: row.is_active,
    display_name: row.display_name,
    locale: row.locale,
    created_at: row.created_at,
    last_login_at: row.last_login_at,
    sso: row.sso_subject !== null,
  };
}

export type UserView = ReturnType<typeof toUser>;

const sorted = (perms: Iterable<string>) => [...perms].sort();

function usersOnly(actor: Actor): void {
  if (actor.kind !== 'user') {
    throw new AppError('auth.users_only', {
      detail: 'This operation applies to users; a service account has no password, locale or sessions',
    });
  }
}

function throttled(decision: RateDecision, what: string): AppError {
  return rateLimited(decision, (seconds) => `Too many ${what}; try again in ${seconds} seconds`);
}

export function createAuthService(deps: AuthServiceDeps) {
  const { users, directory, sessions, rateLimiter, clock } = deps;
  const limits = deps.loginLimits ?? DEFAULT_LOGIN_LIMITS;

  async function userOf(actor: Actor): Promise<UserRow> {
    const row = await users.byId(actor.id);
    if (!row) throw new AppError('auth.session_expired', { detail: 'The account no longer exists' });
    return row;
  }

  /** The caller's own record: the user row, or its service account. */
  async function self(actor: Actor) {
    if (actor.kind === 'user') {
      const row = await userOf(actor);
      return { kind: 'user' as const, row };
    }
    const sa = await directory.serviceAccount(actor.id);
    if (!sa) throw new AppError('auth.invalid_token', { detail: 'Invalid or expired API token' });
    return { kind: 'service_account' as const, sa };
  }

  async function roleOf(actor: Actor): Promise<string> {
    const me = await self(actor);
    return me.kind === 'user' ? me.row.role : me.sa.role;
  }

  return {
    async status() {
      const sso = (await deps.sso?.status())?.enabled ?? false;
      return {
        bootstrapped: (await users.count()) > 0,
        login_methods: sso ? ['password', 'sso'] : ['password'],
        sso_enabled: sso,
      };
    },

    /** Creates the first platform administrator; 409 once any user exists. */
    async bootstrap(input: { username: string; password: string; email: string }): Promise<UserView> {
      const already = () =>
        new AppError('auth.already_bootstrapped', {
          detail: 'The service is already bootstrapped: users exist. Sign in instead.',
        });
      // Checked before hashing so that a bootstrapped instance spends nothing on the call.
      if ((await users.count()) > 0) throw already();
      const password_hash = await hashPassword(input.password);
      // Two concurrent bootstraps: the second waits here, then sees the first one's user.
      await users.lockAdministration();
      if ((await users.count()) > 0) throw already();
      const row = await users.insert({
        username: input.username,
        email: input.email,
        password_hash,
        role: 'admin',
        organization_id: null,
      });
      setAuditTarget({
        type: 'user',
        id: row.id,
        organizationId: null,
        details: { username: row.username, role: 'admin' },
      });
      return toUser(row);
    },

    /**
     * Password login. Unknown user and wrong password answer alike (and take the same
     * time); attempts are limited per username and per client address.
     */
    async login(input: { username: string; password: string }, meta: { ip: string | null; userAgent: string | null }) {
      const name = input.username.toLowerCase();
      setAuditTarget({ type: 'user', details: { username: input.username } });
      const byAddress = await rateLimiter.hit(`login:addr:${meta.ip ?? 'unknown'}`, limits.perAddress, limits.windowMs);
      if (!byAddress.allowed) throw throttled(byAddress, 'sign-in attempts from this address');
      const byName = await rateLimiter.hit(`login:user:${name}`, limits.perUsername, limits.windowMs);
      if (!byName.allowed) throw throttled(byName, 'sign-in attempts for this user');

      const row = await users.byUsername(name);
      const ok = await verifyPassword(row?.password_hash, input.password);
      if (!row || !ok) throw new AppError('auth.invalid_credentials', { detail: 'Invalid username or password' });
      // Said only to someone who knows the password, so it reveals nothing to a guesser.
      if (!row.is_active) throw new AppError('auth.user_inactive', { detail: 'User is inactive' });
      if (deps.sso && !(await deps.sso.passwordLoginAllowed(row))) {
        throw new AppError('auth.password_login_disabled', {
          detail:
            'Password login is turned off for single sign-on users: sign in through the identity provider (GET /api/auth/sso/login)',
        });
      }
      if (row.organization_id !== null && (await directory.organization(row.organization_id))?.is_active === false) {
        throw new AppError('auth.organization_inactive', { detail: 'Organization is inactive' });
      }
      await rateLimiter.reset(`login:user:${name}`);

      const now = clock.now();
      const updated = (await users.update(row.id, { last_login_at: now })) ?? row;
      const session = await sessions.open(row.id, meta);
      setAuditTarget({ id: row.id, organizationId: row.organization_id });
      const actor = actorFor(
        {
          kind: 'user',
          id: row.id,
          name: row.username,
          role: row.role,
          organizationId: row.organization_id,
          active: true,
        },
        null,
        'session',
      );
      return {
        user: toUser(updated),
        actor,
        cookie: {
          value: session.value,
          maxAgeMs: SESSION_MAX_AGE_MS,
          expiresAt: new Date(now.getTime() + SESSION_MAX_AGE_MS),
        },
      };
    },

    /** Ends the session that authenticated the call; a token caller has none (no-op). */
    async logout(actor: Actor, sessionHash: string | undefined): Promise<boolean> {
      if (actor.via !== 'session' || !sessionHash) return false;
      await sessions.end(sessionHash);
      setAuditTarget({ type: 'user', id: actor.id, details: { session: 'closed' } });
      return true;
    },

    async me(actor: Actor) {
      const me = await self(actor);
      if (me.kind === 'user') return { kind: 'user' as const, ...toUser(me.row) };
      return { kind: 'service_account' as const, ...me.sa };
    },

    async updateMe(actor: Actor, input: { display_name?: string | null; email?: string }) {
      usersOnly(actor);
      const changes: { display_name?: string | null; email?: string } = {};
      if (input.display_name !== undefined) changes.display_name = input.display_name;
      if (input.email !== undefined) changes.email = input.email;
      const row = Object.keys(changes).length ? await users.update(actor.id, changes) : await users.byId(actor.id);
      if (!row) throw new AppError('auth.session_expired', { detail: 'The account no longer exists' });
      setAuditTarget({
        type: 'user',
        id: actor.id,
        organizationId: row.organization_id,
        details: { changed: Object.keys(changes) },
      });
      return { kind: 'user' as const, ...toUser(row) };
    },

    async setLocale(actor: Actor, locale: string): Promise<UserView> {
      usersOnly(actor);
      const row = await users.update(actor.id, { locale });
      if (!row) throw new AppError('auth.session_expired', { detail: 'The account no longer exists' });
      setAuditTarget({ type: 'user', id: actor.id, organizationId: row.organization_id, details: { locale } });
      return toUser(row);
    },

    /** Needs the current password; ends the caller's other sessions, nothing else. */
    async changePassword(
      actor: Actor,
      sessionHash: string | undefined,
      input: { current_password: string; new_password: string },
    ): Promise<number> {
      usersOnly(actor);
      const gate = await rateLimiter.hit(
        `password:user:${actor.id}`,
        PASSWORD_CHANGE_LIMIT.limit,
        PASSWORD_CHANGE_LIMIT.windowMs,
      );
      if (!gate.allowed) throw throttled(gate, 'password change attempts');
      const row = await userOf(actor);
      setAuditTarget({ type: 'user', id: row.id, organizationId: row.organization_id });
      if (!(await verifyPassword(row.password_hash, input.current_password))) {
        throw new AppError('auth.wrong_current_password', { detail: 'The current password is not correct' });
      }
      await users.update(row.id, {
        password_hash: await hashPassword(input.new_password),
        password_changed_at: clock.now(),
      });
      return sessions.closeOthers(row.id, actor.via === 'session' ? (sessionHash ?? null) : null);
    },

    async revokeOtherSessions(actor: Actor, sessionHash: string | undefined): Promise<{ revoked: number }> {
      usersOnly(actor);
      setAuditTarget({ type: 'user', id: actor.id });
      return { revoked: await sessions.closeOthers(actor.id, actor.via === 'session' ? (sessionHash ?? null) : null) };
    },

    async profile(actor: Actor) {
      const me = await self(actor);
      const base =
        me.kind === 'user'
          ? {
              id: me.row.id,
              name: me.row.username,
              email: me.row.email,
              display_name: me.row.display_name,
              locale: me.row.locale,
              role: me.row.role,
              organization_id: me.row.organization_id,
            }
          : {
              id: me.sa.id,
              name: me.sa.name,
              email: null,
              display_name: null,
              locale: null,
              role: me.sa.role,
              organization_id: me.sa.organization_id,
            };
      const organization =
        base.organization_id === null ? null : ((await directory.organization(base.organization_id)) ?? null);
      return {
        kind: me.kind,
        ...base,
        organization,
        global: actor.global,
        permissions: sorted(actor.permissions),
        auth_method: actor.via,
      };
    },

    async permissions(actor: Actor) {
      const roles = Object.fromEntries(ROLES.map((r) => [r, sorted(ROLE_PERMISSIONS[r])])) as Record<
        RoleName,
        string[]
      >;
      return { role: await roleOf(actor), global: actor.global, permissions: sorted(actor.permissions), roles };
    },

    async adminAccess(actor: Actor) {
      return { global: actor.global, organizations: await directory.organizations(scopeOf(actor)) };
    },
  };
}

export type AuthService = ReturnType<typeof createAuthService>;
