// Who is calling: a Bearer token (scheme word in any letter case) wins over the session
// cookie; a presented token that fails is a 401 at once, never a fall back to the cookie.
// Token-authenticated calls are counted per token in a sliding window.
import type {} from '@fastify/cookie';
import type { FastifyRequest } from 'fastify';
import type { Actor } from '../../core/actor.js';
import { AppError } from '../../core/errors.js';
import type { Authenticator } from '../../platform/http/access.js';
import { rateLimited, rateLimitHeaders } from '../../platform/ratelimit/headers.js';
import type { RateLimiterPort } from '../../platform/ratelimit/port.js';
import { isWellFormed } from '../../platform/crypto/tokens.js';
import { API_TOKEN_PREFIX, type TokenService } from '../tokens/service.js';
import { SESSION_COOKIE, type SessionService } from './sessions.js';

export const WWW_AUTHENTICATE = 'Bearer realm="service"';

declare module 'fastify' {
  interface FastifyRequest {
    /** Hash of the session that authenticated the request, when a cookie did. */
    sessionHash?: string;
  }
}

export interface AuthenticatorDeps {
  tokens: TokenService;
  sessions: SessionService;
  rateLimiter: RateLimiterPort;
  /** Requests per minute per token. */
  tokenRateLimit: number;
}

function unauthorized(err: unknown): unknown {
  if (err instanceof AppError) err.headers['www-authenticate'] = WWW_AUTHENTICATE;
  return err;
}

function bearer(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const m = /^\s*(\S+)\s+(\S+)\s*$/.exec(header);
  return m && m[1]?.toLowerCase() === 'bearer' ? m[2] : undefined;
}

export function createAuthenticator(deps: AuthenticatorDeps): Authenticator {
  return {
    async authenticate(request: FastifyRequest): Promise<Actor | null> {
      const presented = bearer(request.headers.authorization);
      if (presented !== undefined) {
        // Verification and the rate-limit count are independent round trips to the cache
        // (Redis in the distributed mode): run them together. Malformed tokens are refused
        // by their checksum before either.
        if (!isWellFormed(presented, API_TOKEN_PREFIX))
          throw unauthorized(new AppError('auth.invalid_token', { detail: 'Invalid or expired API token' }));
        const [verified, decision] = await Promise.allSettled([
          deps.tokens.verify(presented),
          deps.rateLimiter.hit(`token:${deps.tokens.fingerprint(presented)}`, deps.tokenRateLimit, 60_000),
        ]);
        if (verified.status === 'rejected') throw unauthorized(verified.reason);
        if (decision.status === 'rejected') throw decision.reason;
        const actor = verified.value;
        if (!decision.value.allowed) throw rateLimited(decision.value, () => 'Token rate limit exceeded');
        request.rateLimitHeaders = rateLimitHeaders(decision.value);
        return actor;
      }
      const cookie = request.cookies?.[SESSION_COOKIE];
      if (!cookie) return null;
      const { actor, sessionHash } = await deps.sessions.verify(cookie);
      request.sessionHash = sessionHash;
      return actor;
    },
  };
}
