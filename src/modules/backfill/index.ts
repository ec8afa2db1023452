import type { Kysely } from 'kysely';
import type { Clock } from '../../core/clock.js';
import type { ConnectorRuntime } from '../../connectors/runtime.js';
import type { Connector } from '../../connectors/sdk.js';
import type { CachePort } from '../../platform/cache/port.js';
import type { DB } from '../../platform/db/index.js';
import type { Api } from '../../platform/http/routes.js';
import type { LockPort } from '../../platform/lock/port.js';
import type { Logger } from '../../platform/logger.js';
import type { BrokerIdentity } from '../../platform/queue/identity.js';
import type { AcceptBatch } from '../../pipeline/envelope.js';
import type { QueuePort } from '../../platform/queue/port.js';
import type { IntegrationService } from '../integrations/service.js';
import type { ProcessService } from '../processes/service.js';
import { createDiagnostics } from './diagnostics.js';
import { backfillJobs, enqueueRun } from './jobs.js';
import { backfillRoutes } from './routes.js';
import { createBackfillRunner } from './runner.js';
import { createBackfillService } from './service.js';
import { createBackfillStore } from './store.js';

export interface BackfillDeps {
  db: Kysely<DB>;
  clock: Clock;
  logger: Logger;
  queue: QueuePort;
  /** Ingest's durable acceptance of batches (backfilled pages go the way pushes go). */
  accept: AcceptBatch;
  cache: CachePort;
  lock: LockPort;
  integrations: Pick<IntegrationService, 'find' | 'collectTarget'>;
  connectorFor(platform: string): Connector | undefined;
  connectorRuntime: ConnectorRuntime;
  processes: Pick<ProcessService, 'list'>;
  /** This process's broker (platform/queue/identity.ts). */
  broker: BrokerIdentity;
  /** config.collection.lockTtlMs: the job lock's lease, renewed after every page. */
  lockTtlMs: number;
  concurrency: number;
  /** config.heartbeatIntervalMs: a worker not seen for three intervals is not live. */
  heartbeatIntervalMs: number;
}

export function wireBackfill(deps: BackfillDeps) {
  const store = createBackfillStore(deps.db);
  const service = createBackfillService({
    store,
    clock: deps.clock,
    integrations: deps.integrations,
    connectorFor: deps.connectorFor,
    enqueueRun: async (jobId) => {
      await enqueueRun(deps.queue, jobId);
    },
  });
  const runner = createBackfillRunner({
    store,
    clock: deps.clock,
    accept: deps.accept,
    lock: deps.lock,
    integrations: deps.integrations,
    connectorFor: deps.connectorFor,
    connectorRuntime: deps.connectorRuntime,
    enqueueRun: async (jobId, delayMs) => {
      await enqueueRun(deps.queue, jobId, { delayMs });
    },
    lockTtlMs: deps.lockTtlMs,
    logger: deps.logger,
  });
  const diagnostics = createDiagnostics({
    queue: deps.queue,
    cache: deps.cache,
    processes: deps.processes,
    store,
    clock: deps.clock,
    broker: deps.broker,
    liveWithinMs: 3 * deps.heartbeatIntervalMs,
  });
  return {
    service,
    runner,
    diagnostics,
    routes: (app: Api) => backfillRoutes(app, service, diagnostics),
    jobs: [backfillJobs({ runner, cache: deps.cache, concurrency: deps.concurrency })],
  };
}

export type Backfill = Omit<ReturnType<typeof wireBackfill>, 'routes' | 'jobs'>;
