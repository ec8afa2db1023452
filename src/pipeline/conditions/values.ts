// The test of one positive operator on one field value, built once per leaf. checkValue is
// the one form's validation; the old mapping form validates with its own, older messages
// (old-form.ts) and then builds its tests here, so both forms evaluate alike.
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import { RE2JS } from 're2js';
import { isAbsent } from '../normalize/paths.js';
import { CASE_OPS, CONDITION_LIMITS, type ConditionOp } from './types.js';

export type ValueTest = (v: unknown) => boolean;

/** The operators compiled as such; ne, not_in and not_exists are the negation of their twin. */
export type PositiveOp = Exclude<ConditionOp, 'ne' | 'not_in' | 'not_exists'>;
export const POSITIVE: Partial<Record<ConditionOp, PositiveOp>> = { ne: 'eq', not_in: 'in', not_exists: 'exists' };

/** Per regex, cidr or ignore_case leaf: answers remembered (tested values repeat from event to event). */
const MEMO_SIZE = 512;
const MEMO_MAX_INPUT = 128;

export function isScalar(v: unknown): v is string | number | boolean | null {
  return v === null || typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v)) || typeof v === 'boolean';
}

function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  return JSON.stringify(a) === JSON.stringify(b);
}

/** Numeric text reads as its number (raw vendor events often carry numbers as text); anything else is NaN, which compares false. */
function numericText(v: unknown): number {
  if (typeof v !== 'string' || v.trim() === '') return NaN;
  const n = Number(v);
  return Number.isFinite(n) ? n : NaN;
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

/** The one form's rules for a value; the problem's message, or undefined when the value is fine. */
export function checkValue(op: PositiveOp, value: unknown, has: boolean): string | undefined {
  const tooLong = (s: unknown) => typeof s === 'string' && s.length > CONDITION_LIMITS.stringLength;
  const long = `a value is limited to ${CONDITION_LIMITS.stringLength} characters`;
  switch (op) {
    case 'eq':
      if (!isScalar(value)) return `${op} needs a string, number, boolean or null value`;
      return tooLong(value) ? long : undefined;
    case 'in': {
      if (!Array.isArray(value) || value.length === 0) return `${op} needs a non-empty list of values`;
      if (value.length > CONDITION_LIMITS.listValues)
        return `a list is limited to ${CONDITION_LIMITS.listValues} values`;
      const i = value.findIndex((x) => !isScalar(x));
      return i >= 0 ? `item ${i} is not a string, number, boolean or null` : undefined;
    }
    case 'prefix':
    case 'suffix':
      if (typeof value !== 'string' || value === '') return `${op} needs a non-empty string value`;
      return tooLong(value) ? long : undefined;
    case 'contains':
      if (!isScalar(value) || value === '')
        return 'contains needs a non-empty string (substring) or a scalar (list element)';
      return tooLong(value) ? long : undefined;
    case 'regex':
      if (typeof value !== 'string' || value === '') return 'regex needs a non-empty string value (RE2 syntax)';
      return value.length > CONDITION_LIMITS.regexLength
        ? `a regular expression is limited to ${CONDITION_LIMITS.regexLength} characters`
        : undefined;
    case 'exists':
      // null is tolerated: forms often send value: null for operators without one.
      return has && value !== undefined && value !== null ? `${op} takes no value` : undefined;
    case 'cidr': {
      const list = typeof value === 'string' ? [value] : value;
      if (!Array.isArray(list) || list.length === 0)
        return 'cidr needs a CIDR ("10.0.0.0/8") or a non-empty list of them';
      return list.length > CONDITION_LIMITS.listValues
        ? `a list is limited to ${CONDITION_LIMITS.listValues} values`
        : undefined;
    }
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte':
      return typeof value !== 'number' || !Number.isFinite(value) ? `${op} needs a number value` : undefined;
  }
}

/** The problem of an `ignore_case` flag: a boolean, on a text comparison, whose values are text. */
export function checkIgnoreCase(op: ConditionOp, flag: unknown, value: unknown): string | undefined {
  if (typeof flag !== 'boolean') return 'ignore_case is true or false';
  if (!flag) return undefined;
  if (!CASE_OPS.includes(op)) return `ignore_case applies to ${CASE_OPS.join(', ')}, not ${op}`;
  const texts = Array.isArray(value) ? value : [value];
  return texts.every((v) => typeof v === 'string')
    ? undefined
    : 'ignore_case compares text: every value must be a string';
}

/**
 * Case-insensitive twins of the text tests: both sides lower-cased (String.prototype.toLowerCase,
 * locale-independent). Answers are remembered per text, as for regex: field values repeat from
 * event to event and lower-casing allocates.
 */
function caseInsensitiveTest(op: PositiveOp, value: unknown): ValueTest | string {
  switch (op) {
    case 'eq': {
      const s = (value as string).toLowerCase();
      return memoize((v) => v.toLowerCase() === s);
    }
    case 'in': {
      const set = new Set((value as string[]).map((x) => x.toLowerCase()));
      return memoize((v) => set.has(v.toLowerCase()));
    }
    case 'prefix': {
      const s = (value as string).toLowerCase();
      return memoize((v) => v.toLowerCase().startsWith(s));
    }
    case 'suffix': {
      const s = (value as string).toLowerCase();
      return memoize((v) => v.toLowerCase().endsWith(s));
    }
    case 'contains': {
      const s = (value as string).toLowerCase();
      const inText = memoize((v) => v.toLowerCase().includes(s));
      // On a list: an element equal ignoring case.
      return (v) =>
        typeof v === 'string'
          ? inText(v)
          : Array.isArray(v) && v.some((x) => typeof x === 'string' && x.toLowerCase() === s);
    }
    case 'regex': {
      let re: RE2JS;
      try {
        re = RE2JS.compile(value as string, RE2JS.CASE_INSENSITIVE);
      } catch (e) {
        return `invalid regular expression (RE2 syntax): ${(e as Error).message}`;
      }
      return memoize((s) => re.test(s));
    }
    default:
      return buildTest(op, value);
  }
}

/** The test of a checked value; a string is a problem only found by compiling it (a pattern, a range). */
export function buildTest(op: PositiveOp, value: unknown, ignoreCase = false): ValueTest | string {
  if (ignoreCase) return caseInsensitiveTest(op, value);
  switch (op) {
    case 'eq':
      return isScalar(value) ? (v) => v === value : (v) => sameJson(v, value); // JSON values: the old mapping form only
    case 'in': {
      const set = new Set<unknown>(value as unknown[]);
      return (v) => set.has(v);
    }
    case 'prefix': {
      const s = value as string;
      return (v) => typeof v === 'string' && v.startsWith(s);
    }
    case 'suffix': {
      const s = value as string;
      return (v) => typeof v === 'string' && v.endsWith(s);
    }
    case 'contains':
      if (typeof value === 'string')
        return (v) => (typeof v === 'string' ? v.includes(value) : Array.isArray(v) && v.includes(value));
      return (v) => Array.isArray(v) && v.includes(value);
    case 'regex': {
      let re: RE2JS;
      try {
        re = RE2JS.compile(value as string);
      } catch (e) {
        return `invalid regular expression (RE2 syntax): ${(e as Error).message}`;
      }
      // Unanchored: the pattern may match anywhere (use ^ and $ to anchor).
      return memoize((s) => re.test(s));
    }
    case 'exists':
      return (v) => !isAbsent(v);
    case 'cidr': {
      const list = (typeof value === 'string' ? [value] : value) as unknown[];
      const ranges: Range[] = [];
      for (let i = 0; i < list.length; i++) {
        const r = typeof list[i] === 'string' ? parseRange(list[i] as string) : undefined;
        if (!r) return `${typeof value === 'string' ? '' : `item ${i}: `}not an IPv4 or IPv6 CIDR (or address)`;
        ranges.push(r);
      }
      return cidrTest(ranges);
    }
    case 'gt': {
      const n = value as number;
      return (v) => (typeof v === 'number' ? v > n : numericText(v) > n);
    }
    case 'gte': {
      const n = value as number;
      return (v) => (typeof v === 'number' ? v >= n : numericText(v) >= n);
    }
    case 'lt': {
      const n = value as number;
      return (v) => (typeof v === 'number' ? v < n : numericText(v) < n);
    }
    case 'lte': {
      const n = value as number;
      return (v) => (typeof v === 'number' ? v <= n : numericText(v) <= n);
    }
  }
}
