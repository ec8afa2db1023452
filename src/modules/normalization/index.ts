import type { Kysely } from 'kysely';
import type { Clock } from '../../core/clock.js';
import { createValidator, ocsfCatalog } from '../../ocsf/index.js';
import { afterCommit, inTransaction } from '../../platform/db/ambient.js';
import type { DB } from '../../platform/db/index.js';
import type { Logger } from '../../platform/logger.js';
import type { QueuePort } from '../../platform/queue/port.js';
import type { Telemetry } from '../../platform/telemetry/index.js';
import { compileMapping } from '../../pipeline/normalize/compile.js';
import type { MappingDocument } from '../../pipeline/normalize/types.js';
import type { IngestBatch } from '../../pipeline/envelope.js';
import type { OrgDataStep } from '../organizations/jobs.js';
import { createAggregates } from './aggregates.js';
import { housekeeping, housekeepingJobs, housekeepingTasks, normalizeJobs } from './jobs.js';
import { createMappingRegistry } from './registry.js';
import { ocsfPassthrough } from '../../pipeline/normalize/passthrough.js';
import { createNormalizationService, type PassDetection, type PassEnrichment, type PassRouting } from './service.js';
import { inlinePassRunner } from '../../pipeline/pass/inline.js';
import { createPassPool } from '../../pipeline/pass/pool.js';
import { tracedPass } from '../../pipeline/pass/trace.js';
import { createNormalizationStore, ORG_TABLES } from './store.js';

export type {
  NormalizationService,
  PassDetection,
  PassEnrichment,
  PassRouting,
  ReprocessItem,
  ReprocessOutcome,
} from './service.js';

export interface NormalizationWiring {
  db: Kysely<DB>;
  clock: Clock;
  logger: Logger;
  telemetry: Telemetry;
  queue: QueuePort;
  dataDeletion: { addStep(step: OrgDataStep): void };
  /** WEIR_MAPPING_REFRESH_MS: how stale a worker's mappings and policies may get. */
  mappingRefreshMs: number;
  /** WEIR_NORMALIZE_CONCURRENCY: batches one worker process normalizes at once. */
  concurrency: number;
  /** How often drift, compliance and samples are written; default 5 s. */
  aggregateFlushMs?: number;
  /** Collector setting dedup_hours, in ms: how long collected events' vendor keys deduplicate. */
  dedupWindowMs: () => Promise<number>;
  /** Live capture of raw events (collector-config). */
  capture?: { record(batch: IngestBatch): Promise<void> };
  /** Routing and delivery as the one pass needs them (the delivery module's passRouting). */
  routing: PassRouting;
  /** Worker threads of the pass (pipeline/pass/pool.ts); 0 or absent: on the calling thread. */
  passThreads?: number;
  /** Enrichment in the pass (the enrichment module's pass). */
  enrichment?: PassEnrichment;
  /** Detection rules in the pass (the detections module). */
  detection?: PassDetection;
}

const DELETE_CHUNK = 10_000;

export function wireNormalization(deps: NormalizationWiring) {
  const { db, clock, logger, telemetry } = deps;
  const store = createNormalizationStore(db);
  const catalog = ocsfCatalog();
  const validator = createValidator(catalog);
  const registry = createMappingRegistry({
    store,
    compile: (document) => compileMapping(document as unknown as MappingDocument, catalog),
    passthrough: ocsfPassthrough(catalog),
    logger,
    refreshMs: deps.mappingRefreshMs,
    now: () => clock.now(),
  });
  const aggregates = createAggregates({ store, logger });
  const pool = deps.passThreads ? createPassPool(deps.passThreads) : undefined;
  const quarantineCounter = telemetry.meter.createCounter('collector_quarantine_total', {
    description: 'Events quarantined',
  });
  const service = createNormalizationService({
    store,
    registry,
    aggregates,
    routing: deps.routing,
    runPass: tracedPass(pool?.run ?? inlinePassRunner((event) => validator.validate(event)), telemetry.tracer),
    transaction: (fn) => inTransaction(db, fn),
    afterCommit,
    countQuarantined: (orgId, integrationId, kind, n) =>
      quarantineCounter.add(n, { org_id: String(orgId), integration_id: String(integrationId), error_kind: kind }),
    clock,
    logger,
    dedupWindowMs: deps.dedupWindowMs,
    ...(deps.capture ? { capture: deps.capture } : {}),
    ...(deps.enrichment ? { enrichment: deps.enrichment } : {}),
    ...(deps.detection ? { detection: deps.detection } : {}),
  });

  // An organization's data goes with it; bounded deletes so no statement holds a huge transaction.
  for (const table of ORG_TABLES) {
    deps.dataDeletion.addStep({
      name: table,
      run: async (organizationId) => {
        let rows = 0;
        let n: number;
        do {
          n = await store.deleteOrgRows(table, organizationId, DELETE_CHUNK);
          rows += n;
        } while (n === DELETE_CHUNK);
        return { rows };
      },
    });
  }

  const flushMs = deps.aggregateFlushMs ?? 5_000;
  const flushTimer = setInterval(() => void aggregates.flush(clock.now()), flushMs);
  flushTimer.unref();
  const work = housekeeping(store, clock);

  return {
    service,
    registry,
    aggregates,
    housekeeping: work,
    jobs: [normalizeJobs({ service, tracer: telemetry.tracer, concurrency: deps.concurrency }), housekeepingJobs(work)],
    beatTasks: housekeepingTasks(deps.queue),
    /** Writes the last aggregates; call after the consumers stopped. */
    async close(): Promise<void> {
      clearInterval(flushTimer);
      await aggregates.flush(clock.now());
      await pool?.close();
    },
  };
}

export type Normalization = ReturnType<typeof wireNormalization>;
