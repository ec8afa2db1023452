// The normalization stage: one ingest batch in, its normalized records (in memory, each
// with the JSON text of its OCSF event) and the events that must wait in quarantine out.
// Pure (no I/O, no clock): the one pass (pipeline/pass) and the mapping tools call it. This
// is the hot path (ARCHITECTURE.md, habit 6): a raw event arrives as the text it was
// accepted as and is parsed here, once; its OCSF event is serialized here, once, and that
// text is what every untransformed copy carries to the outbox.
import type { OcsfIssue } from '../../ocsf/types.js';
import type { IngestBatch, NormalizedRecord, QuarantineKind } from '../envelope.js';
import type { PolicyCounters } from '../enrich/policy.js';
import type { CompiledMapping } from './types.js';

export type OcsfPolicyMode = 'strict' | 'lenient';

export interface StageMapping {
  /** null: no mapping version (an already-OCSF stream's events pass through as themselves). */
  versionId: string | null;
  compiled: CompiledMapping;
  /** The stream's events are already OCSF (passthrough.ts): nothing vendor-specific to sample for drift. */
  passthrough?: true;
}

export interface StageContext {
  /** The live mapping of the batch's (organization, platform, stream); absent: no mapping. */
  mapping?: StageMapping | undefined;
  validate: (event: Record<string, unknown>) => readonly OcsfIssue[];
  /** strict: invalid OCSF is quarantined; lenient: delivered with valid=false and its issues. */
  policy: OcsfPolicyMode;
  /** Per-event received_at (reprocessing old events); by default the batch's for all. */
  receivedAt?: readonly string[];
  /** Enriches the mapped records in place before they are serialized; the counters of each policy. */
  enrich?: (records: NormalizedRecord[]) => PolicyCounters[];
}

export interface QuarantinedEvent {
  /** Position in batch.events. */
  index: number;
  id: string;
  received_at: string;
  raw: Record<string, unknown>;
  error_kind: QuarantineKind;
  error_detail: string;
  mapping_version_id: string | null;
}

export interface ClassCompliance {
  valid: number;
  invalid: number;
  /** Summary of the last invalid event of the batch (issue paths and kinds, no values). */
  lastError: string | null;
}

export interface StageResult {
  /** The normalized events, flagged ones included, in batch order. */
  records: NormalizedRecord[];
  /** `texts[i]` is the JSON text of `records[i].ocsf`. */
  texts: string[];
  /** Records, flagged ones included (records.length). */
  normalized: number;
  /** Records delivered with valid=false (lenient policy). */
  flagged: number;
  quarantined: QuarantinedEvent[];
  /** OCSF validity of every mapped event, by class_uid. */
  compliance: Map<number, ClassCompliance>;
  /** Events the mapping turned into OCSF (whatever validation said). */
  mapped: number;
  /** Of those, events delivered as Base Event (class_uid 0): no specific class, so not sampled for drift. */
  base: number;
  /**
   * Indices of a sample of the mapped events (for drift), spread over the batch: every one of a
   * batch of up to DRIFT_MAX_SAMPLE events (so its drift counts are exact), else every
   * driftStride(n)-th, at most DRIFT_MAX_SAMPLE.
   */
  driftSample: number[];
  /** The parsed raw events of driftSample, in the same order. */
  driftRaw: Record<string, unknown>[];
  /** Per enrichment policy that ran: events seen, hits, misses, errors, unanswered, time. */
  enrichment?: PolicyCounters[];
}

export const DRIFT_MAX_SAMPLE = 32;

/** Of a batch of n events, every how many mapped events one is walked for drift. */
export function driftStride(n: number): number {
  return Math.max(1, Math.ceil(n / DRIFT_MAX_SAMPLE));
}
const DETAIL_MAX = 500;
const ISSUES_IN_DETAIL = 3;

