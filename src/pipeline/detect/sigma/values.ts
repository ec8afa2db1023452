// A Sigma search identifier compiled to the one condition language: a map is the AND of its
// field items, a list of maps the OR of the maps; a field item's list of values is the OR of
// the values (the AND with `|all`). Values keep Sigma's meaning: strings compare ignoring case
// (`ignore_case`) unless `|cased`, `*` and `?` are wildcards (`\*`, `\?`, `\\` escape them),
// null is an absent field. Whatever cannot be kept exactly is refused with the reason.
import { RE2JS } from 're2js';
import { ocsfCatalog } from '../../../ocsf/index.js';
import type { Condition, FieldCondition } from '../../conditions/types.js';
import { SigmaError } from './errors.js';
import type { SigmaField, SigmaLogsource } from './logsources.js';
import { windashVariants, base64Variants } from './encodings.js';

const NUMERIC_TYPES = new Set(['integer_t', 'long_t', 'float_t', 'port_t', 'timestamp_t']);
type Kind = 'number' | 'boolean' | 'text';

const SUPPORTED = ['contains', 'startswith', 'endswith', 'all', 're', 'i', 'm', 's', 'cidr', 'exists', 'cased', 'gt', 'gte', 'lt', 'lte', 'windash', 'base64', 'base64offset', 'utf16le', 'utf16be', 'utf16', 'wide'];
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

function kindOf(ls: SigmaLogsource, path: string): Kind {
  const cat = ocsfCatalog();
  for (const c of ls.classes) {
    const a = cat.resolve(c, path.replaceAll('[*]', '[]'));
    if (a) return NUMERIC_TYPES.has(a.type) ? 'number' : a.type === 'boolean_t' ? 'boolean' : 'text';
  }
  return 'text';
}

