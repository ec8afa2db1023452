import type {} from '@fastify/cookie';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { Actor } from '../../core/actor.js';
import { route, type Api } from '../../platform/http/routes.js';
import {
  AdminAccess,
  BootstrapBody,
  CreateUserBody,
  ErrorBody,
  LocaleBody,
  LoginBody,
  Me,
  PasswordBody,
  Permissions,
  Profile,
  RevokedSessions,
  Status,
  UpdateMeBody,
  UpdateUserBody,
  User,
  UserIdParams,
  UserList,
  UserListQuery,
} from './schema.js';
import type { AuthService } from './service.js';
import { SESSION_COOKIE } from './sessions.js';
import type { UserAdmin } from './users.js';

const NoContent = Type.Null({ description: 'No content' });
const me = (req: FastifyRequest): Actor => req.actor as Actor;

/** The session cookie of a sign-in (password or single sign-on): one set of attributes. */
export function setSessionCookie(
  req: FastifyRequest,
  reply: FastifyReply,
  cookie: { value: string; maxAgeMs: number; expiresAt: Date },
): void {
  reply.setCookie(SESSION_COOKIE, cookie.value, {
    httpOnly: true,
    sameSite: 'lax',
    path: '/',
    secure: req.protocol === 'https',
    maxAge: Math.floor(cookie.maxAgeMs / 1000),
    expires: cookie.expiresAt,
  });
}

