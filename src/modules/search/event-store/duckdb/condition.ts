// The one condition language (docs/conditions.md) compiled to DuckDB SQL over the embedded
// store's `events` table (schema.ts), with the meaning of the in-memory compiler
// (pipeline/conditions, compileCondition in pipeline/route/conditions.ts): the DuckDB twin of
// ../../query-sql.ts.
//
// How a field is read:
// - time, class_uid, category_uid, activity_id, severity_id and envelope.* from their columns
//   (as query-sql.ts), compared so DuckDB can push the test into the scan;
// - a searched field (pipeline/delivery/stored-columns.ts) from its h_* column, the JSON text of
//   its value, never from `event`: eq/in of a string, number or boolean, exists and (mostly)
//   prefix compare that text directly (both sides JSON.stringify output, so canonical); the
//   other operators parse the small fragment (TRY_CAST(h_x AS JSON)). A path going on below a
//   searched field (`actor.user.name[0]`) starts from the column too;
// - any other path from `event` with DuckDB's JSON functions: a run of keys is one json_extract
//   (a JSON pointer, or a quoted JSONPath where a pointer would index an array), indexes and
//   `[*]` are list steps that follow the pass's path reader (normalize/paths.ts) exactly: a key
//   reads only objects, `a[0]`/`a[-1]` of a lone value is the value, `[*]` of a lone value is
//   the value, a list at the end of a `[*]` path is read element by element, nulls are dropped
//   where the reader drops them and kept where it keeps them.
// Every leaf asks whether any of the values a field has passes the value test (a plain field has
// at most one; a `[*]` field every element); the negative operators are NOT of their positive
// twin, so over a list they hold when no element does, and on a missing field. Values are
// compared strictly by JSON type (read from the first character of their JSON text), numbers by
// value (DuckDB re-writes 1e+21 as 1e21), strings by their JSON text when DuckDB writes it as
// JavaScript does (no control characters), else by their text.
//
// Every literal is inlined with sqlString (or is a number written by JavaScript), never
// interpolated otherwise. Each call of json_extract parses the whole event, so a test binds a
// value once in a lambda (list_transform([x], lambda v: ...)[1]) instead of repeating it, and
// the leaves of a condition that read two or more paths of `event` share one json_extract of
// all of them (one parse per row); the conjuncts that read no `event` stay outside, where
// DuckDB pushes them into the scan.
//
// Functions of the connection (registerConditionFunctions, once per database; DuckDB keeps them
// for every connection of the instance): weir_ip_key (an address's family and bytes, for `cidr`
// on text holding ':', i.e. IPv6 and IPv4-mapped IPv6, read by the pass's own parser) and
// weir_number (JavaScript's Number for numeric text that is not plain decimal: 0x1F, 0o17, 0b11,
// Unicode spaces). IPv4 is tested in SQL. Their callbacks run on the JavaScript thread: run the
// queries that use them asynchronously.
//
// Known differences from the pass (docs/search.md should list them):
// - `ignore_case` lower-cases with DuckDB's lower() (Unicode, utf8proc) where the pass uses
//   JavaScript's toLowerCase: they agree for ASCII and most scripts, not for every special case
//   ("İ" is "i" in DuckDB, "i̇" in JavaScript);
// - `regex` runs on DuckDB's RE2 (C++) where the pass runs re2js, its port: the same syntax and
//   semantics; named groups written (?<name>...) are passed as (?P<name>...), which DuckDB's
//   RE2 reads; a pattern DuckDB's RE2 still refuses makes the search fail with the reason;
// - a field read from a column (class_uid..., envelope.*, and the h_* searched fields) cannot
//   tell a JSON null from a missing field (both are NULL), so `eq null` (or null in an `in`
//   list) never holds there, and `ne null` always does; on other paths null is told apart;
// - `time` is the column: the event's own time, or its receipt when the event had none or an
//   absurd one (the store's rule), where the pass reads the event's `time` (as query-sql.ts);
// - text holding an unpaired UTF-16 surrogate: DuckDB's text is UTF-8, so a condition value
//   holding one is refused (sqlString throws) unless it is compared as JSON text (eq/in on an
//   h_* column), and a searched column holding one is missing to the operators that parse it
//   (DuckDB refuses such JSON; `event` cannot hold one at all).
import { DOUBLE, DuckDBScalarFunction, VARCHAR, type DuckDBConnection } from '@duckdb/node-api';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import type { Condition, FieldCondition } from '../../../../pipeline/conditions/types.js';
import { STORED_COLUMNS } from '../../../../pipeline/delivery/stored-columns.js';
import { parsePath, type PathSegment } from '../../../../pipeline/normalize/paths.js';
import { STORE_COLUMNS as COLUMNS, type ColumnKind } from '../columns.js';

