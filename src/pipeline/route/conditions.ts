// Route conditions compiled into predicates over a normalized record, validated in the
// same pass so that the API and the routing stage can never disagree on what is valid.
// Comparisons are strict (no type coercion: "5" is not 5). A path with `[*]` holds when
// any element holds; the negative operators (ne, not_in, not_exists) are the exact
// negation of their positive twin, so over a list they hold when no element matches.
// Regular expressions run on RE2 (re2js): linear time whatever the pattern, so a route
// cannot stall the dispatcher with catastrophic backtracking.
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import { RE2JS } from 're2js';
import type { NormalizedRecord } from '../envelope.js';
import { compileField, PathSyntaxError, UnknownFieldError, type FieldRule } from './paths.js';
import { CONDITION_OPS, type ConditionOp } from './types.js';

export type RecordPredicate = (r: NormalizedRecord) => boolean;

export interface RouteProblem {
  /** Where in the definition: `condition.all[2].value`, `transforms[0].rate`. */
  path: string;
  message: string;
  /** For a field no supported OCSF class has: the closest known field path. */
  closest?: string;
}

/** The problem of a field path that does not compile (syntax, or unknown under the `ocsf` rule). */
export function fieldProblem(path: string, e: unknown): RouteProblem {
  if (e instanceof UnknownFieldError) return { path, message: e.message, closest: e.unknown.closest };
  return { path, message: e instanceof PathSyntaxError ? `invalid field path: ${e.message}` : 'invalid field path' };
}

export const CONDITION_LIMITS = { depth: 16, nodes: 200, listValues: 1_000, regexLength: 512, stringLength: 4_096 } as const;

/** Per regex or cidr condition: answers remembered (tested values repeat from event to event). */
const MEMO_SIZE = 512;
const MEMO_MAX_INPUT = 128;

type Scalar = string | number | boolean | null;
type ValueTest = (v: unknown) => boolean;

interface Ctx {
  problems: RouteProblem[];
  nodes: number;
  fields: FieldRule;
}

const POSITIVE: Partial<Record<ConditionOp, ConditionOp>> = { ne: 'eq', not_in: 'in', not_exists: 'exists' };

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function isScalar(v: unknown): v is Scalar {
  return v === null || typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v)) || typeof v === 'boolean';
}

function memoize(test: (s: string) => boolean): ValueTest {
  const memo = new Map<string, boolean>();
  return (v) => {
    if (typeof v !== 'string') return false;
    if (v.length > MEMO_MAX_INPUT) return test(v);
    let hit = memo.get(v);
    if (hit === undefined) {
      if (memo.size >= MEMO_SIZE) memo.clear();
      hit = test(v);
      memo.set(v, hit);
    }
    return hit;
  };
}

type Range = [ipaddr.IPv4 | ipaddr.IPv6, number];

function parseRange(text: string): Range | undefined {
  try {
    if (text.includes('/')) return ipaddr.parseCIDR(text);
    // A bare address is a range of one.
    if (isIP(text) === 0) return undefined;
    const addr = ipaddr.parse(text);
    return [addr, addr.kind() === 'ipv4' ? 32 : 128];
  } catch {
    return undefined;
  }
}

function cidrTest(ranges: Range[]): ValueTest {
  return memoize((s) => {
    // node:net is strict about the textual forms; ipaddr.js alone would also read "127.1".
    if (isIP(s) === 0) return false;
    let addr: ipaddr.IPv4 | ipaddr.IPv6;
    try {
      addr = ipaddr.process(s); // IPv4-mapped IPv6 (::ffff:10.0.0.1) is tested as IPv4
    } catch {
      return false;
    }
    for (const r of ranges) if (r[0].kind() === addr.kind() && addr.match(r)) return true;
    return false;
  });
}

