// Field paths of the condition language read in DuckDB SQL over `events`, as the pass's path
// reader reads them (condition.ts's header says how), and fields as projected, sorted, counted.
import { STORED_COLUMNS } from '../../../../pipeline/delivery/stored-columns.js';
import { parsePath, type PathSegment } from '../../../../pipeline/normalize/paths.js';
import { STORE_COLUMNS as COLUMNS, type ColumnKind } from '../columns.js';
import { Ctx, jIsArray, jIsNumber, jIsString, jString, jText, sqlString } from './sql.js';

/** The searched fields' paths as key lists, each with its h_* column. */
const HOT = STORED_COLUMNS.map((c) => ({ keys: c.path.split('.'), column: c.column }));

type Step = { t: 'keys'; path: string } | { t: 'idx'; i: number } | { t: 'all' };

interface PathPlan {
  t: 'path';
  /** Where the reading starts: `event` (with a first run of keys, if any) or a searched column (the value at its path). */
  root: { t: 'event'; run: string | null } | { t: 'hot'; column: string };
  steps: Step[];
  /** The path has `[*]`: its values are every element's. */
  many: boolean;
  /** The pass's fast path for plain keys keeps a null value (null is not missing); every other path drops it. */
  keepNull: boolean;
}

type FieldPlan = { t: 'column'; column: string; kind: ColumnKind } | { t: 'hot'; column: string } | PathPlan;

const INDEX_LIKE = /^\d+$/;

function pointerToken(k: string): string {
  return k.replaceAll('~', '~0').replaceAll('/', '~1');
}

function jsonPathKey(k: string): string {
  return `."${k.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`;
}

/**
 * Runs of keys as json_extract paths. A JSON pointer takes any key but reads "0" of a list as
 * its first element; DuckDB's quoted JSONPath reads keys only from objects but takes neither
 * "" nor "*" (a wildcard). A run is written in whichever form takes all of its keys.
 * `fromObject`: the first key is read from `event` itself, an object.
 */
function keyRuns(keys: readonly string[], fromObject: boolean): string[] {
  const out: string[] = [];
  let run: string[] = [];
  const pointerOk = (ks: string[], first: boolean) => ks.every((k, j) => !INDEX_LIKE.test(k) || (j === 0 && first));
  const pathOk = (ks: string[]) => ks.every((k) => k !== '' && k !== '*');
  const emit = (first: boolean) => {
    out.push(
      pointerOk(run, first) ? run.map((k) => `/${pointerToken(k)}`).join('') : `$${run.map(jsonPathKey).join('')}`,
    );
  };
  for (const k of keys) {
    const first = fromObject && out.length === 0;
    const next = [...run, k];
    if (run.length === 0 || pointerOk(next, first) || pathOk(next)) run = next;
    else {
      emit(first);
      run = [k];
    }
  }
  if (run.length) emit(fromObject && out.length === 0);
  return out;
}

export function planField(field: string): FieldPlan {
  const column = COLUMNS[field];
  if (column && Object.hasOwn(COLUMNS, field)) return { t: 'column', ...column };
  if (field === 'envelope' || field.startsWith('envelope.') || field.startsWith('envelope[')) {
    throw new Error(`${field} is not kept by the event store`);
  }
  const segs = parsePath(field);
  if (segs.some((s) => s.t === 'find')) throw new Error('filters ([?key=value]) are not supported in searches');
  const allKeys = segs.every((s) => s.t === 'key');
  const keepNull = segs.every((s) => s.t === 'key' && !s.own);
  const keyAt = (i: number) => (segs[i]?.t === 'key' ? (segs[i] as { k: string }).k : undefined);
  const hot = HOT.find((h) => h.keys.length <= segs.length && h.keys.every((k, i) => keyAt(i) === k));
  if (hot && allKeys && hot.keys.length === segs.length) return { t: 'hot', column: hot.column };
  let i = 0;
  let root: PathPlan['root'];
  const steps: Step[] = [];
  if (hot) {
    root = { t: 'hot', column: hot.column };
    i = hot.keys.length;
  } else {
    const lead: string[] = [];
    while (keyAt(i) !== undefined) lead.push(keyAt(i++)!);
    const runs = keyRuns(lead, true);
    root = { t: 'event', run: runs[0] ?? null };
    for (const r of runs.slice(1)) steps.push({ t: 'keys', path: r });
  }
  while (i < segs.length) {
    const s = segs[i] as PathSegment;
    if (s.t === 'key') {
      const keys: string[] = [];
      while (keyAt(i) !== undefined) keys.push(keyAt(i++)!);
      for (const r of keyRuns(keys, false)) steps.push({ t: 'keys', path: r });
      continue;
    }
    if (s.t === 'idx') steps.push({ t: 'idx', i: s.i });
    else steps.push({ t: 'all' });
    i++;
  }
  return { t: 'path', root, steps, many: segs.some((s) => s.t === 'all'), keepNull };
}

