// The one condition compiler. A condition is compiled once into a predicate and validated in
// the same pass, so an API and the stage that runs the condition can never disagree on what
// is valid. Every problem is reported (not only the first), each at its location from the
// condition's root. Comparisons are strict (no coercion: "5" is not 5) except gt, gte, lt
// and lte, which also read numeric text. A path with `[*]` holds when any element holds; the
// negative operators (ne, not_in, not_exists) are the exact negation of their positive twin,
// so over a list they hold when no element does. Regular expressions run on RE2 (re2js):
// linear time whatever the pattern, so no condition can stall a stage.
import { isOldLeaf, readOldLeaf, type Leaf } from './old-form.js';
import {
  CONDITION_LIMITS,
  CONDITION_OPS,
  type ConditionLocation,
  type ConditionOp,
  type ConditionProblem,
  type FieldAccess,
  type FieldReader,
  type Predicate,
} from './types.js';
import { buildTest, checkIgnoreCase, checkValue, POSITIVE, type PositiveOp } from './values.js';

export interface CompileOptions<T> {
  fields: FieldReader<T>;
  /**
   * Mapping documents: also read the old leaf form ({path, eq}, old-form.ts), and accept an
   * empty all (always true) or any (never true) as mapping documents always did.
   */
  oldForm?: boolean;
}

