// What normalization learns on the side, kept in memory and written every few seconds so
// the batch path does no extra database work: drift (raw fields the live mapping does not
// read, estimated from a sample of each batch), OCSF compliance per class and day, and raw
// samples of each stream for mapping authors. Losing a few seconds of it in a crash costs
// estimates, never events (the events and their counters are written with the batch).
import { newId } from '../../core/ids.js';
import type { Logger } from '../../platform/logger.js';
import type { IngestBatch } from '../../pipeline/envelope.js';
import { maskValue } from '../../pipeline/mask.js';
import { joinPathKey } from '../../pipeline/normalize/paths.js';
import { parseRaw, type ClassCompliance, type StageResult } from '../../pipeline/normalize/stage.js';

/** What the aggregates read of a batch's outcome. */
type BatchOutcome = Pick<StageResult, 'driftSample' | 'driftRaw' | 'mapped' | 'base' | 'compliance'>;
import type { ComplianceRow, DriftRow, NormalizationStore, SampleRow } from './store.js';

export const AGGREGATE_LIMITS = {
  /** Distinct (integration, stream, path) kept between flushes; further new ones wait for the next. */
  driftKeys: 20_000,
  /** Leaves read from one sampled event, levels descended, elements looked at per array. */
  leavesPerEvent: 256,
  depth: 12,
  arrayElements: 5,
  exampleLength: 200,
  /** At most one raw-sample write per (integration, stream) this often, of this many events. */
  sampleEveryMs: 10_000,
  samplesPerWrite: 5,
  /** Rows per statement when flushing. */
  chunk: 1_000,
} as const;

type ValueType = 'string' | 'number' | 'boolean' | 'null' | 'object' | 'array';

interface DriftEntry {
  organization_id: number;
  integration_id: number;
  stream: string;
  path: string;
  count: number;
  value_type: ValueType;
  example: string;
  first: Date;
  last: Date;
}

interface ComplianceEntry extends ClassCompliance {
  organization_id: number;
  integration_id: number;
  class_uid: number;
  day: string;
  lastInvalidAt: Date | null;
}

function typeOf(value: unknown): ValueType {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  const t = typeof value;
  return t === 'string' || t === 'number' || t === 'boolean' || t === 'object' ? t : 'string';
}

function example(path: string, value: unknown): string {
  const masked = maskValue(path, value);
  const text = typeof masked === 'string' ? masked : (JSON.stringify(masked) ?? String(masked));
  return text.length > AGGREGATE_LIMITS.exampleLength ? `${text.slice(0, AGGREGATE_LIMITS.exampleLength - 1)}…` : text;
}

const ancestorsOf = new WeakMap<ReadonlySet<string>, ReadonlySet<string>>();

/** Every proper prefix of a path of `reads` that is itself a path (`a`, `a.b` of `a.b.c`; `x` of `x[].y`). */
function ancestors(reads: ReadonlySet<string>): ReadonlySet<string> {
  let found = ancestorsOf.get(reads);
  if (!found) {
    const set = new Set<string>();
    for (const path of reads)
      for (let i = 1; i < path.length; i++) if (path[i] === '.' || path[i] === '[') set.add(path.slice(0, i));
    found = set;
    ancestorsOf.set(reads, found);
  }
  return found;
}

/**
 * Calls `leaf` for every leaf of `raw` that `reads` does not cover (drift passes
 * CompiledMapping.expected: what the mapping reads and its known_fields). Paths are spelled as
 * in CompiledMapping.reads (dotted, arrays as `[]`, odd keys as `["a.b"]`); a path covers its
 * subtree.
 * Empty objects and arrays are leaves. A null, empty object or empty array where `reads` knows
 * fields below (Okta's `"authenticationContext": {}`, `"actor": null`) is a known field without a
 * value this time, not a new one.
 */