function hotJson(column: string): string {
  return `TRY_CAST(${column} AS JSON)`;
}

/** JSON values of a list whose elements may be JSON null or SQL NULL, without them. */
function present(ctx: Ctx, list: string): string {
  const v = ctx.v();
  return `list_filter(${list}, lambda ${v}: ${jText(v)} <> 'null')`;
}

/** A list without its SQL NULLs (missing values). */
function notMissing(ctx: Ctx, list: string): string {
  const v = ctx.v();
  return `list_filter(${list}, lambda ${v}: ${v} IS NOT NULL)`;
}

/** Every element of an array, a lone value as itself. */
function elements(ctx: Ctx, list: string): string {
  const v = ctx.v();
  return `flatten(list_transform(${list}, lambda ${v}: CASE WHEN ${jIsArray(v)} THEN json_extract(${v}, '$[*]') ELSE [${v}] END))`;
}

function rootOf(plan: PathPlan, ctx: Ctx): string {
  return plan.root.t === 'hot'
    ? hotJson(plan.root.column)
    : plan.root.run === null
      ? 'event'
      : ctx.event(plan.root.run);
}

/**
 * The values a path has, as a JSON[] list, the way the pass reads them (normalize/paths.ts):
 * none when missing, at most one for a path without `[*]`, every element's for a `[*]` path
 * (JSON null included where the reader keeps it).
 */
export function fieldValues(plan: PathPlan, ctx: Ctx): string {
  const root = rootOf(plan, ctx);
  let list = plan.keepNull ? notMissing(ctx, `[${root}]`) : present(ctx, `[${root}]`);
  let afterAll = false;
  for (const s of plan.steps) {
    if (s.t === 'all') {
      list = elements(ctx, afterAll ? present(ctx, list) : list);
      afterAll = true;
      continue;
    }
    const v = ctx.v();
    const read =
      s.t === 'keys'
        ? `json_extract(${v}, ${sqlString(s.path)})`
        : `CASE WHEN ${jIsArray(v)} THEN json_extract(${v}, '$[${s.i}]')${s.i === 0 || s.i === -1 ? ` ELSE ${v}` : ''} END`;
    // The reader drops a null met on the way; the fast path for plain keys keeps one at the end.
    list = plan.keepNull
      ? notMissing(ctx, `list_transform(${list}, lambda ${v}: ${read})`)
      : present(ctx, `list_transform(${list}, lambda ${v}: ${read})`);
    afterAll = false;
  }
  return plan.many ? elements(ctx, list) : list;
}

/** The one value (JSON, NULL when missing) of a searched field or a path without `[*]`. */
export function fieldValue(plan: PathPlan | { t: 'hot'; column: string }, ctx: Ctx): string {
  if (plan.t === 'hot') return hotJson(plan.column);
  if (plan.many) throw new Error('a [*] path has many values');
  return plan.steps.length === 0 && plan.keepNull ? rootOf(plan, ctx) : `(${fieldValues(plan, ctx)})[1]`;
}

/** A JSON value, NULL for JSON null. */
function nonNull(ctx: Ctx, expr: string): string {
  return ctx.bind(expr, (v) => `CASE WHEN ${jText(v)} <> 'null' THEN ${v} END`);
}

// ---------------------------------------------------------------------------------------------
// Reading fields: projection, sorting, top.

function columnJson(column: string, kind: ColumnKind): string {
  if (kind === 'time') return `to_json(epoch_ms(${column}))`;
  if (kind === 'uuid') return `to_json(CAST(${column} AS VARCHAR))`;
  return `to_json(${column})`;
}

/**
 * A field's value as JSON (NULL when missing or null), for `fields` and count_by keys: a
 * column's value (time as epoch milliseconds), a searched field's column, a path's value in
 * the event; a `[*]` path's value is the list of every element's value (what the pass reads for
 * it), NULL when there is none.
 */
export function duckFieldJson(field: string): string {
  const plan = planField(field);
  if (plan.t === 'column') return columnJson(plan.column, plan.kind);
  if (plan.t === 'hot') return hotJson(plan.column);
  const ctx = new Ctx(null);
  if (plan.many) return ctx.bind(fieldValues(plan, ctx), (l) => `CASE WHEN len(${l}) > 0 THEN to_json(${l}) END`);
  return nonNull(ctx, fieldValue(plan, ctx));
}

