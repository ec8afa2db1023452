// The one condition language (docs/conditions.md) compiled to SQL over the event store's table,
// with the same meaning as the in-memory compiler (pipeline/conditions): comparisons are strict
// (jsonb equality keeps types apart), gt/gte/lt/lte also read numeric text, `exists` treats
// null, "" and [] as absent, a `[*]` path holds when any element holds and the negative
// operators are the exact negation of their positive twin. The columns queries filter on most
// (time, class_uid, ..., the envelope's) are read from their columns, so their indexes serve.
// Known differences (docs/search.md): `regex` runs on PostgreSQL's engine, not RE2; numeric
// text is decimal only; `ignore_case` lower-cases with PostgreSQL's lower() (the database's
// collation), where the pass uses JavaScript's.
import { sql, type RawBuilder } from 'kysely';
import type { Condition, FieldCondition } from '../../pipeline/conditions/types.js';
import { parsePath, type PathSegment } from '../../pipeline/normalize/paths.js';
import { STORE_COLUMNS as COLUMNS } from './event-store/columns.js';

type Sql = RawBuilder<unknown>;

/** Envelope fields the store does not keep. */
export const UNSTORED_FIELDS = new Set(['envelope.valid']);

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const NUMERIC_TEXT = '^\\s*[-+]?([0-9]+\\.?[0-9]*|\\.[0-9]+)([eE][-+]?[0-9]+)?\\s*$';
const IP_TEXT = '^[0-9A-Fa-f:.]+$';

const FALSE: Sql = sql`false`;
const TRUE: Sql = sql`true`;

/** A jsonpath string literal (JSON's escapes are jsonpath's). */
function jsonpathKey(key: string): string {
  return JSON.stringify(key);
}

/** `lax $."a"[*]."b"`; `flatten` appends [*] so a list at the end yields its elements (as `[*]` paths read). */
export function jsonpathOf(segs: readonly PathSegment[], flatten: boolean): string {
  let out = 'lax $';
  for (const s of segs) {
    if (s.t === 'key') out += `.${jsonpathKey(s.k)}`;
    else if (s.t === 'idx') out += s.i >= 0 ? `[${s.i}]` : s.i === -1 ? '[last]' : `[last - ${-s.i - 1}]`;
    else if (s.t === 'all') out += '[*]';
  }
  return flatten ? `${out}[*]` : out;
}

/** The positive test of one jsonb value `e` (never NULL: coalesced by the caller). */
function jsonTest(e: Sql, op: string, value: unknown): Sql {
  const text = sql`(${e} #>> '{}')`;
  const isString = sql`jsonb_typeof(${e}) = 'string'`;
  switch (op) {
    case 'eq':
      return sql`${e} = ${JSON.stringify(value)}::jsonb`;
    case 'in':
      return sql`${e} = any(${(value as unknown[]).map((v) => JSON.stringify(v))}::jsonb[])`;
    case 'prefix':
      return sql`(${isString} and starts_with(${text}, ${value as string}))`;
    case 'suffix':
      return sql`(${isString} and right(${text}, ${(value as string).length}) = ${value as string})`;
    case 'contains': {
      const member = sql`(jsonb_typeof(${e}) = 'array' and ${e} @> ${JSON.stringify([value])}::jsonb)`;
      return typeof value === 'string' ? sql`((${isString} and strpos(${text}, ${value}) > 0) or ${member})` : member;
    }
    case 'regex':
      return sql`(${isString} and ${text} ~ ${value as string})`;
    case 'exists':
      return sql`(${e} <> 'null'::jsonb and ${e} <> '""'::jsonb and ${e} <> '[]'::jsonb)`;
    case 'cidr': {
      const ranges = typeof value === 'string' ? [value] : (value as string[]);
      const addr = sql`weir_try_inet(regexp_replace(${text}, '^::ffff:([0-9]+\\.[0-9]+\\.[0-9]+\\.[0-9]+)$', '\\1', 'i'))`;
      return sql`(${isString} and ${text} ~ ${IP_TEXT} and ${addr} <<= any(${ranges}::inet[]))`;
    }
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte': {
      const cmp = sql.raw({ gt: '>', gte: '>=', lt: '<', lte: '<=' }[op]);
      const num = sql`(case jsonb_typeof(${e}) when 'number' then (${e})::numeric when 'string' then (case when ${text} ~ ${NUMERIC_TEXT} then trim(${text})::numeric end) end)`;
      return sql`(${num} ${cmp} ${value as number}::numeric)`;
    }
  }
  throw new Error(`no SQL for operator ${op}`);
}