/** The test of one positive operator on one value; undefined (with a problem) when its value is not valid. */
function valueTest(op: ConditionOp, value: unknown, has: boolean, ctx: Ctx, at: string): ValueTest | undefined {
  const bad = (message: string) => {
    ctx.problems.push({ path: `${at}.value`, message });
    return undefined;
  };
  const tooLong = (s: string) => s.length > CONDITION_LIMITS.stringLength;
  switch (op) {
    case 'eq':
      if (!isScalar(value)) return bad(`${op} needs a string, number, boolean or null value`);
      if (typeof value === 'string' && tooLong(value)) return bad(`a value is limited to ${CONDITION_LIMITS.stringLength} characters`);
      return (v) => v === value;
    case 'in': {
      if (!Array.isArray(value) || value.length === 0) return bad(`${op} needs a non-empty list of values`);
      if (value.length > CONDITION_LIMITS.listValues) return bad(`a list is limited to ${CONDITION_LIMITS.listValues} values`);
      const i = value.findIndex((x) => !isScalar(x));
      if (i >= 0) return bad(`item ${i} is not a string, number, boolean or null`);
      const set = new Set<unknown>(value);
      return (v) => set.has(v);
    }
    case 'prefix':
    case 'suffix': {
      if (typeof value !== 'string' || value === '') return bad(`${op} needs a non-empty string value`);
      if (tooLong(value)) return bad(`a value is limited to ${CONDITION_LIMITS.stringLength} characters`);
      return op === 'prefix' ? (v) => typeof v === 'string' && v.startsWith(value) : (v) => typeof v === 'string' && v.endsWith(value);
    }
    case 'contains': {
      if (!isScalar(value) || value === '') return bad('contains needs a non-empty string (substring) or a scalar (list element)');
      if (typeof value === 'string') {
        if (tooLong(value)) return bad(`a value is limited to ${CONDITION_LIMITS.stringLength} characters`);
        return (v) => (typeof v === 'string' ? v.includes(value) : Array.isArray(v) && v.includes(value));
      }
      return (v) => Array.isArray(v) && v.includes(value);
    }
    case 'regex': {
      if (typeof value !== 'string' || value === '') return bad('regex needs a non-empty string value (RE2 syntax)');
      if (value.length > CONDITION_LIMITS.regexLength) return bad(`a regular expression is limited to ${CONDITION_LIMITS.regexLength} characters`);
      let re: RE2JS;
      try {
        re = RE2JS.compile(value);
      } catch (e) {
        return bad(`invalid regular expression (RE2 syntax): ${(e as Error).message}`);
      }
      // Unanchored: the pattern may match anywhere (use ^ and $ to anchor).
      return memoize((s) => re.test(s));
    }
    case 'exists':
      // null is tolerated: forms often send value: null for operators without one.
      if (has && value !== undefined && value !== null) return bad(`${op} takes no value`);
      return (v) => v !== undefined && v !== null;
    case 'cidr': {
      const list = typeof value === 'string' ? [value] : value;
      if (!Array.isArray(list) || list.length === 0) return bad('cidr needs a CIDR ("10.0.0.0/8") or a non-empty list of them');
      if (list.length > CONDITION_LIMITS.listValues) return bad(`a list is limited to ${CONDITION_LIMITS.listValues} values`);
      const ranges: Range[] = [];
      for (let i = 0; i < list.length; i++) {
        const r = typeof list[i] === 'string' ? parseRange(list[i] as string) : undefined;
        if (!r) return bad(`${typeof value === 'string' ? '' : `item ${i}: `}not an IPv4 or IPv6 CIDR (or address)`);
        ranges.push(r);
      }
      return cidrTest(ranges);
    }
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte': {
      if (typeof value !== 'number' || !Number.isFinite(value)) return bad(`${op} needs a number value`);
      // Numbers only: a numeric string is not compared (OCSF times and counts are numbers).
      if (op === 'gt') return (v) => typeof v === 'number' && v > value;
      if (op === 'gte') return (v) => typeof v === 'number' && v >= value;
      if (op === 'lt') return (v) => typeof v === 'number' && v < value;
      return (v) => typeof v === 'number' && v <= value;
    }
    default:
      return undefined; // negative ops are compiled through their positive twin
  }
}

