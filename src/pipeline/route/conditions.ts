// Conditions over a normalized record (compileRecordCondition): the one condition language
// and compiler (pipeline/conditions, docs/conditions.md) with OCSF paths and envelope.* as
// fields, and problems located as `condition.all[2].value`. Routes, collection filters (a raw
// event standing in `ocsf`), enrichment policies, detections and searches use it.
import type { NormalizedRecord } from '../envelope.js';
import { compileCondition } from '../conditions/compile.js';
import type { ConditionLocation, FieldReader } from '../conditions/types.js';
import { compileField, PathSyntaxError, UnknownFieldError, type FieldRule } from './paths.js';

export type RecordPredicate = (r: NormalizedRecord) => boolean;

export interface RouteProblem {
  /** Where in the definition: `condition.all[2].value`, `transforms[0].rate`. */
  path: string;
  message: string;
  /** For a field no supported OCSF class has: the closest known field path. */
  closest?: string;
  /** For a condition given as text: where the problem is in it (1-based line and column, 0-based offset). */
  line?: number;
  column?: number;
  offset?: number;
}

/** The problem of a field path that does not compile (syntax, or unknown under the `ocsf` rule). */
export function fieldProblem(path: string, e: unknown): RouteProblem {
  if (e instanceof UnknownFieldError) return { path, message: e.message, closest: e.unknown.closest };
  return { path, message: e instanceof PathSyntaxError ? `invalid field path: ${e.message}` : 'invalid field path' };
}

export { CONDITION_LIMITS } from '../conditions/types.js';

function reader(rule: FieldRule): FieldReader<NormalizedRecord> {
  return {
    describe: 'an OCSF path or envelope.*',
    field(path) {
      try {
        return compileField(path, rule);
      } catch (e) {
        const p = fieldProblem('', e);
        return p.closest === undefined ? { problem: p.message } : { problem: p.message, closest: p.closest };
      }
    },
  };
}

const READERS: Record<FieldRule, FieldReader<NormalizedRecord>> = { ocsf: reader('ocsf'), any: reader('any') };

/** `condition` + ['all', 2, 'value'] -> `condition.all[2].value`. */
function located(at: string, loc: ConditionLocation): string {
  let out = at;
  for (const s of loc) out += typeof s === 'number' ? `[${s}]` : out === '' ? s : `.${s}`;
  return out;
}

const ALWAYS: RecordPredicate = () => true;

/**
 * Compiles a condition (null or undefined: every event matches). Problems go to `problems`
 * with their location under `at`, every one of them (not only the first), and the result
 * is then undefined. `fields`: whether field paths must exist in OCSF (paths.ts, FieldRule).
 */
export function compileRecordCondition(
  cond: unknown,
  problems: RouteProblem[],
  at = 'condition',
  fields: FieldRule = 'any',
): RecordPredicate | undefined {
  if (cond === null || cond === undefined) return ALWAYS;
  return compileCondition(cond, { fields: READERS[fields] }, (p) => {
    problems.push(
      p.closest === undefined
        ? { path: located(at, p.at), message: p.message }
        : { path: located(at, p.at), message: p.message, closest: p.closest },
    );
  });
}
