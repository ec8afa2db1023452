// What the pass needs of the other modules: routing and delivery, detection, enrichment. Each
// module hands its part to wireNormalization; the pass sees only these shapes.
import type { DetectionJob, DetectOutput } from '../../pipeline/detect/evaluate.js';
import type { RoutingWrite } from '../../pipeline/delivery/engine-port.js';
import type { RoutableDestination } from '../../pipeline/delivery/routing-write.js';
import type { OrgRoutes } from '../../pipeline/delivery/routes-cache.js';
import type { EnrichmentJob } from '../../pipeline/enrich/live.js';
import type { PolicyCounters } from '../../pipeline/enrich/policy.js';
import type { NormalizedRecord } from '../../pipeline/envelope.js';

/** What the pass needs of routing and delivery (the delivery module's passRouting). */
export interface PassRouting {
  lineage: boolean;
  routes(organizationId: number): Promise<OrgRoutes>;
  /** The destinations snapshot; `refresh` asks for a fresh one (a route names an unknown destination). */
  destinations(refresh: boolean): Promise<ReadonlyMap<string, RoutableDestination>>;
  /** What the write needs before its transaction (the event store's copies, the outbox bodies in the body log). */
  prepare?(write: RoutingWrite): Promise<void>;
  /** The write's transaction ended, committed or not (what prepare pinned may go once no row names it). */
  release?(write: RoutingWrite): void;
  /** Writes the routing write (rows encoded) in the open transaction. */
  write(write: RoutingWrite, at: Date): Promise<void>;
  /** New outbox rows committed (this process's lanes look at once). */
  written?(write: RoutingWrite): void;
}

/** The batch a detection output came from. */
export interface DetectedBatch {
  id: string;
  organization_id: number;
  integration_id: number;
  stream: string;
}

/** What the pass needs of detection (the detections module). */
export interface PassDetection {
  job(organizationId: number): Promise<DetectionJob | undefined>;
  /**
   * Settles what the pass found in the open transaction (windows, suppressions, detections);
   * events it makes (findings) go to `emit`, which routes and counts them in the same transaction.
   */
  record(
    batch: DetectedBatch,
    detect: DetectOutput,
    job: DetectionJob | undefined,
    at: Date,
    emit: (batch: DetectedBatch, records: NormalizedRecord[], at: Date) => Promise<void>,
  ): Promise<unknown>;
}

/** What the pass needs of enrichment (the enrichment module's pass). */
export interface PassEnrichment {
  job(organizationId: number): Promise<EnrichmentJob | undefined>;
  /** Adds a batch's counters to the live series, in the open transaction. */
  record(organizationId: number, counters: readonly PolicyCounters[], at: Date): Promise<void>;
  /** Keys of external sources the pass could not answer from the cache: fetched in the background. */
  wanted(list: readonly [string, string[]][]): void;
}
