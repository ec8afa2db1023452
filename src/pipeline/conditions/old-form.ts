// The mapping language's first condition form, `{path: "a.b", eq: 1}`: still read in mapping
// documents (published ones, the built-in ones) and translated to the one form's leaf on
// compile. It keeps what it accepted before (eq/ne of a list or object, empty lists and
// strings) and its messages and locations (`/when/eq`), so no stored document stops
// compiling and no editor stops pointing at the right key.
import { CONDITION_LIMITS, type ConditionLocation, type ConditionProblem } from './types.js';
import { isScalar } from './values.js';

export const OLD_OPS = [
  'eq',
  'ne',
  'in',
  'prefix',
  'suffix',
  'contains',
  'matches',
  'exists',
  'gt',
  'gte',
  'lt',
  'lte',
] as const;
type OldOp = (typeof OLD_OPS)[number];

/** A leaf in the one form, with where its parts were written. */
export interface Leaf {
  field: unknown;
  /** Unchecked in the one form (the compiler checks it); a known operator in the old. */
  op: unknown;
  value: unknown;
  has: boolean;
  /** `ignore_case` as written (the one form only). */
  ignoreCase?: unknown;
  fieldAt: ConditionLocation;
  valueAt: ConditionLocation;
  /** Read from the old form: its value was already checked here, by the old rules. */
  old: boolean;
}

/** A leaf is in the old form when it has neither of the one form's `field` and `op`. */
export function isOldLeaf(cond: Record<string, unknown>): boolean {
  return !('field' in cond) && !('op' in cond);
}

function oldValueProblem(op: OldOp, v: unknown): string | undefined {
  switch (op) {
    case 'eq':
    case 'ne':
      return undefined;
    case 'in':
      if (!Array.isArray(v)) return 'must be a list';
      return v.every(isScalar) ? undefined : 'must list strings, numbers, booleans or null';
    case 'prefix':
    case 'suffix':
    case 'contains':
      return typeof v === 'string' ? undefined : 'must be a string';
    case 'matches':
      if (typeof v !== 'string') return 'must be a string';
      return v.length > CONDITION_LIMITS.regexLength
        ? `a regular expression is limited to ${CONDITION_LIMITS.regexLength} characters`
        : undefined;
    case 'exists':
      return typeof v === 'boolean' ? undefined : 'must be true or false';
    default:
      return typeof v === 'number' && Number.isFinite(v) ? undefined : 'must be a number';
  }
}

/** Reads an old-form leaf as a one-form leaf; undefined after reporting its problem. */
export function readOldLeaf(
  cond: Record<string, unknown>,
  at: ConditionLocation,
  report: (p: ConditionProblem) => void,
): Leaf | undefined {
  if (typeof cond.path !== 'string') {
    report({ at, message: 'a condition needs a path (or field and op, or all, any, not)' });
    return undefined;
  }
  const extra = Object.keys(cond).filter((k) => k !== 'path' && !(OLD_OPS as readonly string[]).includes(k));
  if (extra.length > 0) {
    report({
      at,
      message: `unknown condition key "${extra[0]}" (operators: ${OLD_OPS.join(', ')}, all, any, not; or {field, op, value})`,
    });
    return undefined;
  }
  const ops = OLD_OPS.filter((o) => o in cond);
  if (ops.length !== 1) {
    report({
      at,
      message:
        ops.length === 0
          ? 'a condition with a path needs one operator'
          : `one operator per condition (found ${ops.join(', ')})`,
    });
    return undefined;
  }
  const op = ops[0]!;
  const value = cond[op];
  const valueAt = [...at, op];
  const problem = oldValueProblem(op, value);
  if (problem) {
    report({ at: valueAt, message: problem });
    return undefined;
  }
  const leaf = { field: cond.path, has: true, fieldAt: [...at, 'path'], valueAt, old: true };
  if (op === 'matches') return { ...leaf, op: 'regex', value };
  if (op === 'exists') return { ...leaf, op: value ? 'exists' : 'not_exists', value: undefined };
  return { ...leaf, op, value };
}
