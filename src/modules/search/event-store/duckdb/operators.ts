// The value test of each operator in DuckDB SQL, with the meaning of the pass's (its ValueTest):
// on text, on a JSON value, on a column of `events`, on a searched field's column; and the
// connection's functions those tests call.
import { DOUBLE, DuckDBScalarFunction, VARCHAR, type DuckDBConnection } from '@duckdb/node-api';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import type { ColumnKind } from '../columns.js';
import { fieldValue } from './fields.js';
import {
  type Ctx,
  isNumber,
  isPlainText,
  isString,
  jIsArray,
  jIsNumber,
  jIsString,
  jString,
  jText,
  sqlDouble,
  sqlString,
} from './sql.js';

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

export const CMP: Record<string, string> = { gt: '>', gte: '>=', lt: '<', lte: '<=' };

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
export function jsonTest(e: string, op: string, value: unknown, ic: boolean, ctx: Ctx): string {
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
export function columnTest(
  column: string,
  kind: ColumnKind,
  op: string,
  value: unknown,
  ic: boolean,
  ctx: Ctx,
): string {
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
export function hotTest(column: string, op: string, value: unknown, ic: boolean, ctx: Ctx): string {
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
