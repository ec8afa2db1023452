// The one pass around the pure code (pipeline/pass): which mapping, policy, routes and
// destinations apply, and how a batch's whole outcome (outbox rows, quarantine, ledger,
// counters, lineage) is stored in ONE transaction, once however often its job is delivered.
// Quarantined events are reprocessed through the same pass with the current live mapping.
import { afterSettle } from '../../platform/db/ambient.js';
import type { Clock } from '../../core/clock.js';
import { newId } from '../../core/ids.js';
import type { Logger } from '../../platform/logger.js';
import type { IngestBatch, QuarantineKind } from '../../pipeline/envelope.js';
import type { RoutableDestination } from '../../pipeline/delivery/routing-write.js';
import type { PassJob, PassResult, PassRunner, PassStage } from '../../pipeline/pass/pass.js';
import type { LiveMapping } from './registry.js';
import type { DetectionJob } from '../../pipeline/detect/evaluate.js';
import type { NormalizedRecord } from '../../pipeline/envelope.js';
import { buildRoutingWrite, encodeDeliveries } from '../../pipeline/delivery/routing-write.js';
import type { Aggregates } from './aggregates.js';
import type { MappingRegistry } from './registry.js';
import type { DetectedBatch, PassDetection, PassEnrichment, PassRouting } from './ports.js';
import type { NormalizationStore } from './store.js';

// The pass's ports are part of this service's contract (wireNormalization, the detections module).
export type { DetectedBatch, PassDetection, PassEnrichment, PassRouting } from './ports.js';

/** A quarantined event handed back (the quarantine module's ReprocessItem). */
export interface ReprocessItem {
  id: string;
  organization_id: number;
  integration_id: number;
  stream: string;
  received_at: Date;
  raw: Record<string, unknown>;
}

export interface ReprocessOutcome {
  id: string;
  ok: boolean;
  error_kind?: QuarantineKind;
  error_detail?: string;
  mapping_version_id: string | null;
}

export interface BatchOutcome {
  /** The batch had been stored before (a redelivered job); nothing was written or counted again. */
  duplicate: boolean;
  normalized: number;
  flagged: number;
  quarantined: number;
}

export interface NormalizationDeps {
  store: Pick<
    NormalizationStore,
    | 'insertBatch'
    | 'settleAccepted'
    | 'insertQuarantine'
    | 'addCounters'
    | 'integrationPlatforms'
    | 'seenKeys'
    | 'rememberKeys'
    | 'recentSamples'
  >;
  registry: MappingRegistry;
  aggregates: Aggregates;
  routing: PassRouting;
  runPass: PassRunner;
  /** Runs fn in a transaction, or joins the caller's. */
  transaction: <T>(fn: () => Promise<T>) => Promise<T>;
  /** Runs fn once the caller's transaction committed (at once outside one). */
  afterCommit: (fn: () => Promise<void>) => Promise<void>;
  /** collector_quarantine_total. */
  countQuarantined: (organizationId: number, integrationId: number, kind: QuarantineKind, n: number) => void;
  clock: Clock;
  logger: Logger;
  /** How long collected events' vendor keys deduplicate (collector setting dedup_hours). */
  dedupWindowMs: () => Promise<number>;
  /** Live capture: sees every stored batch (push and pull) after it committed. */
  capture?: { record(batch: IngestBatch): Promise<void> };
  /** Enrichment (the enrichment module's pass): the live policies, the live series, background lookups. */
  enrichment?: PassEnrichment;
  /** Detection (the detections module): the live rules, and settling what the pass found. */
  detection?: PassDetection;
}

/** Another worker stored some of this batch's keys meanwhile: the job is retried, and the retry drops them. */
export class DuplicateKeysRace extends Error {
  constructor(batchId: string) {
    super(`batch ${batchId}: some of its events were collected by a concurrent batch; retrying drops them`);
    this.name = 'DuplicateKeysRace';
  }
}

/**
 * Pulled batches: the events whose vendor key was accepted within the deduplication period,
 * or repeats a key earlier in the same batch, are dropped. Returns the batch to normalize
 * and how many were dropped.
 */
