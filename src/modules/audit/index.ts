import type { Kysely } from 'kysely';
import type { Clock } from '../../core/clock.js';
import type { DB } from '../../platform/db/index.js';
import type { Api } from '../../platform/http/routes.js';
import { auditRoutes } from './routes.js';
import { createAuditService } from './service.js';
import { createAuditStore } from './store.js';

export function wireAudit(deps: { db: Kysely<DB>; clock: Clock }) {
  const service = createAuditService({ store: createAuditStore(deps.db), clock: deps.clock });
  return { service, routes: (app: Api) => auditRoutes(app, service) };
}
