// Collection: the beat schedules due streams, workers run cycles under a per-stream lock,
// state rows and metrics say how far each stream got. docs/collection.md.
import type { Kysely } from 'kysely';
import { allConnectors, connectorFor } from '../../connectors/index.js';
import type { ConnectorRuntime } from '../../connectors/runtime.js';
import type { Connector } from '../../connectors/sdk.js';
import type { Clock } from '../../core/clock.js';
import { newId } from '../../core/ids.js';
import { GLOBAL_SCOPE, type Scope } from '../../core/scope.js';
import type { DB } from '../../platform/db/index.js';
import { injectTraceContext } from '../../platform/telemetry/index.js';
import type { Api } from '../../platform/http/routes.js';
import type { LockPort } from '../../platform/lock/port.js';
import type { Logger } from '../../platform/logger.js';
import type { AcceptBatch, Admission } from '../../pipeline/envelope.js';
import type { Telemetry } from '../../platform/telemetry/index.js';
import type { CollectorSettings } from '../collector-config/settings.js';
import type { IntegrationRow } from '../integrations/store.js';
import type { JobQueue } from '../queues.js';
import { createCycleRunner, type CycleOutcome } from './cycle.js';
import { collectionJobs, collectionTasks, COLLECT_QUEUE, CYCLE_JOB, CYCLE_JOB_OPTIONS } from './jobs.js';
import { createCollectionMetrics } from './metrics.js';
import { collectionRoutes } from './routes.js';
import { createScheduler, type SchedulerDeps } from './scheduler.js';
import { createCollectionService } from './service.js';
import { createCollectionStore } from './store.js';

export { COLLECT_QUEUE, CYCLE_JOB } from './jobs.js';

/** Pull collection (connectors, scheduler, backfill): docs/collection.md. */
export interface CollectionConfig {
  /** How often the beat looks for streams whose cycle is due (WEIR_COLLECT_SCHEDULE_MS). */
  scheduleMs: number;
  /** Lease of a stream's lock; renewed after every page, so a dead worker frees it after this (WEIR_COLLECT_LOCK_TTL_MS). */
  lockTtlMs: number;
  /** Longest wait on a vendor's Retry-After inside a cycle; longer ends the cycle and retries later (WEIR_COLLECT_MAX_RETRY_WAIT_MS). */
  maxRetryWaitMs: number;
  /** Timeout of one vendor request (WEIR_COLLECT_REQUEST_TIMEOUT_MS). */
  requestTimeoutMs: number;
  /** Collection jobs one worker runs at once (WEIR_COLLECT_CONCURRENCY). */
  concurrency: number;
  /** Outbound addresses allowed to vendors besides public ones (the same setting as destinations: WEIR_OUTBOUND_ALLOW_CIDRS). */
  outboundAllowCidrs: readonly string[];
}

export interface CollectionWiring {
  db: Kysely<DB>;
  clock: Clock;
  logger: Logger;
  telemetry: Telemetry;
  queue: JobQueue;
  /** Ingest's durable acceptance of batches (collected pages go the way pushes go). */
  accept: AcceptBatch;
  /** New events of an integration refused for now (disk floor, destination backlog budgets). */
  admission?: Admission;
  lock: LockPort;
  config: Pick<CollectionConfig, 'scheduleMs' | 'lockTtlMs' | 'concurrency'>;
  integrations: {
    find(scope: Scope, id: number): Promise<IntegrationRow | undefined>;
    collectTarget(
      row: IntegrationRow,
    ): Promise<{ config: Record<string, unknown>; secrets: string[]; tenantId: string | null }>;
  };
  runtime: Pick<ConnectorRuntime, 'open'>;
  settings: { current(): Promise<CollectorSettings> };
  /** Observe the lag gauges in this process (the beat roles: one reporter, not one per process). */
  observeGauges?: boolean;
  connectorFor?: (platform: string) => Connector | undefined;
  allConnectors?: () => Connector[];
}

export function wireCollection(deps: CollectionWiring) {
  const { db, clock, logger, queue } = deps;
  const store = createCollectionStore(db);
  const lookup = deps.connectorFor ?? connectorFor;
  const metrics = createCollectionMetrics(deps.telemetry.meter);
  if (deps.observeGauges) {
    metrics.observe(
      async () =>
        (await store.gaugeRows()).map((r) => ({
          ...r,
          cursor: lookup(r.platform)?.streams.find((s) => s.name === r.stream)?.cursor,
        })),
      () => clock.now(),
    );
  }

  const enqueueCycle: SchedulerDeps['enqueueCycle'] = async (run) => {
    // The row first: a worker that takes the job at once finds it.
    await store.insertRun({ ...run, created_at: clock.now() });
    await queue.enqueue(
      COLLECT_QUEUE,
      CYCLE_JOB,
      { run_id: run.id, integration_id: run.integration_id, stream: run.stream },
      { ...CYCLE_JOB_OPTIONS, jobId: run.id },
    );
  };

  const cycles = createCycleRunner({
    store,
    clock,
    logger,
    accept: deps.accept,
    admission: deps.admission,
    lock: deps.lock,
    lockTtlMs: deps.config.lockTtlMs,
    settings: deps.settings,
    integrations: {
      row: (id) => deps.integrations.find(GLOBAL_SCOPE, id),
      collectTarget: (row) => deps.integrations.collectTarget(row),
    },
    runtime: deps.runtime,
    connectorFor: lookup,
    metrics,
    ...(deps.telemetry.enabled ? { traceContext: () => injectTraceContext({}) } : {}),
  });
  const scheduler = createScheduler({
    store,
    clock,
    logger,
    settings: deps.settings,
    connectorFor: lookup,
    enqueueCycle,
  });
  const service = createCollectionService({
    store,
    clock,
    integrations: deps.integrations,
    connectorFor: lookup,
    allConnectors: deps.allConnectors ?? allConnectors,
    enqueueCycle,
  });

  const engine = {
    schedule: (now?: Date) => scheduler.schedule(now),
    housekeeping: () => scheduler.housekeeping(),
    /** Runs one cycle here and now (tests, tools): records a run row like a trigger and returns its outcome. */
    async runCycle(
      integrationId: number,
      stream: string,
      signal: AbortSignal = new AbortController().signal,
    ): Promise<CycleOutcome & { run_id: string }> {
      const row = await deps.integrations.find(GLOBAL_SCOPE, integrationId);
      if (!row) throw new Error(`no integration ${integrationId}`);
      const id = newId();
      await store.insertRun({
        id,
        organization_id: row.organization_id,
        integration_id: integrationId,
        stream,
        reason: 'trigger',
        requested_by: null,
        created_at: clock.now(),
      });
      return { run_id: id, ...(await cycles.run({ run_id: id, integration_id: integrationId, stream }, signal)) };
    },
    getRun: (id: string) => store.getRun(id),
    getState: (integrationId: number, stream: string) => store.getState(integrationId, stream),
  };

  return {
    service,
    engine,
    routes: (app: Api) => collectionRoutes(app, service),
    jobs: [collectionJobs({ cycles, scheduler, tracer: deps.telemetry.tracer, concurrency: deps.config.concurrency })],
    beatTasks: collectionTasks({ scheduler, queue, scheduleMs: deps.config.scheduleMs }),
  };
}

export type Collection = ReturnType<typeof wireCollection>;
