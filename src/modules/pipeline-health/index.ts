import type { Kysely } from 'kysely';
import { connectorFor } from '../../connectors/index.js';
import type { Clock } from '../../core/clock.js';
import type { CachePort } from '../../platform/cache/port.js';
import type { DB } from '../../platform/db/index.js';
import type { Api } from '../../platform/http/routes.js';
import type { CollectorSettings } from '../collector-config/settings.js';
import { pipelineHealthRoutes } from './routes.js';
import { createPipelineHealthService } from './service.js';
import { createPipelineHealthStore } from './store.js';

export function wirePipelineHealth(deps: {
  db: Kysely<DB>;
  cache: CachePort;
  clock: Clock;
  settings: { current(): Promise<CollectorSettings> };
  /** Tests shorten the 60 s cache. */
  ttlMs?: number;
}) {
  const service = createPipelineHealthService({
    store: createPipelineHealthStore(deps.db),
    cache: deps.cache,
    clock: deps.clock,
    connectorFor,
    defaultIntervalSeconds: async () => (await deps.settings.current()).default_interval_seconds,
    ...(deps.ttlMs !== undefined ? { ttlMs: deps.ttlMs } : {}),
  });
  return { service, routes: (app: Api) => pipelineHealthRoutes(app, service) };
}
