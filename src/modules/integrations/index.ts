import type { Kysely } from 'kysely';
import type { Clock } from '../../core/clock.js';
import type { DB } from '../../platform/db/index.js';
import type { Api } from '../../platform/http/routes.js';
import type { RateLimiterPort } from '../../platform/ratelimit/port.js';
import type { CredentialCipher } from '../../platform/crypto/credentials.js';
import type { Logger } from '../../platform/logger.js';
import { createPlatformRegistry } from './platforms.js';
import { createIntegrationSecrets, sealIntegrationSecrets } from './secrets.js';
import { integrationRoutes } from './routes.js';
import { createIntegrationService } from './service.js';
import { createIntegrationStore } from './store.js';

export function wireIntegrations(deps: {
  db: Kysely<DB>;
  clock: Clock;
  rateLimiter: RateLimiterPort;
  cipher: CredentialCipher;
  logger: Logger;
}) {
  // Connectors register their vendor platforms on this registry when they are wired.
  const platforms = createPlatformRegistry();
  const store = createIntegrationStore(deps.db);
  const secrets = createIntegrationSecrets(deps.cipher);
  const service = createIntegrationService({
    store,
    platforms,
    secrets,
    rateLimiter: deps.rateLimiter,
    clock: deps.clock,
  });
  return {
    service,
    platforms,
    routes: (app: Api) => integrationRoutes(app, service),
    /** At start, once platforms are registered: seals plaintext secrets and re-seals under a rotated key. */
    sealSecrets: () =>
      sealIntegrationSecrets({
        rows: () =>
          store.secretRows(
            platforms
              .list()
              .filter((p) => p.secretFields.length > 0)
              .map((p) => p.name),
            secrets.currentKeyId,
          ),
        write: (row, next) => store.writeSealed(row, next),
        secrets,
        platformOf: (name) => platforms.get(name),
        logger: deps.logger,
      }),
  };
}

export type Integrations = Omit<ReturnType<typeof wireIntegrations>, 'routes' | 'sealSecrets'>;

/** Filters, auto-approve policy, tenants, connection tests, health, overview, sync-status (wired after the connector runtime and the edition). */
export { wireIntegrationOperations } from './operations.js';
