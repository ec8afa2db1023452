import type { Kysely } from 'kysely';
import type { Clock } from '../../core/clock.js';
import type { DB } from '../../platform/db/index.js';
import type { Api } from '../../platform/http/routes.js';
import { quarantineRoutes } from './routes.js';
import { createQuarantineService, type Reprocessor } from './service.js';
import { createQuarantineStore } from './store.js';

export type { Reprocessor, ReprocessItem, ReprocessOutcome } from './service.js';

/** `reprocessor` is the normalization service: it normalizes with the live mapping. */
export function wireQuarantine(deps: { db: Kysely<DB>; clock: Clock; reprocessor: Reprocessor }) {
  const service = createQuarantineService({
    store: createQuarantineStore(deps.db),
    reprocessor: deps.reprocessor,
    clock: deps.clock,
  });
  return { service, routes: (app: Api) => quarantineRoutes(app, service) };
}
