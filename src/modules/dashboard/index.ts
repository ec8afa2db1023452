import type { Kysely } from 'kysely';
import type { Clock } from '../../core/clock.js';
import type { DB } from '../../platform/db/index.js';
import type { Api } from '../../platform/http/routes.js';
import type { EditionState } from '../licenses/service.js';
import { dashboardRoutes } from './routes.js';
import { createDashboardService } from './service.js';
import { createDashboardStore } from './store.js';

export function wireDashboard(deps: {
  db: Kysely<DB>;
  clock: Clock;
  editions: { current(): Promise<EditionState> };
  isPull(platform: string): boolean;
}) {
  const service = createDashboardService({
    store: createDashboardStore(deps.db),
    clock: deps.clock,
    editions: deps.editions,
    isPull: deps.isPull,
  });
  return { service, routes: (app: Api) => dashboardRoutes(app, service) };
}