/** The searched fields' paths as key lists, each with its h_* column. */
const HOT = STORED_COLUMNS.map((c) => ({ keys: c.path.split('.'), column: c.column }));

// A JSON value's text as json_extract writes it (minified; JSON.stringify's in the h_* columns)
// starts with its type: tests read that first character rather than call json_type, which parses
// the whole value again (a long message costs).
const jText = (e: string) => `CAST(${e} AS VARCHAR)`;
const jIsString = (e: string) => `starts_with(${jText(e)}, '"')`;
const jIsArray = (e: string) => `starts_with(${jText(e)}, '[')`;
const jIsNumber = (e: string) => `left(${jText(e)}, 1) IN ('-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9')`;
/** The text of a JSON string (escapes read). */
const jString = (e: string) => `json_extract_string(${e}, '$')`;
/** Strings whose JSON text DuckDB (yyjson) writes as JSON.stringify does: none with a control character (yyjson's \u001F is upper-case). */
const isPlainText = (t: string) => ![...t].some((c) => c.charCodeAt(0) < 0x20);
const INT32: readonly [number, number] = [-2147483648, 2147483647];
/** Epoch milliseconds a TIMESTAMP_MS holds without overflow (JavaScript's Date range). */
const TIME_MS: readonly [number, number] = [-8.64e15, 8.64e15];
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

// Numeric text as JavaScript's Number reads it (values.ts numericText): decimal between ASCII
// spaces in SQL, the rest (0x, 0o, 0b, Unicode spaces) through weir_number.
const DECIMAL = '[+-]?(?:[0-9]+\\.?[0-9]*|\\.[0-9]+)(?:[eE][+-]?[0-9]+)?';
const ASCII_SPACE = '[\\t\\n\\x0B\\f\\r ]';
const JS_SPACE =
  '[\\t\\n\\x0B\\f\\r \\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}\\x{202F}\\x{205F}\\x{3000}\\x{FEFF}]';
const FAST_NUMBER = `^${ASCII_SPACE}*(${DECIMAL})${ASCII_SPACE}*$`;
const SLOW_NUMBER = `^${JS_SPACE}*(?:${DECIMAL}|0[xX][0-9a-fA-F]+|0[oO][0-7]+|0[bB][01]+)${JS_SPACE}*$`;
// node:net's isIPv4 (what the pass accepts as an IPv4 address).
const V4_SEG = '(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9][0-9]|[0-9])';
const V4_TEXT = `^${V4_SEG}(?:\\.${V4_SEG}){3}$`;

const NEGATIVE: Record<string, string> = { ne: 'eq', not_in: 'in', not_exists: 'exists' };
const CMP: Record<string, string> = { gt: '>', gte: '>=', lt: '<', lte: '<=' };

/**
 * A SQL string literal: single quotes doubled; NUL, which DuckDB's parser cannot take inside a
 * literal, joined in as chr(0). Throws on text DuckDB cannot hold (an unpaired surrogate).
 */
export function sqlString(s: string): string {
  if (!s.isWellFormed())
    throw new RangeError('text with an unpaired UTF-16 surrogate cannot be compared in the event store');
  const parts = s.split('\u0000').map((p) => `'${p.replaceAll("'", "''")}'`);
  return parts.length === 1 ? parts[0]! : `(${parts.join(' || chr(0) || ')})`;
}

function sqlDouble(n: number): string {
  if (!Number.isFinite(n)) throw new RangeError(`not a finite number: ${n}`);
  return `CAST(${String(n)} AS DOUBLE)`;
}

const isString = (v: unknown): v is string => typeof v === 'string';
const isNumber = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