/** One line of text, bounded: error details are shown in lists and stored per event. */
export function oneLine(text: string, max = DETAIL_MAX): string {
  const flat = text.replace(/\s*[\r\n]+\s*/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

function more(total: number, shown: number): string {
  return total > shown ? ` (+${total - shown} more)` : '';
}

/** A readable summary of validation issues: paths and kinds only, never the values. */
export function summarizeIssues(issues: readonly OcsfIssue[]): string {
  const missing = issues.filter((i) => i.kind === 'missing_required');
  if (missing.length > 0) {
    const shown = missing.slice(0, ISSUES_IN_DETAIL).map((i) => i.path);
    return oneLine(
      `missing required attribute${missing.length > 1 ? 's' : ''}: ${shown.join(', ')}${more(missing.length, shown.length)}`,
    );
  }
  const shown = issues.slice(0, ISSUES_IN_DETAIL).map((i) => `${i.kind} at ${i.path || '(event)'}`);
  return oneLine(
    `invalid OCSF (${issues.length} issue${issues.length > 1 ? 's' : ''}): ${shown.join('; ')}${more(issues.length, shown.length)}`,
  );
}

function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** A raw event as it was accepted (JSON text) or as a collector produced it. */
export type RawEvent = string | Record<string, unknown>;

/** The object of a raw event; a text that does not parse as one (never accepted so) gives undefined. */
export function parseRaw(raw: RawEvent): Record<string, unknown> | undefined {
  if (typeof raw !== 'string') return raw;
  try {
    const value: unknown = JSON.parse(raw);
    return value !== null && typeof value === 'object' && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

/** The NDJSON of normalized records with their envelope (the mapping tools' and tests' view). */
export function recordsNdjson(result: Pick<StageResult, 'records'>): string {
  return result.records.map((r) => JSON.stringify(r)).join('\n');
}

/**
 * Marks the end of a stage of the pass (decode, map, enrich, serialize): the pass records the
 * time for its trace spans (pipeline/pass/timings.ts). Called once per stage, never per event.
 */
export type Lap = (stage: string) => void;

export function normalizeBatch(batch: IngestBatch, ctx: StageContext, lap?: Lap): StageResult {
  const { events, ids } = batch;
  const quarantined: QuarantinedEvent[] = [];
  const compliance = new Map<number, ClassCompliance>();
  const driftSample: number[] = [];
  const driftRaw: Record<string, unknown>[] = [];
  const records: NormalizedRecord[] = [];
  /** Per record: its index in the batch and its parsed raw event (pairs), for a late quarantine. */
  const recordRaw: unknown[] = [];
  const texts: string[] = [];
  const result: StageResult = {
    records,
    texts,
    normalized: 0,
    flagged: 0,
    quarantined,
    compliance,
    mapped: 0,
    base: 0,
    driftSample,
    driftRaw,
  };
  const perEventTime = ctx.receivedAt;
  const mapping = ctx.mapping;
  const versionId = mapping?.versionId ?? null;

  const quarantine = (
    index: number,
    raw: Record<string, unknown> | undefined,
    kind: QuarantineKind,
    detail: string,
  ) => {
    const event = events[index]!;
    quarantined.push({
      index,
      id: ids[index]!,
      received_at: perEventTime?.[index] ?? batch.received_at,
      // A text that does not parse never passed acceptance; kept as text rather than lost.
      raw: raw ?? (typeof event === 'string' ? { unparsed: event } : event),
      error_kind: kind,
      error_detail: detail,
      mapping_version_id: versionId,
    });
  };

  // Every raw text parsed first (the decode stage), then mapped: each stage timed as a whole.
  const raws = new Array<Record<string, unknown> | undefined>(events.length);
  for (let i = 0; i < events.length; i++) raws[i] = parseRaw(events[i]!);
  lap?.('decode');

  if (!mapping) {
    const detail = oneLine(`no live mapping for platform "${batch.platform}", stream "${batch.stream}"`);
    for (let i = 0; i < events.length; i++) quarantine(i, raws[i], 'no_mapping', detail);
    return result;
  }

  const { organization_id, integration_id, stream } = batch;
  const mapping_version_id = mapping.versionId;
  const batchMs = Date.parse(batch.received_at);
  const mapCtx = { receivedAtMs: batchMs };
  const { compiled } = mapping;
  const { validate } = ctx;
  const lenient = ctx.policy === 'lenient';
  const stride = driftStride(events.length);
  // An already-OCSF event's attributes are not vendor fields a mapping could miss.
  const sampleDrift = mapping.passthrough !== true;

  for (let i = 0; i < events.length; i++) {
    if (perEventTime) mapCtx.receivedAtMs = Date.parse(perEventTime[i]!);
    const raw = raws[i];
    if (raw === undefined) {
      quarantine(i, undefined, 'mapping_error', 'the event is not a JSON object');
      continue;
    }
    try {
      const res = compiled.map(raw, mapCtx);
      if (!res.ok) {
        quarantine(i, raw, res.kind, oneLine(res.detail));
        continue;
      }
      const event = res.event;
      // A Base Event keeps its vendor fields under `unmapped` on purpose (the mapping has no
      // class for it): drift is about the fields of the events a mapping maps specifically.
      if (event.class_uid === 0) result.base++;
      else if (sampleDrift && (result.mapped - result.base) % stride === 0 && driftSample.length < DRIFT_MAX_SAMPLE) {
        driftSample.push(i);
        // What the rules read: with parse steps, the fields they found (drift reports new ones).
        driftRaw.push(res.input ?? raw);
      }
      result.mapped++;
      const issues = validate(event);
      const classUid = typeof event.class_uid === 'number' ? event.class_uid : 0;
      let stats = compliance.get(classUid);
      if (!stats) compliance.set(classUid, (stats = { valid: 0, invalid: 0, lastError: null }));
      const received_at = perEventTime ? perEventTime[i]! : batch.received_at;
      let record: NormalizedRecord;
      if (issues.length === 0) {
        stats.valid++;
        record = {
          id: ids[i]!,
          organization_id,
          integration_id,
          stream,
          received_at,
          mapping_version_id,
          valid: true,
          ocsf: event,
        };
      } else {
        stats.invalid++;
        const summary = summarizeIssues(issues);
        stats.lastError = summary;
        const missing = issues.some((x) => x.kind === 'missing_required');
        if (missing || !lenient) {
          quarantine(i, raw, missing ? 'missing_required' : 'invalid_ocsf', summary);
          continue;
        }
        const listed = issues.map((x) => ({ path: x.path, kind: x.kind, message: x.message }));
        record = {
          id: ids[i]!,
          organization_id,
          integration_id,
          stream,
          received_at,
          mapping_version_id,
          valid: false,
          issues: listed,
          ocsf: event,
        };
      }
      records.push(record);
      recordRaw.push(i, raw);
    } catch (err) {
      // map() promises never to throw and validate() should not either; a bug in either
      // (or an output JSON cannot hold, such as a BigInt) costs one event, not the batch.
      quarantine(i, raw, 'mapping_error', oneLine(`normalization failed: ${errorMessage(err)}`));
      continue;
    }
  }
  lap?.('map');
  // Enrichment (pipeline/enrich) adds to the mapped events before their one serialization.
  if (ctx.enrich && records.length > 0) {
    try {
      result.enrichment = ctx.enrich(records);
    } catch {
      // A fault of enrichment (it catches lookups' own) costs the batch its enrichment, never its events.
    }
    lap?.('enrich');
  }
  let kept = 0;
  for (let r = 0; r < records.length; r++) {
    const record = records[r]!;
    try {
      // The one serialization of the event; it also proves the output is JSON (a BigInt is not).
      texts.push(JSON.stringify(record.ocsf));
    } catch (err) {
      // An output JSON cannot hold costs one event, not the batch.
      quarantine(
        recordRaw[2 * r] as number,
        recordRaw[2 * r + 1] as Record<string, unknown>,
        'mapping_error',
        oneLine(`normalization failed: ${errorMessage(err)}`),
      );
      continue;
    }
    records[kept++] = record;
    if (!record.valid) result.flagged++;
  }
  records.length = kept;
  lap?.('serialize');
  result.normalized = kept;
  if (kept !== recordRaw.length / 2) quarantined.sort((a, b) => a.index - b.index);
  return result;
}