/**
 * The sort key of a JSON value: the order PostgreSQL's jsonb gives (strings < numbers <
 * booleans < arrays < objects; numbers numerically, strings by their bytes, booleans false
 * first, arrays and objects by their JSON text), NULL for null and missing.
 */
function jsonSortKey(expr: string, ctx: Ctx): string {
  return ctx.bind(
    expr,
    (x) =>
      `CASE WHEN ${jText(x)} <> 'null' THEN struct_pack(` +
      `r := CASE left(${jText(x)}, 1) WHEN '"' THEN 1 WHEN 't' THEN 3 WHEN 'f' THEN 3 WHEN '[' THEN 4 WHEN '{' THEN 5 ELSE 2 END, ` +
      `n := CASE WHEN ${jIsNumber(x)} THEN TRY_CAST(${x} AS DOUBLE) END, ` +
      `s := CASE WHEN ${jIsString(x)} THEN ${jString(x)} WHEN NOT ${jIsNumber(x)} THEN ${jText(x)} END) END`,
  );
}

function direction(order: 'asc' | 'desc'): string {
  return order === 'desc' ? 'DESC NULLS LAST' : 'ASC NULLS FIRST';
}

/** ORDER BY terms for a JSON-valued expression (a top's value, for its ties). */
export function duckJsonSortKeys(expr: string, order: 'asc' | 'desc'): string[] {
  return [`${jsonSortKey(expr, new Ctx(null))} ${direction(order)}`];
}

/**
 * ORDER BY terms sorting by a field as the PostgreSQL store does: a column by itself, any other
 * field by its JSON value (numbers numerically, strings lexically, jsonb's order between types),
 * missing and null last descending and first ascending. A `[*]` path sorts by its first value.
 */
export function duckSortKeys(field: string, order: 'asc' | 'desc'): string[] {
  const plan = planField(field);
  if (plan.t === 'column') return [`${plan.column} ${direction(order)}`];
  const ctx = new Ctx(null);
  const value = plan.t === 'path' && plan.many ? `(${present(ctx, fieldValues(plan, ctx))})[1]` : fieldValue(plan, ctx);
  return [`${jsonSortKey(value, ctx)} ${direction(order)}`];
}

/**
 * What `top` counts for a field: `value` (JSON text) once per event for a plain field (NULL
 * when missing or null: leave those out), once per element for a `[*]` path (nulls left out)
 * through `from`, a lateral join to write after `events` ('' for a plain field):
 *   select ${value} as value, count(*) as n from events ${from}
 *   where <scope> and ${value} is not null
 *   group by 1 order by n desc, ${order} limit <size>
 * `order` breaks ties between equally frequent values (ascending jsonb order, over the select's
 * `value` column).
 */
export interface TopValues {
  from: string;
  value: string;
  order: string[];
}

export function duckTopValues(field: string): TopValues {
  const plan = planField(field);
  const order = duckJsonSortKeys('value', 'asc');
  if (plan.t === 'column') return { from: '', value: columnJson(plan.column, plan.kind), order };
  if (plan.t === 'hot') return { from: '', value: plan.column, order };
  const ctx = new Ctx(null);
  if (!plan.many) return { from: '', value: nonNull(ctx, fieldValue(plan, ctx)), order };
  return {
    from: `CROSS JOIN unnest(${present(ctx, fieldValues(plan, ctx))}) AS weir_top(weir_value)`,
    value: 'weir_top.weir_value',
    order,
  };
}

/** duckTopValues under the name the store calls it by. */
export const duckTopSource = duckTopValues;

/**
 * A field as a grouping key for count_by: the column itself where there is one (numbers and
 * text group and sort as they are, with no JSON made per row), a searched field's column (its
 * JSON text), else the value's JSON text. `decode` says how to read the key back.
 */
export function duckGroupKey(field: string): { expr: string; decode: 'json' | 'value' } {
  const plan = planField(field);
  if (plan.t === 'column') {
    if (plan.kind === 'time') return { expr: `epoch_ms(${plan.column})`, decode: 'value' };
    if (plan.kind === 'uuid') return { expr: `CAST(${plan.column} AS VARCHAR)`, decode: 'value' };
    return { expr: plan.column, decode: 'value' };
  }
  if (plan.t === 'hot') return { expr: plan.column, decode: 'json' };
  return { expr: `(${duckFieldJson(field)})::VARCHAR`, decode: 'json' };
}
