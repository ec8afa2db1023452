// A condition tree said in the text form (text.ts, docs/conditions.md): what the console shows
// and edits for a route's or a rule's stored condition. Parsing the printed text gives the same
// tree back (print.test.ts checks it over every operator), so a condition can be edited as text
// whatever form it was written in. A tree the text cannot say exactly (an empty all/any, a
// field that is not a path of the text form, a value of the wrong type) prints as null: show
// the JSON instead.
import { FIELD_PATTERN, KEYWORDS } from './text.js';
import { CASE_OPS, type Condition, type FieldCondition } from './types.js';

// The path syntax the text form reads as a field, whole.
const FIELD = new RegExp(`^${FIELD_PATTERN}$`);
const COMPARE = { eq: '=', ne: '!=', gt: '>', gte: '>=', lt: '<', lte: '<=' } as const;
const WORDS = { prefix: 'startswith', suffix: 'endswith', regex: 'matches' } as const;

class Unprintable extends Error {}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function quote(s: string): string {
  return `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n').replace(/\t/g, '\\t')}"`;
}

function scalar(v: unknown): string {
  if (typeof v === 'string') return quote(v);
  if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  if (typeof v === 'boolean' || v === null) return String(v);
  throw new Unprintable();
}

function text(v: unknown): string {
  if (typeof v !== 'string') throw new Unprintable();
  return quote(v);
}

function list(v: unknown): string {
  if (!Array.isArray(v) || v.length === 0) throw new Unprintable();
  return `(${v.map(scalar).join(', ')})`;
}

function leaf(c: FieldCondition): string {
  const keys = Object.keys(c).filter((k) => !['field', 'op', 'value', 'ignore_case'].includes(k));
  if (keys.length > 0 || typeof c.field !== 'string') throw new Unprintable();
  if (!FIELD.test(c.field) || KEYWORDS.has(c.field.toLowerCase())) throw new Unprintable();
  const f = c.field;
  const v = c.value;
  let out: string;
  switch (c.op) {
    case 'eq':
    case 'ne':
      out = `${f} ${COMPARE[c.op]} ${scalar(v)}`;
      break;
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte':
      if (typeof v !== 'number') throw new Unprintable();
      out = `${f} ${COMPARE[c.op]} ${scalar(v)}`;
      break;
    case 'in':
      out = `${f} in ${list(v)}`;
      break;
    case 'not_in':
      out = `${f} not in ${list(v)}`;
      break;
    case 'contains':
      out = `${f} contains ${scalar(v)}`;
      break;
    case 'prefix':
    case 'suffix':
    case 'regex':
      out = `${f} ${WORDS[c.op]} ${text(v)}`;
      break;
    case 'exists':
    case 'not_exists':
      if (v !== undefined && v !== null) throw new Unprintable();
      out = `${f} ${c.op === 'exists' ? 'exists' : 'not exists'}`;
      break;
    case 'cidr':
      out = `${f} cidr ${Array.isArray(v) ? list(v) : text(v)}`;
      break;
    default:
      throw new Unprintable();
  }
  if (c.ignore_case === true) {
    if (!CASE_OPS.includes(c.op)) throw new Unprintable();
    out += ' nocase';
  } else if (c.ignore_case !== undefined && c.ignore_case !== false) throw new Unprintable();
  return out;
}

/** The node as an operand of and/or/not: a leaf or a not as it is, a group in parentheses. */
function operand(c: unknown): string {
  const s = node(c);
  return isRecord(c) && ('all' in c || 'any' in c) ? `(${s})` : s;
}

function node(c: unknown): string {
  if (!isRecord(c)) throw new Unprintable();
  const keys = Object.keys(c);
  if (keys.length === 1 && (keys[0] === 'all' || keys[0] === 'any')) {
    const parts = c[keys[0]];
    // One part would print as the part alone, which parses to the part, not a group of one.
    if (!Array.isArray(parts) || parts.length < 2) throw new Unprintable();
    return parts.map(operand).join(keys[0] === 'all' ? ' and ' : ' or ');
  }
  if (keys.length === 1 && keys[0] === 'not') return `not ${operand(c.not)}`;
  return leaf(c as unknown as FieldCondition);
}

/** The condition in the text form, or null when the text cannot say exactly this tree (or it is null). */
export function printCondition(condition: Condition | unknown): string | null {
  if (condition === null || condition === undefined) return null;
  try {
    return node(condition);
  } catch (e) {
    if (e instanceof Unprintable) return null;
    throw e;
  }
}
