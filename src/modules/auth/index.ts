import type { Kysely } from 'kysely';
import type { Clock } from '../../core/clock.js';
import type { CachePort } from '../../platform/cache/port.js';
import type { DB } from '../../platform/db/index.js';
import type { RateLimiterPort } from '../../platform/ratelimit/port.js';
import { createTokenService } from '../tokens/service.js';
import { createTokenStore } from '../tokens/store.js';
import { createAuthenticator } from './authenticator.js';
import { createSessionService } from './sessions.js';
import type { Api } from '../../platform/http/routes.js';
import { authRoutes } from './routes.js';
import { createAuthService, type LoginLimits, type SsoPolicy } from './service.js';
import { createDirectoryStore, createSessionStore, createUserStore } from './store.js';
import { createUserAdmin } from './users.js';

export interface IdentityDeps {
  db: Kysely<DB>;
  cache: CachePort;
  clock: Clock;
  rateLimiter: RateLimiterPort;
  tokenHmacKey: Buffer;
  tokenRateLimit: number;
}

/** Who is calling: users, sessions, tokens and the authenticator built from them. */
export function wireIdentity(deps: IdentityDeps) {
  const users = createUserStore(deps.db);
  const sessions = createSessionService({ store: createSessionStore(deps.db), clock: deps.clock });
  const tokens = createTokenService({
    store: createTokenStore(deps.db),
    cache: deps.cache,
    clock: deps.clock,
    hmacKey: deps.tokenHmacKey,
  });
  const authenticator = createAuthenticator({
    tokens,
    sessions,
    rateLimiter: deps.rateLimiter,
    tokenRateLimit: deps.tokenRateLimit,
  });
  return { users, sessions, tokens, authenticator };
}

export type Identity = ReturnType<typeof wireIdentity>;

/** The auth API family: bootstrap, login, the caller's own account, user administration. */
export function wireAuth(deps: {
  db: Kysely<DB>;
  identity: Identity;
  rateLimiter: RateLimiterPort;
  clock: Clock;
  loginLimits?: LoginLimits;
  sso?: SsoPolicy;
}) {
  const { identity, clock } = deps;
  const directory = createDirectoryStore(deps.db);
  const service = createAuthService({
    users: identity.users,
    directory,
    sessions: identity.sessions,
    rateLimiter: deps.rateLimiter,
    clock,
    ...(deps.sso ? { sso: deps.sso } : {}),
    ...(deps.loginLimits ? { loginLimits: deps.loginLimits } : {}),
  });
  const admin = createUserAdmin({
    users: identity.users,
    directory,
    sessions: identity.sessions,
    tokens: identity.tokens,
    clock,
  });
  return { service, admin, routes: (app: Api) => authRoutes(app, service, admin) };
}
