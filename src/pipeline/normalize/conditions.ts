// Conditions (`when` of rules and assignments) compiled into predicates. Comparisons are
// strict (no type coercion) except the numeric ones, which also read numeric text. A path
// with `[*]` holds a list: the condition holds when it holds for any element.
// Regular expressions run on RE2 (re2js): linear time whatever the pattern, so a mapping
// cannot stall the pipeline with catastrophic backtracking.
import { RE2JS } from 're2js';
import { collects, compileSegments, isAbsent, parsePath, PathSyntaxError, type Getter, type PathSegment } from './paths.js';
import type { MappingProblem } from './types.js';

export type Predicate = (src: unknown) => boolean;

export const MAX_REGEX_LENGTH = 512;
const MAX_DEPTH = 16;
/** Per `matches` condition: answers remembered, and the longest input remembered. */
const MEMO_SIZE = 256;
const MEMO_MAX_INPUT = 128;

const LEAF_OPS = ['eq', 'ne', 'in', 'prefix', 'suffix', 'contains', 'matches', 'exists', 'gt', 'gte', 'lt', 'lte'] as const;
type LeafOp = (typeof LEAF_OPS)[number];

export interface ConditionContext {
  problems: MappingProblem[];
  /** Called with every path a condition reads (they count as references for drift, not as mapped data). */
  onPath?: (segs: PathSegment[]) => void;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function isScalar(v: unknown): boolean {
  return v === null || typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean';
}

function toNum(v: unknown): number | undefined {
  if (typeof v === 'number') return v;
  if (typeof v === 'string' && v.trim() !== '') {
    const n = Number(v);
    return Number.isFinite(n) ? n : undefined;
  }
  return undefined;
}

function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  return JSON.stringify(a) === JSON.stringify(b);
}

function test(op: LeafOp, arg: unknown, ctx: ConditionContext, at: string): ((v: unknown) => boolean) | undefined {
  const bad = (message: string) => {
    ctx.problems.push({ at: `${at}/${op}`, message });
    return undefined;
  };
  switch (op) {
    case 'eq':
      return isScalar(arg) ? (v) => v === arg : (v) => sameJson(v, arg);
    case 'ne':
      return isScalar(arg) ? (v) => v !== arg : (v) => !sameJson(v, arg);
    case 'in': {
      if (!Array.isArray(arg)) return bad('must be a list');
      if (!arg.every(isScalar)) return bad('must list strings, numbers, booleans or null');
      const set = new Set(arg);
      return (v) => set.has(v);
    }
    case 'prefix':
    case 'suffix':
    case 'contains': {
      if (typeof arg !== 'string') return bad('must be a string');
      if (op === 'prefix') return (v) => typeof v === 'string' && v.startsWith(arg);
      if (op === 'suffix') return (v) => typeof v === 'string' && v.endsWith(arg);
      return (v) => typeof v === 'string' && v.includes(arg);
    }
    case 'matches': {
      if (typeof arg !== 'string') return bad('must be a string');
      if (arg.length > MAX_REGEX_LENGTH) return bad(`a regular expression is limited to ${MAX_REGEX_LENGTH} characters`);
      let re: RE2JS;
      try {
        re = RE2JS.compile(arg);
      } catch (e) {
        return bad(`invalid regular expression (RE2 syntax): ${(e as Error).message}`);
      }
      // RE2 in JavaScript costs microseconds a test; the tested fields (event names,
      // technique ids) repeat from event to event, so recent answers are remembered.
      const memo = new Map<string, boolean>();
      return (v) => {
        if (typeof v !== 'string') return false;
        if (v.length > MEMO_MAX_INPUT) return re.test(v);
        let hit = memo.get(v);
        if (hit === undefined) {
          if (memo.size >= MEMO_SIZE) memo.clear();
          hit = re.test(v);
          memo.set(v, hit);
        }
        return hit;
      };
    }
    case 'exists':
      if (typeof arg !== 'boolean') return bad('must be true or false');
      return arg ? (v) => !isAbsent(v) : (v) => isAbsent(v);
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte': {
      if (typeof arg !== 'number' || !Number.isFinite(arg)) return bad('must be a number');
      const cmp =
        op === 'gt' ? (n: number) => n > arg : op === 'gte' ? (n: number) => n >= arg : op === 'lt' ? (n: number) => n < arg : (n: number) => n <= arg;
      return (v) => {
        const n = toNum(v);
        return n !== undefined && cmp(n);
      };
    }
  }
}