// ---------------------------------------------------------------------------------------------
// Compiling context: lambda names, and the event paths a condition reads.

class Ctx {
  private n = 0;
  readonly paths: string[] = [];
  /** `shared`: the lambda variable holding every event path's value (one json_extract), or null: each read inline. */
  constructor(readonly shared: string | null) {}

  v(): string {
    return `_w${++this.n}`;
  }

  /** The value of `event` at a path (a JSON pointer or JSONPath string). */
  event(path: string): string {
    if (this.shared === null) return `json_extract(event, ${sqlString(path)})`;
    let i = this.paths.indexOf(path);
    if (i < 0) i = this.paths.push(path) - 1;
    return `${this.shared}[${i + 1}]`;
  }

  /** `body` over `expr` evaluated once (a lambda over a one-element list). */
  bind(expr: string, body: (v: string) => string): string {
    if (/^_w\d+$/.test(expr)) return body(expr);
    const v = this.v();
    return `list_transform([${expr}], lambda ${v}: ${body(v)})[1]`;
  }

  /** Whether any element of the JSON list `list` passes `test`. */
  any(list: string, test: (e: string) => string): string {
    const v = this.v();
    return `(len(list_filter(${list}, lambda ${v}: ${test(v)})) > 0)`;
  }
}

// ---------------------------------------------------------------------------------------------
// Field paths.

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