/** The positive test of a column (int, text, uuid, time) with the same strictness as the event's value. */
function columnTest(column: Sql, kind: 'int' | 'text' | 'uuid' | 'time', op: string, value: unknown): Sql | undefined {
  const isNum = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
  if (kind === 'time') {
    // The event's time is epoch milliseconds: numbers compare with the column.
    const at = (v: number) => sql`to_timestamp(${v}::float8 / 1000)`;
    switch (op) {
      case 'eq':
        return isNum(value) ? sql`${column} = ${at(value)}` : FALSE;
      case 'in': {
        const nums = (value as unknown[]).filter(isNum);
        return nums.length ? sql`${column} = any(array[${sql.join(nums.map(at))}])` : FALSE;
      }
      case 'exists':
        return TRUE;
      case 'gt':
      case 'gte':
      case 'lt':
      case 'lte':
        return sql`${column} ${sql.raw({ gt: '>', gte: '>=', lt: '<', lte: '<=' }[op])} ${at(value as number)}`;
      default:
        return FALSE;
    }
  }
  if (kind === 'int') {
    switch (op) {
      case 'eq':
        return Number.isInteger(value) ? sql`${column} = ${value as number}` : FALSE;
      case 'in': {
        const ints = (value as unknown[]).filter((v) => Number.isInteger(v)) as number[];
        return ints.length ? sql`${column} = any(${ints}::bigint[])` : FALSE;
      }
      case 'exists':
        return sql`${column} is not null`;
      case 'gt':
      case 'gte':
      case 'lt':
      case 'lte':
        return sql`${column} ${sql.raw({ gt: '>', gte: '>=', lt: '<', lte: '<=' }[op])} ${value as number}::numeric`;
      default:
        // Text operators on a number never hold (a number is not a string).
        return op === 'contains' || op === 'prefix' || op === 'suffix' || op === 'regex' || op === 'cidr'
          ? FALSE
          : undefined;
    }
  }
  const text = kind === 'uuid' ? sql`${column}::text` : column;
  const str = (v: unknown): v is string => typeof v === 'string';
  switch (op) {
    case 'eq':
      if (!str(value)) return FALSE;
      if (kind === 'uuid') return UUID.test(value) ? sql`${column} = ${value.toLowerCase()}::uuid` : FALSE;
      return sql`${column} = ${value}`;
    case 'in': {
      const list = (value as unknown[]).filter(str);
      if (kind === 'uuid') {
        const ids = list.filter((v) => UUID.test(v)).map((v) => v.toLowerCase());
        return ids.length ? sql`${column} = any(${ids}::uuid[])` : FALSE;
      }
      return list.length ? sql`${column} = any(${list}::text[])` : FALSE;
    }
    case 'prefix':
      return sql`starts_with(${text}, ${value as string})`;
    case 'suffix':
      return sql`right(${text}, ${(value as string).length}) = ${value as string}`;
    case 'contains':
      return str(value) ? sql`strpos(${text}, ${value}) > 0` : FALSE;
    case 'regex':
      return sql`${text} ~ ${value as string}`;
    case 'exists':
      return kind === 'uuid' ? TRUE : sql`${column} <> ''`;
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte':
      return sql`(case when ${text} ~ ${NUMERIC_TEXT} then trim(${text})::numeric end) ${sql.raw({ gt: '>', gte: '>=', lt: '<', lte: '<=' }[op])} ${value as number}::numeric`;
    default:
      return FALSE;
  }
}

const NEGATIVE: Record<string, string> = { ne: 'eq', not_in: 'in', not_exists: 'exists' };

/** A text comparison ignoring case (`ignore_case`, checked to carry string values): `low` is the lower-cased text. */
function caseText(low: Sql, op: string, value: unknown): Sql {
  switch (op) {
    case 'eq':
      return sql`${low} = lower(${value as string})`;
    case 'in':
      return sql`${low} = any(array(select lower(u) from unnest(${value as string[]}::text[]) as u))`;
    case 'prefix':
      return sql`starts_with(${low}, lower(${value as string}))`;
    case 'suffix':
      return sql`right(${low}, length(lower(${value as string}))) = lower(${value as string})`;
    case 'contains':
      return sql`strpos(${low}, lower(${value as string})) > 0`;
    case 'regex':
      return sql`${low} ~* ${value as string}`;
  }
  throw new Error(`no case-insensitive SQL for operator ${op}`);
}

