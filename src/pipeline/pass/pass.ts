// The one pass over an ingest batch (docs/architecture.md, An event): each raw event is
// parsed once, mapped, validated, planned against the organization's routes on the
// in-memory object, and serialized once per distinct output. Pure (no I/O, no clock): it
// runs inline or on a worker thread (pool.ts); the caller writes what it returns in one
// transaction (modules/normalization/service.ts).
import { buildRoutingWrite, type RoutableDestination } from '../delivery/routing-write.js';
import type { RoutingWrite } from '../delivery/engine-port.js';
import type { IngestBatch } from '../envelope.js';
import {
  normalizeBatch,
  type OcsfPolicyMode,
  type StageContext,
  type StageMapping,
  type StageResult,
} from '../normalize/stage.js';
import type { OrgRoutes } from '../delivery/routes-cache.js';
import type { CompiledRoutes } from '../route/types.js';
import { drainWanted, type EnrichmentJob } from '../enrich/live.js';
import type { CompiledDetection, DetectionJob, DetectOutput } from '../detect/evaluate.js';
import { startTimings, type PassTimings } from './timings.js';

export interface PassContext extends StageContext {
  routes: CompiledRoutes;
  /** The destinations snapshot: copies for destinations missing from it are not made (see missing). */
  destinations: ReadonlyMap<string, RoutableDestination>;
  lineage: boolean;
  /** The organization's compiled detection rules, when it has any. */
  detect?: CompiledDetection;
}

/** The stage's outcome without its records (they stay in the pass). */
export type PassStage = Omit<StageResult, 'records' | 'texts'>;

export interface PassResult {
  stage: PassStage;
  write: RoutingWrite;
  /** A route names a destination the snapshot does not know (created a moment ago): refresh it and run the pass again. */
  missing: boolean;
  /** External enrichment keys the cache could not answer, by source id (fetched after the pass). */
  wanted?: [string, string[]][];
  /** Detection: rule hits and vendor findings (settled by the main thread in the batch's transaction). */
  detect?: DetectOutput;
  /** When each stage ended (the trace's stage spans). */
  timings: PassTimings;
}

export function runPass(batch: IngestBatch, ctx: PassContext): PassResult {
  const { timings, lap } = startTimings();
  const { records, texts, ...stage } = normalizeBatch(batch, ctx, lap);
  const plan = ctx.routes.plan(records, texts);
  lap('route');
  let missing = false;
  for (const id of plan.copies.keys()) if (!ctx.destinations.has(id)) missing = true;
  // The routes' transforms (drop, keep, sample, mask) and one serialization per distinct copy.
  const write = buildRoutingWrite(batch, records, plan, ctx.destinations, ctx.lineage);
  lap('transform');
  const wanted = ctx.enrich ? drainWanted() : [];
  const detect = ctx.detect?.evaluate(records);
  if (ctx.detect) lap('detect');
  const found = detect && (detect.hits.length > 0 || detect.findings.length > 0) ? { detect } : {};
  return wanted.length > 0
    ? { stage, write, missing, wanted, timings, ...found }
    : { stage, write, missing, timings, ...found };
}

/** A live mapping version with its document (a pass thread compiles the document for itself). */
export interface PassMapping extends StageMapping {
  document: Record<string, unknown>;
}

/** Everything one pass over a batch needs, resolved by the caller. */
export interface PassJob {
  batch: IngestBatch;
  mapping: PassMapping | undefined;
  policy: OcsfPolicyMode;
  receivedAt?: readonly string[];
  routes: OrgRoutes;
  destinations: ReadonlyMap<string, RoutableDestination>;
  lineage: boolean;
  /** The organization's live enrichment; absent when it has none. */
  enrichment?: EnrichmentJob;
  /** The organization's live detection rules; absent when it has none. */
  detection?: DetectionJob;
}

/** Runs the pass (inline, or on a worker thread: pool.ts) and returns it with the outbox rows encoded. */
export type PassRunner = (job: PassJob) => Promise<PassResult>;