async function withoutSeen(
  batch: IngestBatch,
  seenKeys: (keys: string[]) => Promise<string[]>,
): Promise<{ batch: IngestBatch; duplicates: number }> {
  const keys = batch.keys;
  if (!keys || keys.length !== batch.events.length || keys.length === 0) return { batch, duplicates: 0 };
  const seen = new Set(await seenKeys(keys));
  const keep: number[] = [];
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    if (seen.has(key)) continue;
    seen.add(key);
    keep.push(i);
  }
  if (keep.length === keys.length) return { batch, duplicates: 0 };
  const bytes = Math.round((batch.bytes * keep.length) / keys.length);
  return {
    batch: {
      ...batch,
      ids: keep.map((i) => batch.ids[i]!),
      events: keep.map((i) => batch.events[i]!),
      keys: keep.map((i) => keys[i]!),
      bytes,
    },
    duplicates: keys.length - keep.length,
  };
}

function countByKind(result: PassStage): Map<QuarantineKind, number> {
  const byKind = new Map<QuarantineKind, number>();
  for (const q of result.quarantined) byKind.set(q.error_kind, (byKind.get(q.error_kind) ?? 0) + 1);
  return byKind;
}

export function createNormalizationService(deps: NormalizationDeps) {
  const { store, registry, aggregates, transaction, clock, logger } = deps;

  /**
   * The batch's mark of exactly-once: its outcome is written with it, in the same
   * transaction, and a redelivered job finds it. It holds no events (the pass routed them).
   */
  function batchMark(batch: IngestBatch, result: PassStage, source: string, bytes: number, now: Date) {
    return {
      id: batch.id,
      organization_id: batch.organization_id,
      integration_id: batch.integration_id,
      stream: batch.stream,
      source,
      event_count: result.normalized,
      flagged_count: result.flagged,
      quarantined_count: result.quarantined.length,
      bytes,
      events: '',
      route_state: 'done',
      created_at: now,
    };
  }

  /** Runs the pass; a route naming a destination created a moment ago gets a fresh snapshot and a second run. */
  async function pass(
    batch: IngestBatch,
    mapping: LiveMapping | undefined,
    receivedAt?: readonly string[],
  ): Promise<PassResult & { detection?: DetectionJob }> {
    const routes = await deps.routing.routes(batch.organization_id);
    const enrichment = await deps.enrichment?.job(batch.organization_id);
    const detection = await deps.detection?.job(batch.organization_id);
    const job = (destinations: ReadonlyMap<string, RoutableDestination>): PassJob => ({
      batch,
      mapping,
      policy: registry.policy(batch.organization_id),
      ...(receivedAt ? { receivedAt } : {}),
      routes,
      destinations,
      lineage: deps.routing.lineage,
      ...(enrichment ? { enrichment } : {}),
      ...(detection ? { detection } : {}),
    });
    let result = await deps.runPass(job(await deps.routing.destinations(false)));
    if (result.missing) result = await deps.runPass(job(await deps.routing.destinations(true)));
    if (result.wanted && deps.enrichment) deps.enrichment.wanted(result.wanted);
    return detection ? { ...result, detection } : result;
  }

  /**
   * Routes events Weir made from a batch (detection findings) and counts them in as events of
   * their own stream, in the open transaction: the ledger balances with them.
   */
  async function emit(ref: DetectedBatch, records: NormalizedRecord[], at: Date): Promise<void> {
    if (records.length === 0) return;
    const routes = (await deps.routing.routes(ref.organization_id)).compiled();
    const texts = records.map((r) => JSON.stringify(r.ocsf));
    const plan = routes.plan(records, texts);
    let destinations = await deps.routing.destinations(false);
    if ([...plan.copies.keys()].some((id) => !destinations.has(id)))
      destinations = await deps.routing.destinations(true);
    const write = buildRoutingWrite(
      { id: newId(), organization_id: ref.organization_id, integration_id: ref.integration_id, stream: ref.stream },
      records,
      plan,
      destinations,
      deps.routing.lineage,
    );
    await encodeDeliveries(write);
    await deps.routing.prepare?.(write);
    const bytes = texts.reduce((n, t) => n + Buffer.byteLength(t), 0);
    await store.addCounters({
      organization_id: ref.organization_id,
      integration_id: ref.integration_id,
      stream: ref.stream,
      at,
      events_in: records.length,
      bytes_in: bytes,
      duplicates: 0,
      normalized: records.length,
      flagged: 0,
      quarantined: 0,
      last_event_at: at,
    });
    await deps.routing.write(write, at);
  }

  /** Detection's part of a batch's transaction. */
  async function settleDetections(
    batch: DetectedBatch,
    out: PassResult & { detection?: DetectionJob },
    at: Date,
  ): Promise<void> {
    if (out.detect && deps.detection) await deps.detection.record(batch, out.detect, out.detection, at, emit);
  }

  async function normalize(received: IngestBatch): Promise<BatchOutcome> {
    // Only the ingestion code enqueues batches; a malformed one is a bug, failed loudly (the job ends failed).
    if (
      !Array.isArray(received.events) ||
      !Array.isArray(received.ids) ||
      received.ids.length !== received.events.length
    ) {
      throw new Error(`malformed ingest batch ${String(received.id)}: ids and events differ in length`);
    }
    const since = new Date(clock.now().getTime() - (await deps.dedupWindowMs()));
    const { batch, duplicates } = await withoutSeen(received, (keys) =>
      store.seenKeys(received.integration_id, received.stream, keys, since),
    );
    await registry.refreshIfStale();
    const { mapping, known } = registry.resolve(
      batch.organization_id,
      batch.platform,
      batch.stream,
      batch.integration_id,
    );
    if (!known) {
      await registry.ensureDefinition(batch.organization_id, batch.platform, batch.stream).catch((err: unknown) => {
        logger.warn(
          { err, organization_id: batch.organization_id, platform: batch.platform, stream: batch.stream },
          'could not create a mapping definition for a new stream',
        );
      });
    }
    const passed = await pass(batch, mapping);
    const { stage: result, write } = passed;
    const now = clock.now();
    const quarantined = result.quarantined.length;

    // The batch's mark, its outbox rows, quarantine, ledger, counters and lineage commit
    // together, and only if the mark is new: a job redelivered after a crash finds it and
    // writes or counts nothing twice. The accepted row goes in the same transaction, so the
    // ledger sees the batch's events queued, or counted in and routed: never both, never neither.
    const row = batchMark(batch, result, batch.source, batch.bytes, now);
    await deps.routing.prepare?.(write);
    let stored: boolean;
    try {
      stored = await transaction(async () => {
        await store.settleAccepted(batch);
        if (!(await store.insertBatch(row))) return false;
        if (batch.keys && batch.keys.length > 0) {
          const remembered = await store.rememberKeys(batch.integration_id, batch.stream, batch.keys, now, since);
          if (remembered !== batch.keys.length) throw new DuplicateKeysRace(batch.id);
        }
        await store.insertQuarantine(
          result.quarantined.map((q) => ({
            id: q.id,
            organization_id: batch.organization_id,
            integration_id: batch.integration_id,
            stream: batch.stream,
            received_at: q.received_at,
            raw: q.raw,
            error_kind: q.error_kind,
            error_detail: q.error_detail,
            mapping_version_id: q.mapping_version_id,
          })),
          now,
        );
        await store.addCounters({
          organization_id: batch.organization_id,
          integration_id: batch.integration_id,
          stream: batch.stream,
          at: new Date(batch.received_at),
          events_in: batch.events.length,
          bytes_in: batch.bytes,
          duplicates,
          normalized: result.normalized,
          flagged: result.flagged,
          quarantined,
          last_event_at: new Date(batch.received_at),
        });
        await deps.routing.write(write, now);
        if (result.enrichment && deps.enrichment)
          await deps.enrichment.record(batch.organization_id, result.enrichment, now);
        await settleDetections(batch, passed, now);
        return true;
      });
    } finally {
      // Inside a caller's transaction (a reprocess joins one), its end is what counts.
      afterSettle(() => deps.routing.release?.(write));
    }
    if (!stored) {
      logger.info({ batch_id: batch.id }, 'batch was normalized before (redelivered job); skipped');
      return { duplicate: true, normalized: 0, flagged: 0, quarantined: 0 };
    }
    if (write.deliveries.length > 0) deps.routing.written?.(write);
    for (const [kind, n] of countByKind(result))
      deps.countQuarantined(batch.organization_id, batch.integration_id, kind, n);
    if (duplicates > 0) logger.debug({ batch_id: batch.id, duplicates }, 'collected events seen before were dropped');
    aggregates.recordBatch(batch, result, mapping?.compiled.expected, now);
    if (deps.capture && batch.events.length > 0) {
      await deps.capture
        .record(batch)
        .catch((err: unknown) => logger.warn({ err, batch_id: batch.id }, 'live capture could not record a batch'));
    }
    return { duplicate: false, normalized: result.normalized, flagged: result.flagged, quarantined };
  }

  async function reprocess(items: ReprocessItem[]): Promise<ReprocessOutcome[]> {
    if (items.length === 0) return [];
    // A version published a moment ago must be the one used.
    await registry.refresh();
    const platforms = await store.integrationPlatforms([...new Set(items.map((i) => i.integration_id))]);
    const groups = new Map<string, ReprocessItem[]>();
    for (const item of items) {
      const key = `${item.organization_id}\u0000${item.integration_id}\u0000${item.stream}`;
      const group = groups.get(key);
      if (group) group.push(item);
      else groups.set(key, [item]);
    }
    const outcomes = new Map<string, ReprocessOutcome>();
    const now = clock.now();
    for (const group of groups.values()) {
      const first = group[0]!;
      const platform = platforms.get(first.integration_id);
      if (platform === undefined) {
        for (const item of group) {
          outcomes.set(item.id, {
            id: item.id,
            ok: false,
            error_kind: 'no_mapping',
            error_detail: 'the integration no longer exists',
            mapping_version_id: null,
          });
        }
        continue;
      }
      const batch: IngestBatch = {
        id: newId(),
        organization_id: first.organization_id,
        integration_id: first.integration_id,
        platform,
        stream: first.stream,
        received_at: first.received_at.toISOString(),
        source: 'reprocess',
        ids: group.map((i) => i.id),
        events: group.map((i) => i.raw),
        bytes: 0,
      };
      const { mapping } = registry.resolve(batch.organization_id, platform, batch.stream, batch.integration_id);
      const passed = await pass(
        batch,
        mapping,
        group.map((i) => i.received_at.toISOString()),
      );
      const { stage: result, write } = passed;
      const failed = new Set<number>();
      for (const q of result.quarantined) {
        failed.add(q.index);
        outcomes.set(q.id, {
          id: q.id,
          ok: false,
          error_kind: q.error_kind,
          error_detail: q.error_detail,
          mapping_version_id: q.mapping_version_id,
        });
      }
      group.forEach((item, index) => {
        if (!failed.has(index))
          outcomes.set(item.id, { id: item.id, ok: true, mapping_version_id: mapping?.versionId ?? null });
      });
      if (result.normalized === 0) continue;
      const bytes = group.reduce(
        (n, i, index) => (failed.has(index) ? n : n + Buffer.byteLength(JSON.stringify(i.raw))),
        0,
      );
      // Inside the caller's transaction when there is one: the quarantine rows change with it.
      const row = batchMark(batch, { ...result, quarantined: [] }, 'reprocess', bytes, now);
      await deps.routing.prepare?.(write);
      // Counters before the routing write, as a first pass does: every transaction locks the
      // stream's counters (and their hour) before its ledger rows, so none waits on another crosswise.
      await transaction(async () => {
        await store.insertBatch(row);
        // Events in were counted when the events first arrived; only the outcome is new.
        await store.addCounters({
          organization_id: batch.organization_id,
          integration_id: batch.integration_id,
          stream: batch.stream,
          at: now,
          events_in: 0,
          bytes_in: 0,
          duplicates: 0,
          normalized: result.normalized,
          flagged: result.flagged,
          quarantined: 0,
          quarantine_released: result.normalized,
          last_event_at: null,
        });
        await deps.routing.write(write, now);
        if (result.enrichment && deps.enrichment)
          await deps.enrichment.record(batch.organization_id, result.enrichment, now);
        await settleDetections(batch, passed, now);
      });
      await deps.afterCommit(async () => {
        aggregates.recordCompliance(batch.organization_id, batch.integration_id, result.compliance, now);
        if (write.deliveries.length > 0) deps.routing.written?.(write);
      });
    }
    return items.map((i) => outcomes.get(i.id)!);
  }

  /** The organization's recent raw samples mapped by the live mappings (enrichment dry-runs); unmapped ones are left out. */
  async function recentEvents(organizationId: number, limit: number): Promise<Record<string, unknown>[]> {
    await registry.refreshIfStale();
    const out: Record<string, unknown>[] = [];
    for (const s of await store.recentSamples(organizationId, limit)) {
      const { mapping } = registry.resolve(organizationId, s.platform, s.stream, s.integration_id);
      const raw = s.raw as Record<string, unknown>;
      if (!mapping || typeof raw !== 'object' || raw === null) continue;
      const res = mapping.compiled.map(raw, { receivedAtMs: new Date(s.received_at).getTime() });
      if (res.ok) out.push(res.event);
    }
    return out;
  }

  return { normalize, reprocess, recentEvents };
}

export type NormalizationService = ReturnType<typeof createNormalizationService>;
