import type { Kysely } from 'kysely';
import type { Clock } from '../../core/clock.js';
import type { DB } from '../../platform/db/index.js';
import type { Api } from '../../platform/http/routes.js';
import type { IngestService } from '../ingest/service.js';
import { hecRoutes } from './routes.js';
import { createHecService } from './service.js';
import { createHecStore } from './store.js';

/** Splunk's HTTP Event Collector input (docs/inputs-splunk-hec.md). */
export function wireHec(deps: {
  db: Kysely<DB>;
  clock: Clock;
  ingest: Pick<IngestService, 'receive' | 'verifyToken'>;
  jsonMaxDepth: number;
  onError: (err: unknown, message: string) => void;
}) {
  const service = createHecService({
    ingest: deps.ingest,
    store: createHecStore(deps.db),
    clock: deps.clock,
    jsonMaxDepth: deps.jsonMaxDepth,
    onError: deps.onError,
  });
  return { service, routes: (app: Api) => hecRoutes(app, service) };
}
