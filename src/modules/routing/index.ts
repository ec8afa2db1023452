import type { Kysely } from 'kysely';
import type { Clock } from '../../core/clock.js';
import type { DB } from '../../platform/db/index.js';
import type { Api } from '../../platform/http/routes.js';
import type { AuditService } from '../audit/service.js';
import { createDryRun } from './dry-run.js';
import { createRoutingFlow } from './flow.js';
import { routingRoutes } from './routes.js';
import { createRoutingService } from './service.js';
import { createRoutingStatsStore } from './stats-store.js';
import { createRoutingStore } from './store.js';

/** The routes family (API /api/collectors/routes). The dispatchers read the routes table through the delivery engine's store. */
export function wireRouting(deps: { db: Kysely<DB>; clock: Clock; audit: Pick<AuditService, 'list'> }) {
  const store = createRoutingStore(deps.db);
  const stats = createRoutingStatsStore(deps.db);
  const service = createRoutingService({ store, clock: deps.clock, audit: deps.audit });
  const flow = createRoutingFlow({ store, stats, routes: service, clock: deps.clock });
  const dryRun = createDryRun({ store, now: () => deps.clock.now() });
  return {
    service,
    flow,
    dryRun,
    routes: (app: Api) => routingRoutes(app, service, flow, dryRun),
  };
}

export type Routing = Omit<ReturnType<typeof wireRouting>, 'routes'>;