export function unreadLeaves(
  raw: Record<string, unknown>,
  reads: ReadonlySet<string>,
  leaf: (path: string, value: unknown) => void,
): void {
  let budget: number = AGGREGATE_LIMITS.leavesPerEvent;
  const parents = ancestors(reads);
  const walk = (value: unknown, path: string, depth: number): void => {
    if (budget <= 0) return;
    if (value === null && parents.has(path)) return;
    if (value === null || typeof value !== 'object') {
      // A lone value read as a one-element list (`each`, `[*]`) is read.
      if (reads.has(`${path}[]`)) return;
      budget--;
      leaf(path, value);
      return;
    }
    if (depth >= AGGREGATE_LIMITS.depth) return;
    if (Array.isArray(value)) {
      if (value.length === 0) {
        if (parents.has(path)) return;
        budget--;
        leaf(path, value);
        return;
      }
      const inner = `${path}[]`;
      if (reads.has(inner)) return;
      const n = Math.min(value.length, AGGREGATE_LIMITS.arrayElements);
      for (let i = 0; i < n; i++) walk(value[i], inner, depth + 1);
      return;
    }
    const keys = Object.keys(value);
    if (keys.length === 0 && path !== '') {
      if (parents.has(path)) return;
      budget--;
      leaf(path, value);
      return;
    }
    for (const key of keys) {
      const child = joinPathKey(path, key);
      if (!reads.has(child)) walk((value as Record<string, unknown>)[key], child, depth + 1);
    }
  };
  walk(raw, '', 0);
}

export type AggregateStore = Pick<NormalizationStore, 'upsertDrift' | 'upsertCompliance' | 'insertSamples'>;