interface Mods {
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

function readMods(names: string[], at: string): Mods {
  const m: Mods = { all: false, re: false, reFlags: '', cidr: false, exists: false, cased: false, windash: false };
  for (const raw of names) {
    const n = raw.toLowerCase();
    if (REFUSED[n]) throw new SigmaError(at, `the modifier "${raw}" ${REFUSED[n]}`);
    if (!SUPPORTED.includes(n)) throw new SigmaError(at, `unknown modifier "${raw}" (supported: ${SUPPORTED.join(', ')})`);
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
  if (m.op && (m.re || m.cidr || m.exists || m.compare)) throw new SigmaError(at, `"${m.op}" cannot be combined with re, cidr, exists or gt/gte/lt/lte`);
  if (m.windash && (m.re || m.cidr || m.exists || m.compare || m.base64)) throw new SigmaError(at, 'windash varies text values: it cannot be combined with re, cidr, exists, gt/gte/lt/lte or base64');
  if (m.utf16 && !m.base64) throw new SigmaError(at, 'utf16 encodings only compile together with base64 or base64offset (OCSF fields hold decoded text)');
  if (m.base64 === 'base64offset' && m.op !== 'contains') throw new SigmaError(at, 'base64offset compiles only with contains (as Sigma defines it)');
  return m;
}

function leaf(field: string, op: FieldCondition['op'], value: unknown, ignoreCase: boolean): FieldCondition {
  const c: FieldCondition = value === undefined ? { field, op } : { field, op, value };
  if (ignoreCase) c.ignore_case = true;
  return c;
}

/** A string value with its wildcards, under contains/startswith/endswith, as one leaf. */
function textLeaf(field: string, value: string, m: Mods, at: string): FieldCondition {
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
  if (re.length > 512) throw new SigmaError(at, 'this wildcard pattern makes a regular expression longer than 512 characters');
  return leaf(field, 'regex', re, ci);
}

function checkRe2(pattern: string, at: string): void {
  try {
    RE2JS.compile(pattern);
  } catch (e) {
    throw new SigmaError(at, `the regular expression cannot run on RE2 (no back-references or look-around): ${(e as Error).message}`);
  }
}

/** One value of a field item, on one OCSF path. */
function valueLeaf(path: string, kind: Kind, spec: SigmaField, value: unknown, m: Mods, at: string): Condition {
  if (spec.values) {
    if (m.op || m.re || m.cidr || m.compare || m.base64 || m.windash) throw new SigmaError(at, `this field is an OCSF enum (${path}): only plain values compare (${Object.keys(spec.values).join(', ')})`);
    const v = typeof value === 'string' ? spec.values[value.toLowerCase()] : undefined;
    if (v === undefined) throw new SigmaError(at, `the value ${JSON.stringify(value)} has no OCSF equivalent in ${path} (known: ${Object.keys(spec.values).join(', ')})`);
    return leaf(path, 'eq', v, false);
  }
  if (m.exists) {
    if (typeof value !== 'boolean') throw new SigmaError(at, '"exists" takes true or false');
    return leaf(path, value ? 'exists' : 'not_exists', undefined, false);
  }
  if (value === null) {
    if (m.op || m.re || m.cidr || m.compare || m.base64 || m.windash) throw new SigmaError(at, 'null (an absent field) takes no modifier');
    return leaf(path, 'not_exists', undefined, false);
  }
  if (m.compare) {
    const n = typeof value === 'number' ? value : typeof value === 'string' && value.trim() !== '' ? Number(value) : NaN;
    if (!Number.isFinite(n)) throw new SigmaError(at, `"${m.compare}" needs a number, not ${JSON.stringify(value)}`);
    return leaf(path, m.compare, n, false);
  }
  if (m.cidr) {
    if (typeof value !== 'string') throw new SigmaError(at, '"cidr" needs a CIDR such as 10.0.0.0/8');
    return leaf(path, 'cidr', value, false);
  }
  if (m.re) {
    if (typeof value !== 'string') throw new SigmaError(at, '"re" needs a regular expression (text)');
    const flags = [...new Set(m.reFlags.replace('i', ''))].join('');
    const pattern = flags ? `(?${flags})${value}` : value;
    checkRe2(pattern, at);
    return leaf(path, 'regex', pattern, m.reFlags.includes('i'));
  }
  if (typeof value === 'boolean') {
    if (m.op || m.base64 || m.windash) throw new SigmaError(at, 'true and false take no modifier');
    return leaf(path, 'eq', value, false);
  }
  if (typeof value !== 'string' && typeof value !== 'number') throw new SigmaError(at, 'a value is text, a number, a boolean or null');
  if (kind === 'number') {
    if (m.op || m.base64 || m.windash) throw new SigmaError(at, `${path} is a number in OCSF: "${m.op ?? m.base64 ?? 'windash'}" does not apply`);
    const n = typeof value === 'number' ? value : /^\s*-?\d+(\.\d+)?\s*$/.test(value) ? Number(value) : NaN;
    if (!Number.isFinite(n)) throw new SigmaError(at, `${path} is a number in OCSF: ${JSON.stringify(value)} cannot match it`);
    return leaf(path, 'eq', n, false);
  }
  if (kind === 'boolean') throw new SigmaError(at, `${path} is a boolean in OCSF: write true or false`);
  const text = String(value);
  if (m.windash) {
    const variants = windashVariants(text);
    if (!variants) throw new SigmaError(at, 'windash: more than 4 dashes or slashes to vary');
    const leaves = variants.map((v) => textLeaf(path, v, { ...m, windash: false }, at));
    return leaves.length === 1 ? leaves[0]! : { any: leaves };
  }
  if (m.base64) {
    if (pieces(text).some((x) => !('lit' in x))) throw new SigmaError(at, 'base64 of a value with wildcards cannot be computed');
    const encoded = base64Variants(text, m.base64 === 'base64offset', m.utf16);
    const leaves = encoded.map((v) => textLeaf(path, v, m, at));
    return leaves.length === 1 ? leaves[0]! : { any: leaves };
  }
  return textLeaf(path, text, m, at);
}

/** A field item `Field|mod|mod: value(s)` as a condition. */
export function fieldItem(ls: SigmaLogsource, key: string, value: unknown, at: string, where: string): Condition {
  const [name, ...modNames] = key.split('|');
  // Field names as Sigma writes them; a name differing only in case is the same field when that is unambiguous.
  const folded = Object.keys(ls.fields).filter((k) => k.toLowerCase() === name!.toLowerCase());
  const spec = ls.fields[name!] ?? (folded.length === 1 ? ls.fields[folded[0]!] : undefined);
  if (!spec) {
    throw new SigmaError(at, `the field "${name}" has no OCSF mapping for logsource ${where} (mapped: ${Object.keys(ls.fields).join(', ')})`);
  }
  const m = readMods(modNames, at);
  const values = Array.isArray(value) ? value : [value];
  if (values.length === 0) throw new SigmaError(at, 'an empty list of values matches nothing; remove the item');
  if (values.some((v) => Array.isArray(v) || (typeof v === 'object' && v !== null))) throw new SigmaError(at, 'a value is text, a number, a boolean or null (not a list or a map)');
  if (spec.only) {
    const other = values.find((v) => !spec.only!.values.includes(String(v)) || modNames.length > 0);
    if (other !== undefined) throw new SigmaError(at, `${modNames.length ? 'only plain values compare here' : `the value ${JSON.stringify(other)} cannot occur`}: ${spec.only.why} (values: ${spec.only.values.join(', ')})`);
  }
  const kind = kindOf(ls, spec.path);
  const leaves = values.map((v, i) => valueLeaf(spec.path, kind, spec, v, m, Array.isArray(value) ? `${at}[${i}]` : at));
  return combineValues(leaves, m.all);
}

/** The values of one field: OR (or AND with |all); plain text equalities of an OR become one `in`. */
function combineValues(leaves: Condition[], all: boolean): Condition {
  if (leaves.length === 1) return leaves[0]!;
  if (all) return { all: leaves };
  const eqs = leaves.filter((l): l is FieldCondition => 'op' in l && l.op === 'eq' && typeof l.value === 'string' && l.ignore_case === true);
  if (eqs.length > 1) {
    const rest = leaves.filter((l) => !eqs.includes(l as FieldCondition));
    const merged: FieldCondition = { field: eqs[0]!.field, op: 'in', value: eqs.map((l) => l.value), ignore_case: true };
    return rest.length ? { any: [merged, ...rest] } : merged;
  }
  return { any: leaves };
}
