import type { Kysely } from 'kysely';
import type { Clock } from '../../core/clock.js';
import type { DB } from '../../platform/db/index.js';
import type { Api } from '../../platform/http/routes.js';
import type { RateLimiterPort } from '../../platform/ratelimit/port.js';
import { createPlatformRegistry } from './platforms.js';
import { integrationRoutes } from './routes.js';
import { createIntegrationService } from './service.js';
import { createIntegrationStore } from './store.js';

export function wireIntegrations(deps: { db: Kysely<DB>; clock: Clock; rateLimiter: RateLimiterPort }) {
  // Connectors register their vendor platforms on this registry when they are wired.
  const platforms = createPlatformRegistry();
  const service = createIntegrationService({ store: createIntegrationStore(deps.db), platforms, rateLimiter: deps.rateLimiter, clock: deps.clock });
  return { service, platforms, routes: (app: Api) => integrationRoutes(app, service) };
}

export type Integrations = Omit<ReturnType<typeof wireIntegrations>, 'routes'>;
