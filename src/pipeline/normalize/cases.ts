// Test cases carried by a mapping document (`tests`): raw events with the OCSF output
// expected, whole (`output`) or by selected attributes (`expect`), or the quarantine expected
// (`quarantine`). Each case runs as the live pipeline would under a strict OCSF policy: map,
// validate, and quarantine what is invalid. Publication refuses a version whose cases fail
// (modules/mappings), `weir test <dir>` runs them offline (src/cli/test-command.ts), and the
// built-in mappings' cases run in builtin.test.ts. Pure: no I/O, no clock.
import { isDeepStrictEqual } from 'node:util';
import microdiff from 'microdiff';
import type { OcsfIssue } from '../../ocsf/types.js';
import type { QuarantineKind } from '../envelope.js';
import { readPath } from './paths.js';
import { oneLine, summarizeIssues } from './stage.js';
import type { CompiledMapping, MappingDocument } from './types.js';

export interface MappingTestCase {
  name: string;
  /** The raw event. */
  input?: Record<string, unknown>;
  /** A text event's line: read as `{"message": <line>}`, as a text stream queues it. */
  input_text?: string;
  /** When the event was received (the `time` fallback); default 2024-01-01T00:00:00Z. */
  received_at?: string;
  /** The whole OCSF event expected. */
  output?: Record<string, unknown>;
  /** Selected attributes: an OCSF path (`actor.user.name`, `observables[0].value`) -> the value expected; null: absent. */
  expect?: Record<string, unknown>;
  /** The event is expected to be quarantined, for this reason. */
  quarantine?: QuarantineKind;
}

export interface CaseResult {
  index: number;
  name: string;
  ok: boolean;
  /** Why the case failed, one line each (empty when it passed). */
  failures: string[];
}

export const MAX_TEST_CASES = 200;
export const DEFAULT_RECEIVED_AT = '2024-01-01T00:00:00Z';
const SHOWN_DIFFERENCES = 10;
const VALUE_MAX = 200;

/** What the pipeline makes of one raw event: the OCSF event delivered, or the quarantine and why. */
export type Outcome = { event: Record<string, unknown> } | { kind: QuarantineKind; detail: string };

/** A value in a failure message, bounded. */
function show(v: unknown): string {
  if (v === undefined) return '(absent)';
  const text = JSON.stringify(v);
  return text.length > VALUE_MAX ? `${text.slice(0, VALUE_MAX - 1)}…` : text;
}

function pathOf(segs: readonly (string | number)[]): string {
  return segs.map((s, i) => (typeof s === 'number' ? `[${s}]` : i === 0 ? s : `.${s}`)).join('');
}

/** The input event of a case as the pipeline would hold it. */
export function caseInput(c: MappingTestCase): Record<string, unknown> {
  return c.input_text !== undefined ? { message: c.input_text } : (c.input ?? {});
}

/**
 * Maps one raw event as the live pipeline would under a strict OCSF policy: map, validate,
 * quarantine what is invalid. Cases and the corpus (corpus.ts) judge this outcome.
 */
export function mapOutcome(
  input: Record<string, unknown>,
  receivedAtMs: number,
  mapping: CompiledMapping,
  validate: (e: Record<string, unknown>) => readonly OcsfIssue[],
): Outcome {
  const mapped = mapping.map(input, { receivedAtMs });
  if (!mapped.ok) return { kind: mapped.kind, detail: oneLine(mapped.detail) };
  const issues = validate(mapped.event);
  if (issues.length === 0) {
    // The event as delivered: its JSON text read back (what `output` compares with).
    return { event: JSON.parse(JSON.stringify(mapped.event)) as Record<string, unknown> };
  }
  return {
    kind: issues.some((i) => i.kind === 'missing_required') ? 'missing_required' : 'invalid_ocsf',
    detail: summarizeIssues(issues),
  };
}