function planField(field: string): FieldPlan {
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
function fieldValues(plan: PathPlan, ctx: Ctx): string {
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
function fieldValue(plan: PathPlan | { t: 'hot'; column: string }, ctx: Ctx): string {
  if (plan.t === 'hot') return hotJson(plan.column);
  if (plan.many) throw new Error('a [*] path has many values');
  return plan.steps.length === 0 && plan.keepNull ? rootOf(plan, ctx) : `(${fieldValues(plan, ctx)})[1]`;
}

/** A JSON value, NULL for JSON null. */
function nonNull(ctx: Ctx, expr: string): string {
  return ctx.bind(expr, (v) => `CASE WHEN ${jText(v)} <> 'null' THEN ${v} END`);
}

// ---------------------------------------------------------------------------------------------
// Value tests.

/** cidr's ranges: IPv4 as integer bounds (tested in SQL), and every range as weir_ip_key bounds. */
interface Ranges {
  v4: [number, number][];
  keys: [string, string][];
}

type IpAddr = ipaddr.IPv4 | ipaddr.IPv6;

function hexKey(addr: IpAddr, bytes: number[]): string {
  return (addr.kind() === 'ipv4' ? '4' : '6') + bytes.map((b) => b.toString(16).padStart(2, '0')).join('');
}

/** The pass's range reading (values.ts parseRange): a CIDR, or a bare address as a range of one. */
function parseRanges(value: unknown): Ranges {
  const list = (typeof value === 'string' ? [value] : value) as unknown[];
  if (!Array.isArray(list) || list.length === 0) throw new Error('cidr needs a CIDR or a non-empty list of them');
  const out: Ranges = { v4: [], keys: [] };
  for (const text of list) {
    let range: [IpAddr, number];
    try {
      if (typeof text !== 'string') throw new Error();
      if (text.includes('/')) range = ipaddr.parseCIDR(text);
      else {
        if (isIP(text) === 0) throw new Error();
        const addr = ipaddr.parse(text);
        range = [addr, addr.kind() === 'ipv4' ? 32 : 128];
      }
    } catch {
      throw new Error(`not an IPv4 or IPv6 CIDR (or address): ${String(text)}`);
    }
    const [addr, bits] = range;
    const bytes = addr.toByteArray();
    const lo = bytes.map((b, j) =>
      j * 8 >= bits ? 0 : j * 8 + 8 <= bits ? b : b & (0xff << (8 - (bits - j * 8))) & 0xff,
    );
    const hi = bytes.map((b, j) =>
      j * 8 >= bits ? 0xff : j * 8 + 8 <= bits ? b : (b | (0xff >> (bits - j * 8))) & 0xff,
    );
    out.keys.push([hexKey(addr, lo), hexKey(addr, hi)]);
    if (addr.kind() === 'ipv4') {
      const int = (bs: number[]) => bs.reduce((n, b) => n * 256 + b, 0);
      out.v4.push([int(lo), int(hi)]);
    }
  }
  return out;
}

/** The address key of text the pass reads as an IP address (node:net's isIP, ipaddr.process), or null. */
export function ipKey(s: string): string | null {
  if (isIP(s) === 0) return null;
  try {
    const addr = ipaddr.process(s); // IPv4-mapped IPv6 (::ffff:10.0.0.1) is IPv4
    return hexKey(addr, addr.toByteArray());
  } catch {
    return null;
  }
}

/** Text as JavaScript's Number reads it for gt/gte/lt/lte (values.ts numericText), or null. */
export function numberOfText(s: string): number | null {
  if (s.trim() === '') return null;
  const n = Number(s);
  return Number.isFinite(n) ? n : null;
}

function cidrSql(s: string, ranges: Ranges, ctx: Ctx): string {
  const v4 = ranges.v4.length
    ? ctx.bind(
        `(CAST(split_part(${s}, '.', 1) AS BIGINT) * 16777216 + CAST(split_part(${s}, '.', 2) AS BIGINT) * 65536 + CAST(split_part(${s}, '.', 3) AS BIGINT) * 256 + CAST(split_part(${s}, '.', 4) AS BIGINT))`,
        (n) => `(${ranges.v4.map(([lo, hi]) => `${n} BETWEEN ${lo} AND ${hi}`).join(' OR ')})`,
      )
    : 'FALSE';
  const other = ctx.bind(
    `weir_ip_key(${s})`,
    (k) => `(${ranges.keys.map(([lo, hi]) => `${k} BETWEEN '${lo}' AND '${hi}'`).join(' OR ')})`,
  );
  return `(CASE WHEN regexp_full_match(${s}, ${sqlString(V4_TEXT)}) THEN ${v4} WHEN contains(${s}, ':') THEN ${other} ELSE FALSE END)`;
}

/** The number numeric text holds (finite), or NULL. `s` is evaluated more than once: bind it. */
function numericText(s: string, ctx: Ctx): string {
  const n = `CASE WHEN regexp_matches(${s}, ${sqlString(FAST_NUMBER)}) THEN TRY_CAST(regexp_extract(${s}, ${sqlString(FAST_NUMBER)}, 1) AS DOUBLE) WHEN regexp_matches(${s}, ${sqlString(SLOW_NUMBER)}) THEN weir_number(${s}) END`;
  return ctx.bind(n, (x) => `CASE WHEN isfinite(${x}) THEN ${x} END`);
}

/** RE2/J's (?<name>...) as RE2's (?P<name>...): DuckDB's RE2 reads only the latter. */
export function duckRegex(pattern: string): string {
  let out = '';
  let inClass = false;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '\\') {
      out += c + (pattern[i + 1] ?? '');
      i++;
      continue;
    }
    if (inClass) {
      if (c === ']') inClass = false;
      out += c;
      continue;
    }
    if (c === '[') {
      inClass = true;
      out += c;
      // A ] first in the class (after an optional ^) is a member, not its end.
      if (pattern[i + 1] === '^') out += pattern[++i];
      if (pattern[i + 1] === ']') out += pattern[++i];
      continue;
    }
    if (pattern.startsWith('(?<', i) && /[A-Za-z_]/.test(pattern[i + 3] ?? '')) {
      out += '(?P<';
      i += 2;
      continue;
    }
    out += c;
  }
  return out;
}

/**
 * The positive test of a text value `s` (a column, or a bound variable: it may be repeated).
 * Non-string condition values never match text.
 */
