import type { FastifyRequest } from 'fastify';
import type { Actor } from '../../core/actor.js';
import { route, type Api } from '../../platform/http/routes.js';
import { setSessionCookie } from '../auth/routes.js';
import type { IdentityConfigService } from './config.js';
import type { createProbe } from './probe.js';
import {
  ErrorBody,
  IdentityConfig,
  IdentityConfigBody,
  Redirect,
  SsoCallbackQuery,
  SsoLoginQuery,
  SyncAccepted,
  SyncStatus,
  TestResult,
} from './schema.js';
import type { Sso } from './sso.js';
import type { Sync } from './sync.js';

const me = (req: FastifyRequest): Actor => req.actor as Actor;
const ADMIN = { requires: 'user.manage', globalScope: true } as const;

/** The two public SSO routes (the spec lists them in the auth family). */
export function ssoRoutes(app: Api, sso: Sso): void {
  route(app, {
    method: 'GET',
    url: '/api/auth/sso/login',
    operationId: 'auth.sso_login',
    summary: 'Start single sign-on: redirects (302) to the identity provider',
    description:
      'return_to is a path on this service (default /) where the browser lands after signing in; absolute URLs are refused.',
    access: { requires: 'public' },
    schema: {
      querystring: SsoLoginQuery,
      response: { 302: Redirect, 401: ErrorBody, 404: ErrorBody, 409: ErrorBody, 429: ErrorBody },
    },
    handler: async (req, reply) => {
      const location = await sso.login(req.query.return_to, req.ip ?? null);
      reply.code(302).header('location', location).header('cache-control', 'no-store');
      return null;
    },
  });

  route(app, {
    method: 'GET',
    url: '/api/auth/sso/callback',
    operationId: 'auth.sso_callback',
    summary: 'Finish single sign-on: sets the session cookie and redirects (302) to the return path',
    description:
      'The identity provider sends the browser here. A failed sign-in answers 401 (403 when the rules admit no one with these claims), with a detail saying why.',
    access: { requires: 'public' },
    // Providers add parameters of their own (session_state, iss, hd...): passed on, not refused.
    query: 'open',
    // Audited like a password login, success or failure; it calls the provider, so no transaction is held.
    audit: 'separate',
    schema: {
      querystring: SsoCallbackQuery,
      response: { 302: Redirect, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody, 409: ErrorBody },
    },
    handler: async (req, reply) => {
      const query = Object.fromEntries(
        Object.entries(req.query as Record<string, unknown>).filter(
          (e): e is [string, string] => typeof e[1] === 'string',
        ),
      );
      const result = await sso.callback(query, { ip: req.ip ?? null, userAgent: req.headers['user-agent'] ?? null });
      req.actor = result.actor;
      setSessionCookie(req, reply, result.cookie);
      reply.code(302).header('location', result.returnTo).header('cache-control', 'no-store');
      return null;
    },
  });
}

export function identityRoutes(
  app: Api,
  deps: { config: IdentityConfigService; sync: Sync; probe: ReturnType<typeof createProbe> },
): void {
  route(app, {
    method: 'GET',
    url: '/api/identity/config',
    operationId: 'identity.get_config',
    summary: 'The identity provider configuration (secrets never shown: only whether they are set)',
    access: ADMIN,
    schema: { response: { 200: IdentityConfig } },
    handler: async () => deps.config.get(),
  });

  route(app, {
    method: 'PUT',
    url: '/api/identity/config',
    operationId: 'identity.update_config',
    summary: 'Set the identity provider, the claim rules and the sign-in policy',
    description:
      'client_secret and scim_token are write-only: omitted, the stored value is kept. Rules are tried in order; the first that matches gives the organization and role.',
    access: ADMIN,
    schema: { body: IdentityConfigBody, response: { 200: IdentityConfig } },
    handler: async (req) => deps.config.put(me(req), req.body),
  });

  route(app, {
    method: 'POST',
    url: '/api/identity/config/sync',
    operationId: 'identity.sync',
    summary: 'Reconcile SSO users with the identity provider (a background job; 409 while one runs)',
    access: ADMIN,
    schema: { response: { 202: SyncAccepted, 409: ErrorBody } },
    handler: async (req, reply) => {
      const run = await deps.sync.start(me(req));
      reply.code(202);
      return run;
    },
  });

  route(app, {
    method: 'GET',
    url: '/api/identity/config/sync-status',
    operationId: 'identity.sync_status',
    summary: 'The running sync (progress) and the last finished one (result)',
    access: ADMIN,
    schema: { response: { 200: SyncStatus } },
    handler: async () => deps.sync.status(),
  });

  route(app, {
    method: 'POST',
    url: '/api/identity/config/test',
    operationId: 'identity.test_config',
    summary: 'Check discovery, the JWKS and the SCIM endpoint; each step with its error',
    access: ADMIN,
    audit: 'separate',
    schema: { response: { 200: TestResult, 409: ErrorBody } },
    handler: async () => deps.probe.test(),
  });
}
