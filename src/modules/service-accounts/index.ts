import type { Kysely } from 'kysely';
import type { Clock } from '../../core/clock.js';
import type { DB } from '../../platform/db/index.js';
import type { Api } from '../../platform/http/routes.js';
import type { TokenService } from '../tokens/service.js';
import { serviceAccountRoutes } from './routes.js';
import { createServiceAccountService } from './service.js';
import { createServiceAccountStore } from './store.js';

export function wireServiceAccounts(deps: { db: Kysely<DB>; tokens: TokenService; clock: Clock }) {
  const service = createServiceAccountService({
    store: createServiceAccountStore(deps.db),
    tokens: deps.tokens,
    clock: deps.clock,
  });
  return { service, routes: (app: Api) => serviceAccountRoutes(app, service) };
}
