// Sigma's value modifiers (contains, re, cidr, base64, ...) read and checked, and a text value
// with its wildcards written as one leaf of the condition language.
import { RE2JS } from 're2js';
import type { FieldCondition } from '../../conditions/types.js';
import { SigmaError } from './errors.js';

const SUPPORTED = [
  'contains',
  'startswith',
  'endswith',
  'all',
  're',
  'i',
  'm',
  's',
  'cidr',
  'exists',
  'cased',
  'gt',
  'gte',
  'lt',
  'lte',
  'windash',
  'base64',
  'base64offset',
  'utf16le',
  'utf16be',
  'utf16',
  'wide',
];
const REFUSED: Record<string, string> = {
  fieldref: 'compares two fields of the event, which the condition language cannot do',
  expand: 'needs placeholder values Weir does not have',
  neq: 'is not part of the Sigma specification Weir supports (write "not" in the condition)',
};

/** One piece of a wildcard pattern: literal text or a wildcard. */
type Piece = { lit: string } | { any: true } | { one: true };

/** Sigma's escapes: `\*`, `\?` and `\\` are the literal character; a backslash before anything else is itself. */
export function pieces(value: string): Piece[] {
  const out: Piece[] = [];
  let lit = '';
  for (let i = 0; i < value.length; i++) {
    const c = value[i]!;
    if (c === '\\' && (value[i + 1] === '*' || value[i + 1] === '?' || value[i + 1] === '\\')) {
      lit += value[++i];
    } else if (c === '*' || c === '?') {
      if (lit) out.push({ lit });
      lit = '';
      out.push(c === '*' ? { any: true } : { one: true });
    } else lit += c;
  }
  if (lit) out.push({ lit });
  return out;
}

export interface Mods {
  op?: 'contains' | 'startswith' | 'endswith';
  all: boolean;
  re: boolean;
  reFlags: string;
  cidr: boolean;
  exists: boolean;
  cased: boolean;
  compare?: 'gt' | 'gte' | 'lt' | 'lte';
  windash: boolean;
  base64?: 'base64' | 'base64offset';
  utf16?: 'utf16le' | 'utf16be';
}

export function readMods(names: string[], at: string): Mods {
  const m: Mods = { all: false, re: false, reFlags: '', cidr: false, exists: false, cased: false, windash: false };
  for (const raw of names) {
    const n = raw.toLowerCase();
    if (REFUSED[n]) throw new SigmaError(at, `the modifier "${raw}" ${REFUSED[n]}`);
    if (!SUPPORTED.includes(n))
      throw new SigmaError(at, `unknown modifier "${raw}" (supported: ${SUPPORTED.join(', ')})`);
    if (n === 'contains' || n === 'startswith' || n === 'endswith') {
      if (m.op) throw new SigmaError(at, `"${m.op}" and "${n}" cannot both apply`);
      m.op = n;
    } else if (n === 'gt' || n === 'gte' || n === 'lt' || n === 'lte') m.compare = n;
    else if (n === 'i' || n === 'm' || n === 's') {
      if (!m.re) throw new SigmaError(at, `the modifier "${n}" is a flag of "re" and comes after it`);
      m.reFlags += n;
    } else if (n === 'base64' || n === 'base64offset') m.base64 = n;
    else if (n === 'utf16le' || n === 'wide' || n === 'utf16') m.utf16 = 'utf16le';
    else if (n === 'utf16be') m.utf16 = 'utf16be';
    else (m as unknown as Record<string, boolean>)[n] = true;
  }
  const kinds = [m.re, m.cidr, m.exists, !!m.compare, !!m.base64].filter(Boolean).length;
  if (kinds > 1) throw new SigmaError(at, 're, cidr, exists, gt/gte/lt/lte and base64 cannot be combined');
  if (m.op && (m.re || m.cidr || m.exists || m.compare))
    throw new SigmaError(at, `"${m.op}" cannot be combined with re, cidr, exists or gt/gte/lt/lte`);
  if (m.windash && (m.re || m.cidr || m.exists || m.compare || m.base64))
    throw new SigmaError(
      at,
      'windash varies text values: it cannot be combined with re, cidr, exists, gt/gte/lt/lte or base64',
    );
  if (m.utf16 && !m.base64)
    throw new SigmaError(
      at,
      'utf16 encodings only compile together with base64 or base64offset (OCSF fields hold decoded text)',
    );
  if (m.base64 === 'base64offset' && m.op !== 'contains')
    throw new SigmaError(at, 'base64offset compiles only with contains (as Sigma defines it)');
  return m;
}

export function leaf(field: string, op: FieldCondition['op'], value: unknown, ignoreCase: boolean): FieldCondition {
  const c: FieldCondition = value === undefined ? { field, op } : { field, op, value };
  if (ignoreCase) c.ignore_case = true;
  return c;
}

/** A string value with its wildcards, under contains/startswith/endswith, as one leaf. */
export function textLeaf(field: string, value: string, m: Mods, at: string): FieldCondition {
  let p: Piece[] = m.base64 ? [{ lit: value }] : pieces(value);
  if (m.op === 'contains' || m.op === 'endswith') p = [{ any: true }, ...p];
  if (m.op === 'contains' || m.op === 'startswith') p = [...p, { any: true }];
  p = p.filter((x, i) => !('any' in x && i > 0 && 'any' in p[i - 1]!)); // ** is *
  const ci = !m.cased && !m.base64;
  const starts = p.length > 0 && 'any' in p[0]!;
  const ends = p.length > 1 && 'any' in p[p.length - 1]!;
  const core = p.slice(starts ? 1 : 0, ends ? -1 : undefined);
  if (core.length === 0 && !starts) return leaf(field, 'eq', '', ci);
  if (core.length === 1 && 'lit' in core[0]!) {
    const s = core[0].lit;
    return leaf(field, starts && ends ? 'contains' : starts ? 'suffix' : ends ? 'prefix' : 'eq', s, ci);
  }
  const re = `(?s)^${p.map((x) => ('lit' in x ? RE2JS.quote(x.lit) : 'any' in x ? '.*' : '.')).join('')}$`;
  if (re.length > 512)
    throw new SigmaError(at, 'this wildcard pattern makes a regular expression longer than 512 characters');
  return leaf(field, 'regex', re, ci);
}