function textTest(s: string, op: string, value: unknown, ic: boolean, ctx: Ctx): string {
  const low = (x: string) => (ic ? `lower(${x})` : x);
  switch (op) {
    case 'eq':
      return isString(value) ? `${low(s)} = ${low(sqlString(value))}` : 'FALSE';
    case 'in': {
      const texts = (value as unknown[]).filter(isString);
      return texts.length ? `${low(s)} IN (${texts.map((t) => low(sqlString(t))).join(', ')})` : 'FALSE';
    }
    case 'prefix':
      return `starts_with(${low(s)}, ${low(sqlString(value as string))})`;
    case 'suffix':
      return `ends_with(${low(s)}, ${low(sqlString(value as string))})`;
    case 'contains':
      return isString(value) ? `contains(${low(s)}, ${low(sqlString(value))})` : 'FALSE';
    case 'regex':
      return `regexp_matches(${s}, ${sqlString(duckRegex(value as string))}${ic ? `, 'i'` : ''})`;
    case 'exists':
      return `${s} <> ''`;
    case 'cidr':
      return cidrSql(s, parseRanges(value), ctx);
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte':
      return `${numericText(s, ctx)} ${CMP[op]} ${sqlDouble(value as number)}`;
  }
  throw new Error(`no SQL for operator ${op}`);
}

/** Strict equality of a JSON value `e` with any of `values` (scalars): by type, then value. */
function jsonEq(e: string, values: readonly unknown[], ic: boolean): string {
  const out: string[] = [];
  const texts = [...new Set(values.filter(isString))];
  const nums = [...new Set(values.filter(isNumber))];
  const bools = [...new Set(values.filter((v): v is boolean => typeof v === 'boolean'))];
  // Plain strings, numbers' absence aside, compare as JSON text (no unescaping); the others by their text.
  const asJson = ic ? [] : texts.filter(isPlainText);
  const asText = texts.filter((t) => !asJson.includes(t));
  const scalars = [
    ...asJson.map((t) => JSON.stringify(t)),
    ...bools.map(String),
    ...(values.includes(null) ? ['null'] : []),
  ];
  if (scalars.length) out.push(`${jText(e)} IN (${scalars.map(sqlString).join(', ')})`);
  if (asText.length) {
    const low = (x: string) => (ic ? `lower(${x})` : x);
    out.push(`(${jIsString(e)} AND ${low(jString(e))} IN (${asText.map((t) => low(sqlString(t))).join(', ')}))`);
  }
  if (nums.length) out.push(`(${jIsNumber(e)} AND TRY_CAST(${e} AS DOUBLE) IN (${nums.map(sqlDouble).join(', ')}))`);
  return out.length ? `(${out.join(' OR ')})` : 'FALSE';
}

/** The positive test of one JSON value `e` (a lambda variable), the pass's ValueTest in SQL. */
function jsonTest(e: string, op: string, value: unknown, ic: boolean, ctx: Ctx): string {
  const str = jString(e);
  const whenText = (test: (s: string) => string, repeats = false) =>
    `(${jIsString(e)} AND ${repeats ? ctx.bind(str, test) : test(str)})`;
  switch (op) {
    case 'eq':
      return jsonEq(e, [value], ic);
    case 'in':
      return jsonEq(e, value as unknown[], ic);
    case 'prefix':
    case 'suffix':
    case 'regex':
      return whenText((s) => textTest(s, op, value, ic, ctx));
    case 'contains': {
      // A string containing the text, or a list holding the value (ignoring case: a string equal to it).
      const member = `(${jIsArray(e)} AND ${ctx.any(`json_extract(${e}, '$[*]')`, (x) => jsonEq(x, [value], ic))})`;
      return isString(value) ? `(${whenText((s) => textTest(s, op, value, ic, ctx))} OR ${member})` : member;
    }
    case 'exists':
      return `${jText(e)} NOT IN ('null', '""', '[]')`;
    case 'cidr':
      return whenText((s) => textTest(s, op, value, ic, ctx), true);
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte': {
      const num = `CASE WHEN ${jIsNumber(e)} THEN TRY_CAST(${e} AS DOUBLE) WHEN ${jIsString(e)} THEN ${ctx.bind(str, (s) => numericText(s, ctx))} END`;
      return `(${num} ${CMP[op]} ${sqlDouble(value as number)})`;
    }
  }
  throw new Error(`no SQL for operator ${op}`);
}

