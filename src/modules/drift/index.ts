import type { Kysely } from 'kysely';
import type { Clock } from '../../core/clock.js';
import type { DB } from '../../platform/db/index.js';
import type { Api } from '../../platform/http/routes.js';
import { driftRoutes } from './routes.js';
import { createDriftService } from './service.js';
import { createDriftStore } from './store.js';

export function wireDrift(deps: { db: Kysely<DB>; clock: Clock }) {
  const service = createDriftService({ store: createDriftStore(deps.db), clock: deps.clock });
  return { service, routes: (app: Api) => driftRoutes(app, service) };
}
