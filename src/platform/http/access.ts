// Enforces every route's declared access in one hook, before the body is read: 401
// without a valid credential, 403 without the declared permission or global scope.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Actor } from '../../core/actor.js';
import { AppError } from '../../core/errors.js';
import { operationOf } from './unit-of-work.js';

/** Resolves the caller from the request's credentials. */
export interface Authenticator {
  /**
   * The actor behind the request's credentials; null when it carries none. Throws
   * AppError('auth.unauthenticated') for credentials that are present but invalid.
   */
  authenticate(request: FastifyRequest): Promise<Actor | null>;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** RateLimit-* headers of the limit the caller's credential was counted against (set by the authenticator). */
    rateLimitHeaders?: Record<string, string>;
  }
}

/** Until an identity module is wired, nobody can authenticate: only public routes answer. */
export const noAuthentication: Authenticator = { authenticate: async () => null };

export function accessHooks(app: FastifyInstance, authenticator: Authenticator): void {
  // Every answer to a counted request says where the caller stands, errors included; a
  // limit the answer itself reports (a 429 of another limit) keeps its own values.
  app.addHook('onSend', async (request, reply) => {
    const headers = request.rateLimitHeaders;
    if (!headers) return;
    for (const [name, value] of Object.entries(headers)) if (!reply.hasHeader(name)) reply.header(name, value);
  });
  app.addHook('onRequest', async (request) => {
    const access = request.routeOptions.config.access;
    if (!access) return; // not a declared route: the not-found handler answers
    if (access.requires === 'public') {
      return;
    }
    const actor = await authenticator.authenticate(request);
    if (!actor) {
      throw new AppError('auth.unauthenticated', { detail: 'Not authenticated' });
    }
    request.actor = actor;
    let denial: AppError | undefined;
    if (access.requires !== 'authenticated' && !actor.permissions.has(access.requires)) {
      denial = access.quietDenial
        ? new AppError('auth.forbidden', { detail: 'Permission denied' })
        : new AppError('auth.forbidden', {
            detail: `Missing permission: ${access.requires}`,
            details: { permission: access.requires },
          });
    } else if (access.globalScope && !actor.global) {
      denial = new AppError('auth.forbidden', { detail: 'This operation needs platform (global) scope' });
    }
    if (denial) {
      await app.unitOfWork.denied(request, operationOf(request), 403, denial.code);
      throw denial;
    }
  });
}
