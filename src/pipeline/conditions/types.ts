// The condition language shared by mappings (`when`), routes, collection filters and
// enrichment policies: {field, op, value} leaves under all / any / not. docs/conditions.md is
// the user's page; compile.ts is the one compiler. What a field path addresses is the
// caller's business (a FieldReader): raw vendor fields in a mapping, OCSF attributes and
// envelope.* in a route.

export const CONDITION_OPS = [
  'eq',
  'ne',
  'in',
  'not_in',
  'prefix',
  'suffix',
  'contains',
  'regex',
  'exists',
  'not_exists',
  'cidr',
  'gt',
  'gte',
  'lt',
  'lte',
] as const;
export type ConditionOp = (typeof CONDITION_OPS)[number];

export interface FieldCondition {
  field: string;
  op: ConditionOp;
  value?: unknown;
  /** Text comparisons (eq, ne, in, not_in, prefix, suffix, contains, regex) ignore case: Sigma's default. */
  ignore_case?: boolean;
}

/** The operators `ignore_case` applies to: the text comparisons. */
export const CASE_OPS: readonly ConditionOp[] = ['eq', 'ne', 'in', 'not_in', 'prefix', 'suffix', 'contains', 'regex'];

export type Condition = { all: Condition[] } | { any: Condition[] } | { not: Condition } | FieldCondition;

export const CONDITION_LIMITS = {
  depth: 16,
  nodes: 200,
  listValues: 1_000,
  regexLength: 512,
  stringLength: 4_096,
} as const;

/** Where a problem is, from the condition's root: `['all', 2, 'value']`. Callers format it in their own style. */
export type ConditionLocation = readonly (string | number)[];

export interface ConditionProblem {
  at: ConditionLocation;
  message: string;
  /** For a field the reader does not know: the closest known one. */
  closest?: string;
}

/** How a compiled field is read. `many`: the path has `[*]`, its value is a list of every element's value (undefined when none). */
export interface FieldAccess<T> {
  get: (src: T) => unknown;
  many: boolean;
}

/** Why a field path cannot be read, as the user should see it. */
export interface FieldFailure {
  problem: string;
  closest?: string;
}

export interface FieldReader<T> {
  /** Compiles a field path once (never per event). */
  field(path: string): FieldAccess<T> | FieldFailure;
  /** What a field is, for the message of a leaf without one: "an OCSF path or envelope.*". */
  describe: string;
}

export type Predicate<T> = (src: T) => boolean;