function compileLeaf(cond: Record<string, unknown>, ctx: Ctx, at: string): RecordPredicate | undefined {
  const extra = Object.keys(cond).filter((k) => k !== 'field' && k !== 'op' && k !== 'value');
  if (extra.length > 0) {
    ctx.problems.push({ path: `${at}.${extra[0]}`, message: `unknown key (a condition is {field, op, value} or all, any, not)` });
    return undefined;
  }
  let ok = true;
  let access: ReturnType<typeof compileField> | undefined;
  if (typeof cond.field !== 'string') {
    ctx.problems.push({ path: `${at}.field`, message: 'field is required (an OCSF path or envelope.*)' });
    ok = false;
  } else {
    try {
      access = compileField(cond.field, ctx.fields);
    } catch (e) {
      ctx.problems.push(fieldProblem(`${at}.field`, e));
      ok = false;
    }
  }
  const op = cond.op;
  if (typeof op !== 'string' || !(CONDITION_OPS as readonly string[]).includes(op)) {
    ctx.problems.push({ path: `${at}.op`, message: `op must be one of ${CONDITION_OPS.join(', ')}` });
    return undefined;
  }
  const positive = POSITIVE[op as ConditionOp] ?? (op as ConditionOp);
  const test = valueTest(positive, cond.value, 'value' in cond, ctx, at);
  if (!ok || !access || !test) return undefined;
  const { get, many } = access;
  let pred: RecordPredicate;
  if (!many) pred = (r) => test(get(r));
  else
    pred = (r) => {
      const list = get(r) as unknown[] | undefined;
      if (list === undefined) return false;
      for (let i = 0; i < list.length; i++) if (test(list[i])) return true;
      return false;
    };
  return positive === op ? pred : (r) => !pred(r);
}

function compileNode(cond: unknown, ctx: Ctx, at: string, depth: number): RecordPredicate | undefined {
  if (++ctx.nodes > CONDITION_LIMITS.nodes) {
    if (ctx.nodes === CONDITION_LIMITS.nodes + 1) ctx.problems.push({ path: at, message: `a condition has at most ${CONDITION_LIMITS.nodes} nodes` });
    return undefined;
  }
  if (depth > CONDITION_LIMITS.depth) {
    ctx.problems.push({ path: at, message: `conditions nest at most ${CONDITION_LIMITS.depth} levels` });
    return undefined;
  }
  if (!isRecord(cond)) {
    ctx.problems.push({ path: at, message: 'a condition is an object: {field, op, value}, {all: [...]}, {any: [...]} or {not: {...}}' });
    return undefined;
  }
  const combinators = (['all', 'any', 'not'] as const).filter((k) => k in cond);
  if (combinators.length === 0) return compileLeaf(cond, ctx, at);
  if (Object.keys(cond).length > 1) {
    ctx.problems.push({ path: at, message: 'all, any and not stand alone in their condition object' });
    return undefined;
  }
  const key = combinators[0]!;
  if (key === 'not') {
    const inner = compileNode(cond.not, ctx, `${at}.not`, depth + 1);
    return inner && ((r) => !inner(r));
  }
  const list = cond[key];
  if (!Array.isArray(list) || list.length === 0) {
    ctx.problems.push({ path: `${at}.${key}`, message: `${key} needs a non-empty list of conditions` });
    return undefined;
  }
  const preds: RecordPredicate[] = [];
  let ok = true;
  for (let i = 0; i < list.length; i++) {
    const p = compileNode(list[i], ctx, `${at}.${key}[${i}]`, depth + 1);
    if (p) preds.push(p);
    else ok = false;
  }
  if (!ok) return undefined;
  if (preds.length === 1) return preds[0];
  if (key === 'all') {
    if (preds.length === 2) {
      const [a, b] = preds as [RecordPredicate, RecordPredicate];
      return (r) => a(r) && b(r);
    }
    return (r) => {
      for (let i = 0; i < preds.length; i++) if (!preds[i]!(r)) return false;
      return true;
    };
  }
  if (preds.length === 2) {
    const [a, b] = preds as [RecordPredicate, RecordPredicate];
    return (r) => a(r) || b(r);
  }
  return (r) => {
    for (let i = 0; i < preds.length; i++) if (preds[i]!(r)) return true;
    return false;
  };
}

const ALWAYS: RecordPredicate = () => true;

/**
 * Compiles a condition (null or undefined: every event matches). Problems go to `problems`
 * with their location under `at`, every one of them (not only the first), and the result
 * is then undefined. `fields`: whether field paths must exist in OCSF (paths.ts, FieldRule).
 */
export function compileCondition(cond: unknown, problems: RouteProblem[], at = 'condition', fields: FieldRule = 'any'): RecordPredicate | undefined {
  if (cond === null || cond === undefined) return ALWAYS;
  const ctx: Ctx = { problems, nodes: 0, fields };
  const before = problems.length;
  const pred = compileNode(cond, ctx, at, 1);
  return problems.length > before ? undefined : pred;
}
