// Collection filters: what an integration collects, decided at the source so that unwanted
// vendor events never cost queue space, normalization or storage. Stored in
// integrations.collection_filters as {streams?: string[] | null, exclude?: Condition[]}:
// streams null or absent = every stream; an event matching ANY exclude condition is dropped
// (the caller counts it in collector_usage.filtered). Conditions are the one condition
// language (docs/conditions.md, compiled by pipeline/route/conditions.ts), evaluated
// against the RAW vendor event: the event stands in the record's `ocsf`, so a field path
// addresses the vendor's own fields (`eventType`, `actor.alternateId`, `client.ipAddress`).
import type { NormalizedRecord } from '../pipeline/envelope.js';
import { compileRecordCondition, type RecordPredicate, type RouteProblem } from '../pipeline/route/conditions.js';

export interface CollectionFilters {
  streams?: string[] | null;
  exclude?: unknown[];
}

export interface CompiledCollectionFilters {
  /** false when the filters leave the stream out: the engine does not collect it. */
  streamEnabled(stream: string): boolean;
  /** true when the event is to be dropped before acceptance. */
  drops(event: Record<string, unknown>): boolean;
}

export interface FilterProblem {
  /** Where in the request body: `body/exclude/0/all/1/value`. */
  location: string;
  message: string;
}

export const FILTER_LIMITS = { exclude: 50, streams: 100 } as const;

const KEYS = new Set(['streams', 'exclude']);

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** `body.exclude[0].all[1].value` -> `body/exclude/0/all/1/value` (the API's location style). */
function toLocation(path: string): string {
  return path.replace(/\[(\d+)\]/g, '/$1').replace(/\./g, '/');
}

/** Envelope fields (envelope.stream ...) name the normalized record, which a raw event does not have yet. */
function envelopeFields(cond: unknown, at: string, out: FilterProblem[], depth = 0): void {
  if (depth > 32) return;
  if (Array.isArray(cond)) {
    cond.forEach((c, i) => envelopeFields(c, `${at}/${i}`, out, depth + 1));
    return;
  }
  if (!isRecord(cond)) return;
  if (typeof cond.field === 'string' && (cond.field === 'envelope' || cond.field.startsWith('envelope.'))) {
    out.push({
      location: `${at}/field`,
      message:
        'collection filters test the raw vendor event; envelope fields are not available (use streams to choose streams)',
    });
  }
  for (const key of ['all', 'any', 'not'] as const)
    if (key in cond) envelopeFields(cond[key], `${at}/${key}`, out, depth + 1);
}

function check(
  raw: unknown,
  platformStreams: readonly string[] | undefined,
): { problems: FilterProblem[]; excludes: RecordPredicate[]; streams: string[] | null } {
  const problems: FilterProblem[] = [];
  const excludes: RecordPredicate[] = [];
  let streams: string[] | null = null;
  if (raw === null || raw === undefined) return { problems, excludes, streams };
  if (!isRecord(raw)) {
    problems.push({ location: 'body', message: 'collection filters are an object {streams, exclude}' });
    return { problems, excludes, streams };
  }
  for (const key of Object.keys(raw))
    if (!KEYS.has(key))
      problems.push({ location: `body/${key}`, message: 'unknown key (collection filters are {streams, exclude})' });

  if (raw.streams !== undefined && raw.streams !== null) {
    if (!Array.isArray(raw.streams))
      problems.push({ location: 'body/streams', message: 'must be a list of stream names or null (every stream)' });
    else if (raw.streams.length > FILTER_LIMITS.streams)
      problems.push({ location: 'body/streams', message: `at most ${FILTER_LIMITS.streams} streams` });
    else {
      streams = [];
      raw.streams.forEach((s, i) => {
        if (typeof s !== 'string' || s === '')
          problems.push({ location: `body/streams/${i}`, message: 'must be a non-empty string' });
        else if (platformStreams && !platformStreams.includes(s))
          problems.push({
            location: `body/streams/${i}`,
            message: `is not a stream of this platform (${platformStreams.join(', ') || 'none'})`,
          });
        else if (!streams!.includes(s)) streams!.push(s);
      });
    }
  }

  if (raw.exclude !== undefined && raw.exclude !== null) {
    if (!Array.isArray(raw.exclude))
      problems.push({ location: 'body/exclude', message: 'must be a list of conditions' });
    else if (raw.exclude.length > FILTER_LIMITS.exclude)
      problems.push({ location: 'body/exclude', message: `at most ${FILTER_LIMITS.exclude} exclude conditions` });
    else {
      raw.exclude.forEach((cond, i) => {
        const at = `body/exclude/${i}`;
        if (cond === null || cond === undefined) {
          problems.push({ location: at, message: 'a condition is required' });
          return;
        }
        const before = problems.length;
        envelopeFields(cond, at, problems);
        const routeProblems: RouteProblem[] = [];
        const pred = compileRecordCondition(cond, routeProblems, `body.exclude[${i}]`);
        for (const p of routeProblems) problems.push({ location: toLocation(p.path), message: p.message });
        if (pred && problems.length === before) excludes.push(pred);
      });
    }
  }
  return { problems, excludes, streams };
}

/**
 * Every problem of a filters document, each with its location in the request body. With
 * `platformStreams`, stream names are also checked against the platform's streams.
 */
export function validateCollectionFilters(raw: unknown, platformStreams?: readonly string[]): FilterProblem[] {
  return check(raw, platformStreams).problems;
}

/** A stored document normalized to its canonical shape (the form the API answers with). */
export function normalizeCollectionFilters(raw: unknown): { streams: string[] | null; exclude: unknown[] } {
  if (!isRecord(raw)) return { streams: null, exclude: [] };
  return {
    streams: Array.isArray(raw.streams) ? raw.streams.filter((s): s is string => typeof s === 'string') : null,
    exclude: Array.isArray(raw.exclude) ? raw.exclude : [],
  };
}

const PASS_ALL: CompiledCollectionFilters = { streamEnabled: () => true, drops: () => false };

/**
 * Compiles the stored filters once per cycle. A stored document that no longer validates
 * (written before a rule tightened) throws: collecting with half a filter would let through
 * events the operator excluded, so the cycle fails visibly instead (last_error).
 */
export function compileCollectionFilters(raw: unknown): CompiledCollectionFilters {
  if (raw === null || raw === undefined) return PASS_ALL;
  const { problems, excludes, streams } = check(raw, undefined);
  if (problems.length > 0)
    throw new Error(`invalid collection filters: ${problems[0]!.location} ${problems[0]!.message}`);
  const enabled = streams === null ? () => true : (s: string) => streams.includes(s);
  if (excludes.length === 0) return { streamEnabled: enabled, drops: () => false };
  // One record shell reused per event: the predicates only read `ocsf`, and evaluation is synchronous.
  const shell = {
    id: '',
    organization_id: 0,
    integration_id: 0,
    stream: '',
    received_at: '',
    mapping_version_id: '',
    valid: true,
    ocsf: {},
  } as NormalizedRecord;
  return {
    streamEnabled: enabled,
    drops(event) {
      shell.ocsf = event;
      for (let i = 0; i < excludes.length; i++) if (excludes[i]!(shell)) return true;
      return false;
    },
  };
}