function leaf(cond: Record<string, unknown>, ctx: ConditionContext, at: string): Predicate | undefined {
  const ops = LEAF_OPS.filter((o) => o in cond);
  const extra = Object.keys(cond).filter((k) => k !== 'path' && !(LEAF_OPS as readonly string[]).includes(k));
  if (extra.length > 0) {
    ctx.problems.push({ at, message: `unknown condition key "${extra[0]}" (operators: ${LEAF_OPS.join(', ')}, all, any, not)` });
    return undefined;
  }
  if (ops.length !== 1) {
    ctx.problems.push({ at, message: ops.length === 0 ? 'a condition with a path needs one operator' : `one operator per condition (found ${ops.join(', ')})` });
    return undefined;
  }
  let segs: PathSegment[];
  try {
    segs = parsePath(cond.path as string);
  } catch (e) {
    ctx.problems.push({ at: `${at}/path`, message: e instanceof PathSyntaxError ? `invalid path: ${e.message}` : 'invalid path' });
    return undefined;
  }
  ctx.onPath?.(segs);
  const op = ops[0]!;
  const t = test(op, cond[op], ctx, at);
  if (!t) return undefined;
  const get: Getter = compileSegments(segs);
  if (!collects(segs)) return (src) => t(get(src));
  // `ne` and `exists: false` over a list hold when no element says otherwise.
  if (op === 'ne' || (op === 'exists' && cond.exists === false)) {
    return (src) => {
      const v = get(src);
      return !Array.isArray(v) || v.every((x) => t(x));
    };
  }
  return (src) => {
    const v = get(src);
    return Array.isArray(v) && v.some((x) => t(x));
  };
}

/**
 * Compiles a condition. Problems (with their location under `at`) go to ctx.problems and
 * the result is undefined; the caller keeps compiling to report every problem at once.
 */
export function compileCondition(cond: unknown, ctx: ConditionContext, at: string, depth = 0): Predicate | undefined {
  if (depth > MAX_DEPTH) {
    ctx.problems.push({ at, message: `conditions nest at most ${MAX_DEPTH} levels` });
    return undefined;
  }
  if (!isRecord(cond)) {
    ctx.problems.push({ at, message: 'a condition is an object' });
    return undefined;
  }
  const combinators = ['all', 'any', 'not'].filter((k) => k in cond);
  if (combinators.length > 0) {
    if (combinators.length > 1 || Object.keys(cond).length > 1) {
      ctx.problems.push({ at, message: 'all, any and not stand alone in their condition object' });
      return undefined;
    }
    if (combinators[0] === 'not') {
      const inner = compileCondition(cond.not, ctx, `${at}/not`, depth + 1);
      return inner && ((src) => !inner(src));
    }
    const key = combinators[0] as 'all' | 'any';
    const list = cond[key];
    if (!Array.isArray(list)) {
      ctx.problems.push({ at: `${at}/${key}`, message: 'must be a list of conditions' });
      return undefined;
    }
    const preds = list.map((c, i) => compileCondition(c, ctx, `${at}/${key}/${i}`, depth + 1));
    if (preds.some((p) => p === undefined)) return undefined;
    const ps = preds as Predicate[];
    if (key === 'all') return ps.length === 2 ? (src) => ps[0]!(src) && ps[1]!(src) : (src) => ps.every((p) => p(src));
    return ps.length === 2 ? (src) => ps[0]!(src) || ps[1]!(src) : (src) => ps.some((p) => p(src));
  }
  if (typeof cond.path !== 'string') {
    ctx.problems.push({ at, message: 'a condition needs a path (or all, any, not)' });
    return undefined;
  }
  return leaf(cond, ctx, at);
}
