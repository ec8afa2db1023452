import type { Kysely } from 'kysely';
import type { Clock } from '../../core/clock.js';
import type { CredentialCipher } from '../../platform/crypto/credentials.js';
import { inTransaction } from '../../platform/db/ambient.js';
import type { DB } from '../../platform/db/index.js';
import type { Api } from '../../platform/http/routes.js';
import type { NetPolicy } from '../../platform/net/policy.js';
import type { QueuePort } from '../../platform/queue/port.js';
import type { RateLimiterPort } from '../../platform/ratelimit/port.js';
import type { AuditService } from '../audit/service.js';
import type { Identity } from '../auth/index.js';
import { createIdentityConfig } from './config.js';
import { createOidc } from './oidc.js';
import { createGuardedFetch } from './outbound.js';
import { createProbe } from './probe.js';
import { identityRoutes, ssoRoutes } from './routes.js';
import { createSso } from './sso.js';
import { createIdentityStore } from './store.js';
import { createSync } from './sync.js';

/** Single sign-on (OpenID Connect) and the identity configuration, its test and its sync. */
export function wireSso(deps: {
  db: Kysely<DB>;
  clock: Clock;
  queue: QueuePort;
  cipher: CredentialCipher;
  net: NetPolicy;
  audit: AuditService;
  identity: Identity;
  rateLimiter: RateLimiterPort;
}) {
  const { db, clock } = deps;
  const store = createIdentityStore(db);
  const guarded = createGuardedFetch(deps.net);
  const config = createIdentityConfig({ store, cipher: deps.cipher, net: deps.net });
  const oidc = createOidc({ fetch: guarded.fetch, clock });
  const transaction = <T>(fn: () => Promise<T>) => inTransaction(db, fn);
  const invalidateOwner = (owner: { kind: 'user'; id: number }) => deps.identity.tokens.invalidateOwner(owner);
  const sso = createSso({
    store,
    config,
    oidc,
    sessions: deps.identity.sessions,
    clock,
    rateLimiter: deps.rateLimiter,
    transaction,
    invalidateOwner,
  });
  const sync = createSync({
    store,
    config,
    queue: deps.queue,
    clock,
    fetch: guarded.fetch,
    audit: deps.audit,
    transaction,
    invalidateOwner,
    closeSessions: (userId) => deps.identity.sessions.closeOthers(userId, null),
  });
  const probe = createProbe({ config, oidc, fetch: guarded.fetch });
  return {
    sso,
    sync,
    /** What password login asks (auth/service.ts): whether SSO is on, and whether a user may use a password. */
    policy: { status: sso.status, passwordLoginAllowed: sso.passwordLoginAllowed },
    jobs: [sync.jobs()],
    routes: (app: Api) => {
      ssoRoutes(app, sso);
      identityRoutes(app, { config, sync, probe });
    },
    close: () => guarded.close(),
  };
}
