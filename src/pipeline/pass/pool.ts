// The pass on a pool of worker threads (piscina): the embedded `weir all` keeps HTTP and
// PGlite on its main thread and runs the pass of each batch on another core. A task carries
// the batch (the raw texts as accepted), the mapping document and route specs (each thread
// compiles and caches them by version and fingerprint) and the destinations snapshot.
import { availableParallelism } from 'node:os';
import { Piscina } from 'piscina';
import type { RoutableDestination } from '../delivery/routing-write.js';
import type { RouteSpec } from '../route/types.js';
import type { IngestBatch } from '../envelope.js';
import type { OcsfPolicyMode } from '../normalize/stage.js';
import type { EnrichmentJob } from '../enrich/live.js';
import type { DetectionJob } from '../detect/evaluate.js';
import type { PassResult, PassRunner } from './pass.js';

/** What crosses to a thread (structured clone). */
export interface PassTask {
  batch: IngestBatch;
  /** passthrough: the stream's events are already OCSF (no document; versionId null). */
  mapping: { versionId: string | null; document: Record<string, unknown>; passthrough?: true } | null;
  policy: OcsfPolicyMode;
  receivedAt?: readonly string[];
  routes: { fingerprint: string; specs: RouteSpec[] };
  destinations: [string, RoutableDestination][];
  lineage: boolean;
  /** Policies and resource refs as they are; table bytes are shared memory (not copied). */
  enrichment?: EnrichmentJob;
  /** The organization's live detection rules (compiled and cached by the thread per fingerprint). */
  detection?: DetectionJob;
}

/** Threads by default for the embedded process: every core but the main thread's, at least one. */
export function defaultPassThreads(): number {
  return Math.max(1, Math.min(availableParallelism() - 1, 4));
}

export function createPassPool(threads: number): { run: PassRunner; close(): Promise<void> } {
  // Built code runs the compiled thread; tests run the TypeScript source through tsx.
  const source = import.meta.url.endsWith('.ts');
  const pool = new Piscina<PassTask, PassResult>({
    filename: new URL(source ? './thread.ts' : './thread.js', import.meta.url).href,
    minThreads: threads,
    maxThreads: threads,
    // One batch per thread at a time; the rest wait here (the normalize consumers bound how many).
    concurrentTasksPerWorker: 1,
    idleTimeout: Infinity,
    // A batch's parsed and mapped events die young: a larger young generation lets them die
    // there instead of being copied out by scavenges (GC was a quarter of a thread's time).
    resourceLimits: { maxYoungGenerationSizeMb: 96 },
    ...(source ? { execArgv: ['--import', 'tsx'] } : {}),
  });
  return {
    run: (job) =>
      pool.run({
        batch: job.batch,
        mapping: job.mapping
          ? {
              versionId: job.mapping.versionId,
              document: job.mapping.document,
              ...(job.mapping.passthrough ? { passthrough: job.mapping.passthrough } : {}),
            }
          : null,
        policy: job.policy,
        ...(job.receivedAt ? { receivedAt: job.receivedAt } : {}),
        routes: { fingerprint: job.routes.fingerprint, specs: job.routes.specs },
        destinations: [...job.destinations].map(([id, d]) => [
          id,
          {
            organization_id: d.organization_id,
            enabled: d.enabled,
            disabled_reason: d.disabled_reason,
            shadow_destination_id: d.shadow_destination_id,
            type: d.type,
          },
        ]),
        lineage: job.lineage,
        ...(job.enrichment ? { enrichment: job.enrichment } : {}),
        ...(job.detection ? { detection: job.detection } : {}),
      }),
    close: () => pool.destroy(),
  };
}
