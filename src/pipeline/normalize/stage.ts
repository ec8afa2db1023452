// The normalization stage: one ingest batch in, the NDJSON of its normalized records and
// the events that must wait in quarantine out. Pure (no I/O, no clock): the worker job
// and quarantine reprocessing both call it. This is the hot path (ARCHITECTURE.md,
// habit 6): the envelope text shared by a batch is built once, each record is one string
// concatenation around JSON.stringify of the mapped event.
import type { OcsfIssue } from '../../ocsf/types.js';
import type { IngestBatch, QuarantineKind } from '../envelope.js';
import type { CompiledMapping } from './types.js';

export type OcsfPolicyMode = 'strict' | 'lenient';

export interface StageMapping {
  versionId: string;
  compiled: CompiledMapping;
}

export interface StageContext {
  /** The live mapping of the batch's (organization, platform, stream); absent: no mapping. */
  mapping?: StageMapping | undefined;
  validate: (event: Record<string, unknown>) => readonly OcsfIssue[];
  /** strict: invalid OCSF is quarantined; lenient: delivered with valid=false and its issues. */
  policy: OcsfPolicyMode;
  /** Per-event received_at (reprocessing old events); by default the batch's for all. */
  receivedAt?: readonly string[];
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
  /** NDJSON of NormalizedRecord, one line per normalized event ('' when none). */
  ndjson: string;
  /** Lines in `ndjson`, flagged ones included. */
  normalized: number;
  /** Records delivered with valid=false (lenient policy). */
  flagged: number;
  quarantined: QuarantinedEvent[];
  /** OCSF validity of every mapped event, by class_uid. */
  compliance: Map<number, ClassCompliance>;
  /** Events the mapping turned into OCSF (whatever validation said). */
  mapped: number;
  /** Indices of a sample of the mapped events (for drift): the first and every DRIFT_EVERY-th. */
  driftSample: number[];
}

export const DRIFT_EVERY = 16;
export const DRIFT_MAX_SAMPLE = 32;
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
    return oneLine(`missing required attribute${missing.length > 1 ? 's' : ''}: ${shown.join(', ')}${more(missing.length, shown.length)}`);
  }
  const shown = issues.slice(0, ISSUES_IN_DETAIL).map((i) => `${i.kind} at ${i.path || '(event)'}`);
  return oneLine(`invalid OCSF (${issues.length} issue${issues.length > 1 ? 's' : ''}): ${shown.join('; ')}${more(issues.length, shown.length)}`);
}

function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

export function normalizeBatch(batch: IngestBatch, ctx: StageContext): StageResult {
  const { events, ids } = batch;
  const quarantined: QuarantinedEvent[] = [];
  const compliance = new Map<number, ClassCompliance>();
  const driftSample: number[] = [];
  const result: StageResult = { ndjson: '', normalized: 0, flagged: 0, quarantined, compliance, mapped: 0, driftSample };
  const perEventTime = ctx.receivedAt;
  const mapping = ctx.mapping;
  const versionId = mapping?.versionId ?? null;

  const quarantine = (index: number, kind: QuarantineKind, detail: string) => {
    quarantined.push({
      index,
      id: ids[index]!,
      received_at: perEventTime?.[index] ?? batch.received_at,
      raw: events[index]!,
      error_kind: kind,
      error_detail: detail,
      mapping_version_id: versionId,
    });
  };

  if (!mapping) {
    const detail = `no live mapping for platform "${batch.platform}", stream "${batch.stream}"`;
    for (let i = 0; i < events.length; i++) quarantine(i, 'no_mapping', oneLine(detail));
    return result;
  }

  // Every record of the batch shares its envelope but for id (and received_at when reprocessing).
  const shared =
    `,"organization_id":${JSON.stringify(batch.organization_id)},"integration_id":${JSON.stringify(batch.integration_id)}` +
    `,"stream":${JSON.stringify(batch.stream)}`;
  const batchTime = `,"received_at":${JSON.stringify(batch.received_at)}`;
  const tail = `,"mapping_version_id":${JSON.stringify(mapping.versionId)}`;
  const validTail = `${tail},"valid":true,"ocsf":`;
  const batchMs = Date.parse(batch.received_at);
  const mapCtx = { receivedAtMs: batchMs };
  const { compiled } = mapping;
  const { validate } = ctx;
  const lenient = ctx.policy === 'lenient';
  let out = '';

  for (let i = 0; i < events.length; i++) {
    if (perEventTime) mapCtx.receivedAtMs = Date.parse(perEventTime[i]!);
    let line: string;
    try {
      const res = compiled.map(events[i]!, mapCtx);
      if (!res.ok) {
        quarantine(i, res.kind, oneLine(res.detail));
        continue;
      }
      const event = res.event;
      if (result.mapped % DRIFT_EVERY === 0 && driftSample.length < DRIFT_MAX_SAMPLE) driftSample.push(i);
      result.mapped++;
      const issues = validate(event);
      const classUid = typeof event.class_uid === 'number' ? event.class_uid : 0;
      let stats = compliance.get(classUid);
      if (!stats) compliance.set(classUid, (stats = { valid: 0, invalid: 0, lastError: null }));
      const time = perEventTime ? `,"received_at":${JSON.stringify(perEventTime[i])}` : batchTime;
      const head = `{"id":${JSON.stringify(ids[i])}${shared}${time}`;
      if (issues.length === 0) {
        stats.valid++;
        line = `${head}${validTail}${JSON.stringify(event)}}`;
      } else {
        stats.invalid++;
        const summary = summarizeIssues(issues);
        stats.lastError = summary;
        const missing = issues.some((x) => x.kind === 'missing_required');
        if (missing || !lenient) {
          quarantine(i, missing ? 'missing_required' : 'invalid_ocsf', summary);
          continue;
        }
        const listed = issues.map((x) => ({ path: x.path, kind: x.kind, message: x.message }));
        line = `${head}${tail},"valid":false,"issues":${JSON.stringify(listed)},"ocsf":${JSON.stringify(event)}}`;
        result.flagged++;
      }
    } catch (err) {
      // map() promises never to throw and validate() should not either; a bug in either
      // (or an output JSON cannot hold, such as a BigInt) costs one event, not the batch.
      quarantine(i, 'mapping_error', oneLine(`normalization failed: ${errorMessage(err)}`));
      continue;
    }
    out = result.normalized === 0 ? line : `${out}\n${line}`;
    result.normalized++;
  }
  result.ndjson = out;
  return result;
}