/** `column op n` for a whole-number column within [min, max], with n's bound rounded the way the comparison needs (so DuckDB can push it down). */
function wholeCompare(
  column: string,
  op: string,
  n: number,
  [min, max]: readonly [number, number],
  lit: (b: number) => string,
): string {
  const up = op === 'gte' || op === 'lt';
  const b = up ? Math.ceil(n) : Math.floor(n);
  // `column > b` (gt) / `>= b` (gte) / `< b` (lt) / `<= b` (lte) over values in [min, max].
  const never = op === 'gt' ? b >= max : op === 'gte' ? b > max : op === 'lt' ? b <= min : b < min;
  const always = op === 'gt' ? b < min : op === 'gte' ? b <= min : op === 'lt' ? b > max : b >= max;
  if (never) return 'FALSE';
  if (always) return `${column} IS NOT NULL`;
  return `${column} ${CMP[op]} ${lit(b)}`;
}

/** The positive test of a field kept in a column of `events`. */
function columnTest(column: string, kind: ColumnKind, op: string, value: unknown, ic: boolean, ctx: Ctx): string {
  if (kind === 'int' || kind === 'time') {
    // A number: text comparisons, cidr and contains (a number is neither text nor a list) never hold.
    const range = kind === 'int' ? INT32 : TIME_MS;
    const lit =
      kind === 'int' ? (b: number) => String(b) : (b: number) => `CAST(make_timestamp_ms(${b}) AS TIMESTAMP_MS)`;
    const whole = (v: unknown): v is number =>
      Number.isInteger(v) && (v as number) >= range[0] && (v as number) <= range[1];
    if (ic) return 'FALSE';
    switch (op) {
      case 'eq':
        return whole(value) ? `${column} = ${lit(value)}` : 'FALSE';
      case 'in': {
        const ns = [...new Set((value as unknown[]).filter(whole))];
        return ns.length ? `${column} IN (${ns.map(lit).join(', ')})` : 'FALSE';
      }
      case 'exists':
        return `${column} IS NOT NULL`;
      case 'gt':
      case 'gte':
      case 'lt':
      case 'lte':
        return wholeCompare(column, op, value as number, range, lit);
      default:
        return 'FALSE';
    }
  }
  if (kind === 'uuid') {
    // The event id is text in the pass (lower-case, canonical); a UUID in the column.
    const ids = (vs: unknown[]) => [...new Set(vs.filter((v): v is string => isString(v) && UUID.test(v)))];
    if (!ic && op === 'eq') return ids([value]).length ? `${column} = ${sqlString(value as string)}::UUID` : 'FALSE';
    if (!ic && op === 'in') {
      const list = ids(value as unknown[]);
      return list.length ? `${column} IN (${list.map((v) => `${sqlString(v)}::UUID`).join(', ')})` : 'FALSE';
    }
    return textTest(`CAST(${column} AS VARCHAR)`, op, value, ic, ctx);
  }
  return textTest(column, op, value, ic, ctx);
}

/** Prefix of a string as JSON text: exact as long as neither side can split a surrogate pair. */
function hasSurrogate(s: string): boolean {
  return /[\uD800-\uDFFF]/.test(s);
}

/** The positive test of a searched field (h_* column: the JSON text of its value, NULL when missing or null). */
function hotTest(column: string, op: string, value: unknown, ic: boolean, ctx: Ctx): string {
  if (!ic) {
    const scalar = (v: unknown) => isString(v) || isNumber(v) || typeof v === 'boolean';
    switch (op) {
      case 'eq':
        return scalar(value) ? `${column} = ${sqlString(JSON.stringify(value))}` : 'FALSE';
      case 'in': {
        const texts = [...new Set((value as unknown[]).filter(scalar).map((v) => JSON.stringify(v)))];
        return texts.length ? `${column} IN (${texts.map(sqlString).join(', ')})` : 'FALSE';
      }
      case 'exists':
        return `${column} NOT IN ('""', '[]')`;
      case 'prefix':
        if (isString(value) && !hasSurrogate(value))
          return `starts_with(${column}, ${sqlString(JSON.stringify(value).slice(0, -1))})`;
        break;
    }
  }
  if (op === 'eq' && value === null) return 'FALSE';
  const vs = op === 'in' ? (value as unknown[]).filter((v) => v !== null) : value;
  if (op === 'in' && (vs as unknown[]).length === 0) return 'FALSE';
  return ctx.bind(fieldValue({ t: 'hot', column }, ctx), (e) => jsonTest(e, op, vs, ic, ctx));
}