export function authRoutes(app: Api, auth: AuthService, admin: UserAdmin): void {
  route(app, {
    method: 'POST',
    url: '/api/auth/bootstrap',
    operationId: 'auth.bootstrap',
    summary: 'Create the first platform administrator; 409 once any user exists',
    access: { requires: 'public' },
    schema: { body: BootstrapBody, response: { 201: User, 409: ErrorBody } },
    handler: async (req, reply) => {
      // Returned, not sent: the answer leaves only after the transaction commits.
      const user = await auth.bootstrap(req.body);
      reply.code(201);
      return user;
    },
  });

  route(app, {
    method: 'GET',
    url: '/api/auth/status',
    operationId: 'auth.status',
    summary: 'Whether the service is bootstrapped, and how users sign in',
    access: { requires: 'public' },
    schema: { response: { 200: Status } },
    handler: async () => auth.status(),
  });

  route(app, {
    method: 'POST',
    url: '/api/auth/login',
    operationId: 'auth.login',
    summary: 'Sign in with username and password; sets the HttpOnly session cookie',
    description: `Sets the \`${SESSION_COOKIE}\` cookie (HttpOnly, SameSite=Lax). Attempts are limited per username and per client address (429 with Retry-After). For the console; automation uses API tokens.`,
    access: { requires: 'public' },
    schema: { body: LoginBody, response: { 200: User, 401: ErrorBody, 403: ErrorBody, 429: ErrorBody } },
    handler: async (req, reply) => {
      const result = await auth.login(req.body, { ip: req.ip ?? null, userAgent: req.headers['user-agent'] ?? null });
      // The audit entry of the sign-in names who signed in.
      req.actor = result.actor;
      setSessionCookie(req, reply, result.cookie);
      return result.user;
    },
  });

  route(app, {
    method: 'POST',
    url: '/api/auth/logout',
    operationId: 'auth.logout',
    summary: 'End the current session and clear its cookie (a no-op for token callers)',
    access: { requires: 'authenticated' },
    schema: { response: { 204: NoContent } },
    handler: async (req, reply) => {
      if (await auth.logout(me(req), req.sessionHash)) reply.clearCookie(SESSION_COOKIE, { path: '/' });
      reply.code(204);
      return null;
    },
  });

  route(app, {
    method: 'GET',
    url: '/api/auth/me',
    operationId: 'auth.me',
    summary: 'The caller: a user, or the service account of the presented token',
    access: { requires: 'authenticated' },
    schema: { response: { 200: Me } },
    handler: async (req) => auth.me(me(req)),
  });

  route(app, {
    method: 'PATCH',
    url: '/api/auth/me',
    operationId: 'auth.update_me',
    summary: "Change the caller's display name or e-mail (users only)",
    access: { requires: 'authenticated' },
    schema: { body: UpdateMeBody, response: { 200: Me } },
    handler: async (req) => auth.updateMe(me(req), req.body),
  });

  route(app, {
    method: 'PUT',
    url: '/api/auth/me/locale',
    operationId: 'auth.set_locale',
    summary: "Set the caller's language (a BCP 47 tag; users only)",
    access: { requires: 'authenticated' },
    schema: { body: LocaleBody, response: { 200: User } },
    handler: async (req) => auth.setLocale(me(req), req.body.locale),
  });

  route(app, {
    method: 'POST',
    url: '/api/auth/me/password',
    operationId: 'auth.change_password',
    summary: "Change the caller's password; ends the caller's other sessions (users only)",
    access: { requires: 'authenticated' },
    schema: { body: PasswordBody, response: { 204: NoContent } },
    handler: async (req, reply) => {
      await auth.changePassword(me(req), req.sessionHash, req.body);
      reply.code(204);
      return null;
    },
  });

  route(app, {
    method: 'GET',
    url: '/api/auth/me/profile',
    operationId: 'auth.profile',
    summary: "The caller's profile: role, organization, permissions, scope and how it authenticated",
    access: { requires: 'authenticated' },
    schema: { response: { 200: Profile } },
    handler: async (req) => auth.profile(me(req)),
  });

  route(app, {
    method: 'POST',
    url: '/api/auth/me/sessions/revoke-others',
    operationId: 'auth.revoke_other_sessions',
    summary: 'End every session of the caller except the current one (users only)',
    access: { requires: 'authenticated' },
    schema: { response: { 200: RevokedSessions } },
    handler: async (req) => auth.revokeOtherSessions(me(req), req.sessionHash),
  });

  route(app, {
    method: 'GET',
    url: '/api/auth/permissions',
    operationId: 'auth.permissions',
    summary: "The caller's permissions and the full role -> permission table",
    access: { requires: 'authenticated' },
    schema: { response: { 200: Permissions } },
    handler: async (req) => auth.permissions(me(req)),
  });

  route(app, {
    method: 'GET',
    url: '/api/auth/admin-access',
    operationId: 'auth.admin_access',
    summary: 'What the caller may administer: platform scope and the organizations in scope',
    access: { requires: 'user.manage' },
    schema: { response: { 200: AdminAccess } },
    handler: async (req) => auth.adminAccess(me(req)),
  });

  route(app, {
    method: 'GET',
    url: '/api/auth/users',
    operationId: 'auth.list_users',
    summary: "Users in the caller's scope (platform users only for a global caller), by id",
    access: { requires: 'user.manage' },
    schema: { querystring: UserListQuery, response: { 200: UserList } },
    handler: async (req) => admin.list(me(req), { organizationId: req.query.organization_id }),
  });

  route(app, {
    method: 'POST',
    url: '/api/auth/users',
    operationId: 'auth.create_user',
    summary: 'Create a user; without organization_id a platform user (global callers only)',
    access: { requires: 'user.manage' },
    schema: { body: CreateUserBody, response: { 201: User, 404: ErrorBody, 409: ErrorBody } },
    handler: async (req, reply) => {
      const user = await admin.create(me(req), req.body);
      reply.code(201);
      return user;
    },
  });

  route(app, {
    method: 'PUT',
    url: '/api/auth/users/:user_id',
    operationId: 'auth.update_user',
    summary: "Change a user's role, state, e-mail or password",
    access: { requires: 'user.manage' },
    schema: { params: UserIdParams, body: UpdateUserBody, response: { 200: User, 409: ErrorBody } },
    handler: async (req) => admin.update(me(req), req.params.user_id, req.body, req.sessionHash),
  });

  route(app, {
    method: 'DELETE',
    url: '/api/auth/users/:user_id',
    operationId: 'auth.delete_user',
    summary: 'Delete a user (not yourself); its tokens stop working at once',
    access: { requires: 'user.manage' },
    schema: { params: UserIdParams, response: { 204: NoContent, 409: ErrorBody } },
    handler: async (req, reply) => {
      await admin.remove(me(req), req.params.user_id);
      reply.code(204);
      return null;
    },
  });
}