interface Ctx<T> {
  opts: CompileOptions<T>;
  report: (p: ConditionProblem) => void;
  nodes: number;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function readLeaf<T>(cond: Record<string, unknown>, ctx: Ctx<T>, at: ConditionLocation): Leaf | undefined {
  if (ctx.opts.oldForm && isOldLeaf(cond)) return readOldLeaf(cond, at, ctx.report);
  const extra = Object.keys(cond).find((k) => k !== 'field' && k !== 'op' && k !== 'value' && k !== 'ignore_case');
  if (extra !== undefined) {
    ctx.report({
      at: [...at, extra],
      message: 'unknown key (a condition is {field, op, value, ignore_case?} or all, any, not)',
    });
    return undefined;
  }
  return {
    field: cond.field,
    op: cond.op,
    value: cond.value,
    has: 'value' in cond,
    ignoreCase: cond.ignore_case,
    fieldAt: [...at, 'field'],
    valueAt: [...at, 'value'],
    old: false,
  };
}

function compileLeaf<T>(cond: Record<string, unknown>, ctx: Ctx<T>, at: ConditionLocation): Predicate<T> | undefined {
  const leaf = readLeaf(cond, ctx, at);
  if (!leaf) return undefined;
  let access: FieldAccess<T> | undefined;
  if (typeof leaf.field !== 'string') {
    ctx.report({ at: leaf.fieldAt, message: `field is required (${ctx.opts.fields.describe})` });
  } else {
    const a = ctx.opts.fields.field(leaf.field);
    if ('problem' in a)
      ctx.report({ at: leaf.fieldAt, message: a.problem, ...(a.closest === undefined ? {} : { closest: a.closest }) });
    else access = a;
  }
  // The one form goes on to report the op's and the value's problems too.
  if (leaf.old && !access) return undefined;
  const op = leaf.op;
  if (typeof op !== 'string' || !(CONDITION_OPS as readonly string[]).includes(op)) {
    ctx.report({ at: [...at, 'op'], message: `op must be one of ${CONDITION_OPS.join(', ')}` });
    return undefined;
  }
  const positive: PositiveOp = POSITIVE[op as ConditionOp] ?? (op as PositiveOp);
  const ignoreCase = leaf.ignoreCase === true;
  if (leaf.ignoreCase !== undefined) {
    const caseProblem = checkIgnoreCase(op as ConditionOp, leaf.ignoreCase, leaf.value);
    if (caseProblem) {
      ctx.report({ at: [...at, 'ignore_case'], message: caseProblem });
      return undefined;
    }
  }
  const problem = leaf.old ? undefined : checkValue(positive, leaf.value, leaf.has);
  const test = problem ?? buildTest(positive, leaf.value, ignoreCase);
  if (typeof test === 'string') {
    ctx.report({ at: leaf.valueAt, message: test });
    return undefined;
  }
  if (!access) return undefined;
  const { get, many } = access;
  const negative = positive !== op;
  if (!many) return negative ? (src) => !test(get(src)) : (src) => test(get(src));
  if (negative) {
    return (src) => {
      const list = get(src) as unknown[] | undefined;
      if (list === undefined) return true;
      for (let i = 0; i < list.length; i++) if (test(list[i])) return false;
      return true;
    };
  }
  return (src) => {
    const list = get(src) as unknown[] | undefined;
    if (list === undefined) return false;
    for (let i = 0; i < list.length; i++) if (test(list[i])) return true;
    return false;
  };
}

function combine<T>(key: 'all' | 'any', preds: Predicate<T>[]): Predicate<T> {
  if (preds.length === 0) return key === 'all' ? () => true : () => false;
  if (preds.length === 1) return preds[0]!;
  if (preds.length === 2) {
    const [a, b] = preds as [Predicate<T>, Predicate<T>];
    return key === 'all' ? (src) => a(src) && b(src) : (src) => a(src) || b(src);
  }
  if (key === 'all') {
    return (src) => {
      for (let i = 0; i < preds.length; i++) if (!preds[i]!(src)) return false;
      return true;
    };
  }
  return (src) => {
    for (let i = 0; i < preds.length; i++) if (preds[i]!(src)) return true;
    return false;
  };
}

function compileNode<T>(cond: unknown, ctx: Ctx<T>, at: ConditionLocation, depth: number): Predicate<T> | undefined {
  if (++ctx.nodes > CONDITION_LIMITS.nodes) {
    if (ctx.nodes === CONDITION_LIMITS.nodes + 1)
      ctx.report({ at, message: `a condition has at most ${CONDITION_LIMITS.nodes} nodes` });
    return undefined;
  }
  if (depth > CONDITION_LIMITS.depth) {
    ctx.report({ at, message: `conditions nest at most ${CONDITION_LIMITS.depth} levels` });
    return undefined;
  }
  if (!isRecord(cond)) {
    ctx.report({
      at,
      message: 'a condition is an object: {field, op, value}, {all: [...]}, {any: [...]} or {not: {...}}',
    });
    return undefined;
  }
  const combinators = (['all', 'any', 'not'] as const).filter((k) => k in cond);
  if (combinators.length === 0) return compileLeaf(cond, ctx, at);
  if (Object.keys(cond).length > 1) {
    ctx.report({ at, message: 'all, any and not stand alone in their condition object' });
    return undefined;
  }
  const key = combinators[0]!;
  if (key === 'not') {
    const inner = compileNode(cond.not, ctx, [...at, 'not'], depth + 1);
    return inner && ((src) => !inner(src));
  }
  const list = cond[key];
  if (!Array.isArray(list) || (list.length === 0 && !ctx.opts.oldForm)) {
    ctx.report({
      at: [...at, key],
      message: ctx.opts.oldForm ? `${key} must be a list of conditions` : `${key} needs a non-empty list of conditions`,
    });
    return undefined;
  }
  const preds: Predicate<T>[] = [];
  let ok = true;
  for (let i = 0; i < list.length; i++) {
    const p = compileNode(list[i], ctx, [...at, key, i], depth + 1);
    if (p) preds.push(p);
    else ok = false;
  }
  return ok ? combine(key, preds) : undefined;
}

/**
 * Compiles a condition; every problem goes to `report` with its location from the
 * condition's root, and the result is then undefined (the caller may keep compiling the
 * rest of its document, to report every problem at once).
 */
export function compileCondition<T>(
  cond: unknown,
  opts: CompileOptions<T>,
  report: (p: ConditionProblem) => void,
): Predicate<T> | undefined {
  let failed = false;
  const ctx: Ctx<T> = {
    opts,
    report: (p) => {
      failed = true;
      report(p);
    },
    nodes: 0,
  };
  const pred = compileNode(cond, ctx, [], 1);
  return failed ? undefined : pred;
}