function outcome(
  c: MappingTestCase,
  mapping: CompiledMapping,
  validate: (e: Record<string, unknown>) => readonly OcsfIssue[],
): Outcome {
  return mapOutcome(caseInput(c), Date.parse(c.received_at ?? DEFAULT_RECEIVED_AT), mapping, validate);
}

/** Differences between an expected and an actual event, one line each, bounded. */
export function eventDifferences(expected: Record<string, unknown>, actual: Record<string, unknown>): string[] {
  const failures: string[] = [];
  const diffs = microdiff(expected, actual);
  for (const d of diffs.slice(0, SHOWN_DIFFERENCES)) {
    const at = pathOf(d.path);
    if (d.type === 'CREATE') failures.push(`${at}: not expected, got ${show(d.value)}`);
    else if (d.type === 'REMOVE') failures.push(`${at}: expected ${show(d.oldValue)}, got (absent)`);
    else failures.push(`${at}: expected ${show(d.oldValue)}, got ${show(d.value)}`);
  }
  if (diffs.length > SHOWN_DIFFERENCES) failures.push(`(+${diffs.length - SHOWN_DIFFERENCES} more differences)`);
  return failures;
}

function judge(c: MappingTestCase, got: Outcome): string[] {
  if (c.quarantine !== undefined) {
    if ('kind' in got)
      return got.kind === c.quarantine
        ? []
        : [`expected quarantine as ${c.quarantine}, got ${got.kind}: ${got.detail}`];
    return [`expected quarantine as ${c.quarantine}, but the event was normalized`];
  }
  if ('kind' in got) return [`quarantined as ${got.kind}: ${got.detail}`];
  const failures: string[] = c.output !== undefined ? eventDifferences(c.output, got.event) : [];
  for (const [path, want] of Object.entries(c.expect ?? {})) {
    let value: unknown;
    try {
      value = readPath(got.event, path);
    } catch {
      failures.push(`${path}: not a valid path`);
      continue;
    }
    if (want === null ? value !== undefined : !isDeepStrictEqual(value, want))
      failures.push(`${path}: expected ${show(want === null ? undefined : want)}, got ${show(value)}`);
  }
  return failures;
}

/** Runs every case of the document against its compiled mapping. */
export function runCases(
  doc: Pick<MappingDocument, 'tests'>,
  mapping: CompiledMapping,
  validate: (e: Record<string, unknown>) => readonly OcsfIssue[],
): CaseResult[] {
  return (doc.tests ?? []).map((c, index) => {
    let failures: string[];
    try {
      failures = judge(c, outcome(c, mapping, validate));
    } catch (err) {
      failures = [`the case could not run: ${err instanceof Error ? err.message : String(err)}`];
    }
    return { index, name: c.name, ok: failures.length === 0, failures };
  });
}

/** Shape rules TypeBox cannot say: exactly one input and exactly one expectation per case. */
export function caseProblems(doc: Pick<MappingDocument, 'tests'>): { at: string; message: string }[] {
  const problems: { at: string; message: string }[] = [];
  const names = new Set<string>();
  (doc.tests ?? []).forEach((c, i) => {
    const at = `/tests/${i}`;
    if ((c.input === undefined) === (c.input_text === undefined))
      problems.push({ at, message: 'give exactly one of input (an event) and input_text (a line of text)' });
    const expectations = [c.output, c.expect, c.quarantine].filter((x) => x !== undefined).length;
    if (expectations !== 1)
      problems.push({
        at,
        message:
          'give exactly one of output (the whole event), expect (selected attributes) and quarantine (the reason expected)',
      });
    if (c.received_at !== undefined && Number.isNaN(Date.parse(c.received_at)))
      problems.push({ at: `${at}/received_at`, message: 'must be an RFC 3339 date-time' });
    if (names.has(c.name)) problems.push({ at: `${at}/name`, message: `another case is named "${c.name}"` });
    names.add(c.name);
  });
  return problems;
}
