// The corpus (test/corpus/README.md): files of real events and, beside each, the OCSF expected
// of every event. This is the pure half: reading a sample's text into events, mapping them as
// the pipeline does (mapOutcome, strict OCSF policy, a fixed received_at) and judging the
// outcomes against the expected file. Walking folders and writing files is the CLI's
// (src/cli/corpus.ts).
import { isDeepStrictEqual } from 'node:util';
import type { OcsfIssue } from '../../ocsf/types.js';
import { DEFAULT_RECEIVED_AT, eventDifferences, mapOutcome, type Outcome } from './cases.js';
import type { CompiledMapping } from './types.js';

/** Sample files: JSON events one per line, or text events one per line (a text stream's lines). */
export const SAMPLE_EXTENSIONS = ['.ndjson', '.txt'] as const;
export const EXPECTED_SUFFIX = '.expected.json';
const RECEIVED_AT_MS = Date.parse(DEFAULT_RECEIVED_AT);

export interface SampleEvents {
  /** The raw events, as the pipeline would hold them. */
  events: Record<string, unknown>[];
  /** The 1-based line of each event in the file. */
  lines: number[];
  /** Lines that are not an event (bad JSON, not an object), one message each. */
  problems: string[];
}

/** The events of a sample file: every non-blank line is one. */
export function readSample(fileName: string, text: string): SampleEvents {
  const json = fileName.endsWith('.ndjson');
  const out: SampleEvents = { events: [], lines: [], problems: [] };
  text.split('\n').forEach((raw, i) => {
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    if (line.trim() === '') return;
    if (!json) {
      out.events.push({ message: line });
      out.lines.push(i + 1);
      return;
    }
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (err) {
      out.problems.push(`line ${i + 1}: not JSON (${(err as Error).message})`);
      return;
    }
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      out.problems.push(`line ${i + 1}: an event is a JSON object`);
      return;
    }
    out.events.push(value as Record<string, unknown>);
    out.lines.push(i + 1);
  });
  return out;
}

/** Maps every event of a sample as the pipeline would. */
export function mapSample(
  events: readonly Record<string, unknown>[],
  mapping: CompiledMapping,
  validate: (e: Record<string, unknown>) => readonly OcsfIssue[],
): Outcome[] {
  return events.map((e) => {
    try {
      return mapOutcome(e, RECEIVED_AT_MS, mapping, validate);
    } catch (err) {
      return {
        kind: 'mapping_error',
        detail: `normalization failed: ${err instanceof Error ? err.message : String(err)}`,
      };
    }
  });
}

/** What an expected file holds for an outcome: the event, or the quarantine expected. */
export function expectedEntry(o: Outcome): Record<string, unknown> {
  return 'event' in o ? o.event : { quarantine: o.kind, detail: o.detail };
}

export interface EventJudgement {
  /** 1-based line of the event in the sample. */
  line: number;
  ok: boolean;
  /** The class and activity are those expected (whatever the rest). */
  classOk: boolean;
  failures: string[];
}

function isQuarantine(e: unknown): e is { quarantine: string } {
  return typeof e === 'object' && e !== null && typeof (e as { quarantine?: unknown }).quarantine === 'string';
}

function judgeOne(want: unknown, got: Outcome): { ok: boolean; classOk: boolean; failures: string[] } {
  if (want === undefined)
    return {
      ok: false,
      classOk: false,
      failures: ['the expected file has no entry for this event (run with --update, then review)'],
    };
  if (isQuarantine(want)) {
    if ('kind' in got)
      return got.kind === want.quarantine
        ? { ok: true, classOk: true, failures: [] }
        : {
            ok: false,
            classOk: false,
            failures: [`expected quarantine as ${want.quarantine}, got ${got.kind}: ${got.detail}`],
          };
    return {
      ok: false,
      classOk: false,
      failures: [
        `expected quarantine as ${want.quarantine}, but the event was delivered as class ${String(got.event.class_uid)}`,
      ],
    };
  }
  if (typeof want !== 'object' || want === null || Array.isArray(want))
    return { ok: false, classOk: false, failures: ['the expected entry is not an object'] };
  if ('kind' in got) return { ok: false, classOk: false, failures: [`quarantined as ${got.kind}: ${got.detail}`] };
  const w = want as Record<string, unknown>;
  const classOk = w.class_uid === got.event.class_uid && w.activity_id === got.event.activity_id;
  if (isDeepStrictEqual(w, got.event)) return { ok: true, classOk, failures: [] };
  return { ok: false, classOk, failures: eventDifferences(w, got.event) };
}

/** Judges a sample's outcomes against its expected file (a JSON array, one entry per event). */
export function judgeSample(
  expected: unknown,
  outcomes: readonly Outcome[],
  lines: readonly number[],
): { judgements: EventJudgement[]; problems: string[] } {
  const problems: string[] = [];
  if (!Array.isArray(expected)) return { judgements: [], problems: ['the expected file is not a JSON array'] };
  if (expected.length !== outcomes.length)
    problems.push(`the expected file has ${expected.length} entries for ${outcomes.length} events`);
  const judgements = outcomes.map((got, i) => ({ line: lines[i]!, ...judgeOne(expected[i], got) }));
  return { judgements, problems };
}

export interface SourceTally {
  events: number;
  /** Delivered valid (Base Events included). */
  valid: number;
  /** Delivered as Base Event (class_uid 0). */
  base: number;
  quarantined: number;
  /** Class and activity as the expected file says. */
  classAsExpected: number;
  /** The whole output as the expected file says. */
  asExpected: number;
}

export function emptyTally(): SourceTally {
  return { events: 0, valid: 0, base: 0, quarantined: 0, classAsExpected: 0, asExpected: 0 };
}

/** Adds a sample's outcomes and judgements to its source's tally. */
export function tally(into: SourceTally, outcomes: readonly Outcome[], judgements: readonly EventJudgement[]): void {
  into.events += outcomes.length;
  for (const o of outcomes) {
    if ('kind' in o) into.quarantined++;
    else {
      into.valid++;
      if (o.event.class_uid === 0) into.base++;
    }
  }
  for (const j of judgements) {
    if (j.ok) into.asExpected++;
    if (j.classOk) into.classAsExpected++;
  }
}