/** jsonTest's twin for `ignore_case`: strings only, and for contains also a list's string elements. */
function jsonCaseTest(e: Sql, op: string, value: unknown): Sql {
  const test = sql`(jsonb_typeof(${e}) = 'string' and ${caseText(sql`lower(${e} #>> '{}')`, op, value)})`;
  if (op !== 'contains') return test;
  return sql`(${test} or (jsonb_typeof(${e}) = 'array' and exists (select 1 from jsonb_array_elements(${e}) as y(w) where jsonb_typeof(y.w) = 'string' and lower(y.w #>> '{}') = lower(${value as string}))))`;
}

/** The value of a field as jsonb (a single value; paths with [*] or indexes go through jsonpath). */
export function fieldValue(field: string): Sql {
  const column = COLUMNS[field];
  if (column) {
    if (column.kind === 'time') return sql`to_jsonb((extract(epoch from time) * 1000)::bigint)`;
    return sql`to_jsonb(${sql.ref(column.column)})`;
  }
  const segs = parsePath(field);
  if (segs.every((s) => s.t === 'key')) return sql`(event #> ${segs.map((s) => (s as { k: string }).k)}::text[])`;
  return sql`jsonb_path_query_first(event, ${jsonpathOf(segs, false)}::jsonpath)`;
}

function leafSql(leaf: FieldCondition): Sql {
  const positiveOp = NEGATIVE[leaf.op] ?? leaf.op;
  const negate = positiveOp !== leaf.op;
  let test: Sql | undefined;
  const column = COLUMNS[leaf.field];
  const ignoreCase = leaf.ignore_case === true;
  const valueTest = ignoreCase ? jsonCaseTest : jsonTest;
  if (column && ignoreCase) {
    // Numbers and times are not text: a text comparison on them never holds (as in the pass).
    test =
      column.kind === 'text' || column.kind === 'uuid'
        ? caseText(sql`lower(${sql.ref(column.column)}::text)`, positiveOp, leaf.value)
        : FALSE;
  } else if (column) test = columnTest(sql.ref(column.column), column.kind, positiveOp, leaf.value);
  if (test === undefined) {
    const segs = parsePath(leaf.field);
    if (segs.every((s) => s.t === 'key')) {
      const e = sql`(event #> ${segs.map((s) => (s as { k: string }).k)}::text[])`;
      test = sql`(${e} is not null and ${valueTest(e, positiveOp, leaf.value)})`;
    } else {
      // Every element a [*] path reads (a list at its end read element by element), nulls skipped.
      const many = segs.some((s) => s.t === 'all');
      const x = sql`x.v`;
      test = sql`exists (select 1 from jsonb_path_query(event, ${jsonpathOf(segs, many)}::jsonpath) as x(v) where ${x} <> 'null'::jsonb and ${valueTest(x, positiveOp, leaf.value)})`;
    }
  }
  const positive = sql`coalesce(${test}, false)`;
  return negate ? sql`not ${positive}` : positive;
}

/** A condition (checked by planQuery) as a SQL boolean over `events`; null matches everything. */
export function conditionSql(cond: Condition | null): Sql {
  if (cond === null) return TRUE;
  if ('all' in cond) return sql`(${sql.join(cond.all.map(conditionSql), sql` and `)})`;
  if ('any' in cond) return sql`(${sql.join(cond.any.map(conditionSql), sql` or `)})`;
  if ('not' in cond) return sql`(not ${conditionSql(cond.not)})`;
  return leafSql(cond);
}

/** The fields of a condition, for checks that depend on the store (UNSTORED_FIELDS). */
export function conditionFields(cond: Condition | null, out: string[] = []): string[] {
  if (cond === null) return out;
  if ('all' in cond) cond.all.forEach((c) => conditionFields(c, out));
  else if ('any' in cond) cond.any.forEach((c) => conditionFields(c, out));
  else if ('not' in cond) conditionFields(cond.not, out);
  else out.push(cond.field);
  return out;
}

/** The sort expression of a field: its column when it has one, else its jsonb value. */
export function sortExpression(field: string): Sql {
  const column = COLUMNS[field];
  return column ? sql.ref(column.column) : fieldValue(field);
}