export function createAggregates(deps: { store: AggregateStore; logger: Logger }) {
  const { store, logger } = deps;
  let drift = new Map<string, DriftEntry>();
  let compliance = new Map<string, ComplianceEntry>();
  let samples: SampleRow[] = [];
  const lastSample = new Map<string, number>();
  let droppedDrift = 0;
  let flushing: Promise<void> = Promise.resolve();

  function recordDrift(batch: IngestBatch, result: BatchOutcome, reads: ReadonlySet<string>, now: Date): void {
    const sample = result.driftSample;
    if (sample.length === 0) return;
    // Each sampled event stands for (mapped - Base Events)/sample events of the batch.
    const weight = (result.mapped - result.base) / sample.length;
    const seen = new Map<string, { n: number; last: number; value: unknown }>();
    for (let k = 0; k < sample.length; k++) {
      const index = sample[k]!;
      unreadLeaves(result.driftRaw[k]!, reads, (path, value) => {
        const s = seen.get(path);
        if (!s) seen.set(path, { n: 1, last: index, value });
        else if (s.last !== index) {
          s.n++;
          s.last = index;
        }
      });
    }
    for (const [path, s] of seen) {
      const key = `${batch.integration_id}\u0000${batch.stream}\u0000${path}`;
      const entry = drift.get(key);
      if (entry) {
        entry.count += s.n * weight;
        entry.last = now;
        entry.value_type = typeOf(s.value);
        entry.example = example(path, s.value);
        continue;
      }
      if (drift.size >= AGGREGATE_LIMITS.driftKeys) {
        droppedDrift++;
        continue;
      }
      drift.set(key, {
        organization_id: batch.organization_id,
        integration_id: batch.integration_id,
        stream: batch.stream,
        path,
        count: s.n * weight,
        value_type: typeOf(s.value),
        example: example(path, s.value),
        first: now,
        last: now,
      });
    }
  }

  function recordSamples(batch: IngestBatch, now: Date): void {
    const key = `${batch.integration_id}\u0000${batch.stream}`;
    const last = lastSample.get(key);
    if (last !== undefined && now.getTime() - last < AGGREGATE_LIMITS.sampleEveryMs) return;
    if (batch.events.length === 0) return;
    lastSample.set(key, now.getTime());
    for (const event of batch.events.slice(0, AGGREGATE_LIMITS.samplesPerWrite)) {
      const raw = parseRaw(event);
      if (raw === undefined) continue;
      samples.push({
        id: newId(),
        organization_id: batch.organization_id,
        integration_id: batch.integration_id,
        stream: batch.stream,
        received_at: batch.received_at,
        raw,
      });
    }
  }

  function recordCompliance(
    organizationId: number,
    integrationId: number,
    byClass: Map<number, ClassCompliance>,
    now: Date,
  ): void {
    const day = now.toISOString().slice(0, 10);
    for (const [classUid, c] of byClass) {
      const key = `${integrationId}\u0000${classUid}\u0000${day}`;
      let entry = compliance.get(key);
      if (!entry) {
        entry = {
          organization_id: organizationId,
          integration_id: integrationId,
          class_uid: classUid,
          day,
          valid: 0,
          invalid: 0,
          lastError: null,
          lastInvalidAt: null,
        };
        compliance.set(key, entry);
      }
      entry.valid += c.valid;
      entry.invalid += c.invalid;
      if (c.invalid > 0) {
        entry.lastError = c.lastError;
        entry.lastInvalidAt = now;
      }
    }
  }

  async function write(
    d: Map<string, DriftEntry>,
    c: Map<string, ComplianceEntry>,
    s: SampleRow[],
    now: Date,
  ): Promise<void> {
    const driftRows: DriftRow[] = [...d.values()].map((e) => ({
      id: newId(),
      organization_id: e.organization_id,
      integration_id: e.integration_id,
      stream: e.stream,
      path: e.path,
      value_type: e.value_type,
      count: Math.max(1, Math.round(e.count)),
      example: e.example,
      first_seen_at: e.first.toISOString(),
      last_seen_at: e.last.toISOString(),
    }));
    const complianceRows: ComplianceRow[] = [...c.values()].map((e) => ({
      organization_id: e.organization_id,
      integration_id: e.integration_id,
      class_uid: e.class_uid,
      day: e.day,
      valid: e.valid,
      invalid: e.invalid,
      last_error: e.lastError,
      last_invalid_at: e.lastInvalidAt?.toISOString() ?? null,
    }));
    const { chunk } = AGGREGATE_LIMITS;
    for (let i = 0; i < driftRows.length; i += chunk) await store.upsertDrift(driftRows.slice(i, i + chunk), now);
    for (let i = 0; i < complianceRows.length; i += chunk)
      await store.upsertCompliance(complianceRows.slice(i, i + chunk));
    for (let i = 0; i < s.length; i += chunk) await store.insertSamples(s.slice(i, i + chunk));
  }

  return {
    /** After a batch committed: its drift sample (when a mapping applied), samples and compliance. */
    recordBatch(batch: IngestBatch, result: BatchOutcome, reads: ReadonlySet<string> | undefined, now: Date): void {
      if (reads) recordDrift(batch, result, reads, now);
      recordSamples(batch, now);
      recordCompliance(batch.organization_id, batch.integration_id, result.compliance, now);
    },

    recordCompliance,

    /** Writes what was gathered since the last flush; a failed write is logged and dropped. */
    flush(now: Date = new Date()): Promise<void> {
      flushing = flushing.then(async () => {
        if (drift.size === 0 && compliance.size === 0 && samples.length === 0) return;
        const d = drift;
        const c = compliance;
        const s = samples;
        drift = new Map();
        compliance = new Map();
        samples = [];
        if (droppedDrift > 0) {
          logger.warn(
            { dropped: droppedDrift, limit: AGGREGATE_LIMITS.driftKeys },
            'too many new drift fields between flushes; the rest are counted later',
          );
          droppedDrift = 0;
        }
        try {
          await write(d, c, s, now);
        } catch (err) {
          logger.warn(
            { err, drift: d.size, compliance: c.size, samples: s.length },
            'normalization aggregates could not be written',
          );
        }
      });
      return flushing;
    },

    /** Entries waiting for the next flush (tests, diagnostics). */
    pending(): { drift: number; compliance: number; samples: number } {
      return { drift: drift.size, compliance: compliance.size, samples: samples.length };
    },
  };
}

export type Aggregates = ReturnType<typeof createAggregates>;
