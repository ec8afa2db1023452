// The deprecated internal shared key (header X-Internal-Key), off unless configured. It
// decorates the identity authenticator: a token or session is tried first and wins; only
// a request carrying neither, on a route that requires internal.tenant.read, is turned
// into an internal actor holding that permission alone (global scope). The key never
// opens any other route, and it is never logged.
import { createHash } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import type { Actor } from '../../core/actor.js';
import { AppError } from '../../core/errors.js';
import { safeEqual } from '../../platform/crypto/tokens.js';
import type { Authenticator } from '../../platform/http/access.js';

export const INTERNAL_KEY_HEADER = 'x-internal-key';

export const INTERNAL_KEY_ACTOR: Actor = Object.freeze({
  kind: 'service_account',
  id: 0,
  name: 'internal shared key',
  global: true,
  organizationIds: [],
  permissions: new Set(['internal.tenant.read'] as const),
  via: 'token',
}) as Actor;

const digest = (value: string) => createHash('sha256').update(value, 'utf8').digest('hex');

export function withInternalKey(inner: Authenticator, key: string | undefined): Authenticator {
  if (!key) return inner;
  const expected = digest(key);
  return {
    async authenticate(request: FastifyRequest): Promise<Actor | null> {
      const actor = await inner.authenticate(request);
      if (actor) return actor;
      const presented = request.headers[INTERNAL_KEY_HEADER];
      if (presented === undefined) return null;
      if (request.routeOptions.config.access?.requires !== 'internal.tenant.read') return null;
      // Both sides hashed to a fixed length first, so the comparison leaks neither content nor length.
      if (typeof presented !== 'string' || !safeEqual(digest(presented), expected)) {
        throw new AppError('auth.unauthenticated', { detail: 'Invalid internal key' });
      }
      return INTERNAL_KEY_ACTOR;
    },
  };
}