function leafSql(leaf: FieldCondition, ctx: Ctx): string {
  const op = NEGATIVE[leaf.op] ?? leaf.op;
  const ic = leaf.ignore_case === true;
  const plan = planField(leaf.field);
  let test: string;
  if (plan.t === 'column') test = columnTest(plan.column, plan.kind, op, leaf.value, ic, ctx);
  else if (plan.t === 'hot') test = hotTest(plan.column, op, leaf.value, ic, ctx);
  // Any of a [*] path's values; the one value of another (no value: every test is NULL, never true).
  else if (plan.many) test = ctx.any(fieldValues(plan, ctx), (e) => jsonTest(e, op, leaf.value, ic, ctx));
  else test = ctx.bind(fieldValue(plan, ctx), (e) => jsonTest(e, op, leaf.value, ic, ctx));
  const positive = test === 'FALSE' ? 'FALSE' : `coalesce(${test}, FALSE)`;
  return op === leaf.op ? positive : `(NOT ${positive})`;
}

function nodeSql(cond: Condition, ctx: Ctx): string {
  if ('all' in cond) return cond.all.length ? `(${cond.all.map((c) => nodeSql(c, ctx)).join(' AND ')})` : 'TRUE';
  if ('any' in cond) return cond.any.length ? `(${cond.any.map((c) => nodeSql(c, ctx)).join(' OR ')})` : 'FALSE';
  if ('not' in cond) return `(NOT ${nodeSql(cond.not, ctx)})`;
  return leafSql(cond, ctx);
}

function conjuncts(cond: Condition): Condition[] {
  return 'all' in cond ? cond.all.flatMap(conjuncts) : [cond];
}

/**
 * A condition (checked where it was saved or planned) as a SQL boolean over `events`; null
 * matches every event. Throws on what the store cannot answer (envelope.valid, [?k=v] paths).
 */
export function duckCondition(cond: Condition | null): string {
  if (cond === null) return 'TRUE';
  const parts = conjuncts(cond);
  if (parts.length === 0) return 'TRUE';
  // The conjuncts that read no event stay as they are (DuckDB pushes them into the scan); the
  // others share one json_extract of every event path they read, when they read two or more.
  const plain: string[] = [];
  const reading: Condition[] = [];
  for (const c of parts) {
    const probe = new Ctx('_we');
    const s = nodeSql(c, probe);
    if (probe.paths.length === 0) plain.push(s);
    else reading.push(c);
  }
  if (reading.length) {
    const shared = new Ctx('_we');
    const body = reading.map((c) => nodeSql(c, shared)).join(' AND ');
    if (shared.paths.length >= 2) {
      plain.push(
        `coalesce(list_transform([json_extract(event, [${shared.paths.map(sqlString).join(', ')}])], lambda _we: ${body})[1], FALSE)`,
      );
    } else {
      const inline = new Ctx(null);
      plain.push(...reading.map((c) => nodeSql(c, inline)));
    }
  }
  return plain.length === 1 ? plain[0]! : `(${plain.join(' AND ')})`;
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

// ---------------------------------------------------------------------------------------------
// The connection's functions.

/**
 * Registers weir_ip_key(VARCHAR) -> VARCHAR and weir_number(VARCHAR) -> DOUBLE, which the SQL
 * of duckCondition calls. DuckDB keeps them for the whole instance; calling again (another
 * connection) replaces them with the same.
 */
export function registerConditionFunctions(connection: DuckDBConnection): void {
  const text = (name: string, returnType: typeof VARCHAR | typeof DOUBLE, fn: (s: string) => string | number | null) =>
    DuckDBScalarFunction.create({
      name,
      returnType,
      parameterTypes: [VARCHAR],
      mainFunction: (_info, input, output) => {
        const col = input.getColumnVector(0);
        for (let i = 0; i < input.rowCount; i++) {
          const s = col.getItem(i);
          output.setItem(i, typeof s === 'string' ? fn(s) : null);
        }
        output.flush();
      },
    });
  connection.registerScalarFunction(text('weir_ip_key', VARCHAR, ipKey));
  connection.registerScalarFunction(text('weir_number', DOUBLE, numberOfText));
}

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
