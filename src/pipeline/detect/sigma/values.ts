// A Sigma search identifier compiled to the one condition language: a map is the AND of its
// field items, a list of maps the OR of the maps; a field item's list of values is the OR of
// the values (the AND with `|all`). Values keep Sigma's meaning: strings compare ignoring case
// (`ignore_case`) unless `|cased`, `*` and `?` are wildcards (`\*`, `\?`, `\\` escape them),
// null is an absent field. Whatever cannot be kept exactly is refused with the reason.
import { RE2JS } from 're2js';
import { ocsfCatalog } from '../../../ocsf/index.js';
import type { Condition, FieldCondition } from '../../conditions/types.js';
import { SigmaError } from './errors.js';
import type { SigmaField, SigmaVariant } from './logsource-types.js';
import { windashVariants, base64Variants } from './encodings.js';
import { fold } from './condition.js';
import { leaf, pieces, readMods, textLeaf, type Mods } from './modifiers.js';

const NUMERIC_TYPES = new Set(['integer_t', 'long_t', 'float_t', 'port_t', 'timestamp_t']);
type Kind = 'number' | 'boolean' | 'text';

function kindOf(v: SigmaVariant, path: string): Kind {
  const cat = ocsfCatalog();
  for (const c of v.classes) {
    const a = cat.resolve(c, path.replaceAll('[*]', '[]'));
    if (a) return NUMERIC_TYPES.has(a.type) ? 'number' : a.type === 'boolean_t' ? 'boolean' : 'text';
  }
  return 'text';
}

function checkRe2(pattern: string, at: string): void {
  try {
    RE2JS.compile(pattern);
  } catch (e) {
    throw new SigmaError(
      at,
      `the regular expression cannot run on RE2 (no back-references or look-around): ${(e as Error).message}`,
    );
  }
}

/** One value of a field item, on one OCSF path. */
function valueLeaf(path: string, kind: Kind, spec: SigmaField, value: unknown, m: Mods, at: string): Compiled {
  if (spec.values) {
    if (m.op || m.re || m.cidr || m.compare || m.base64 || m.windash)
      throw new SigmaError(
        at,
        `this field is an OCSF enum (${path}): only plain values compare (${Object.keys(spec.values).join(', ')})`,
      );
    if (m.exists) return leaf(path, value === true ? 'exists' : 'not_exists', undefined, false);
    const v =
      typeof value === 'string' || typeof value === 'boolean' || typeof value === 'number'
        ? spec.values[String(value).toLowerCase()]
        : undefined;
    if (v === undefined)
      throw new SigmaError(
        at,
        `the value ${JSON.stringify(value)} has no OCSF equivalent in ${path} (known: ${Object.keys(spec.values).join(', ')})`,
      );
    return v === false ? false : leaf(path, 'eq', v, false);
  }
  if (spec.compose && !m.exists && value !== null) return composedLeaf(path, spec.compose, value, m, at);
  if (m.exists) {
    if (typeof value !== 'boolean') throw new SigmaError(at, '"exists" takes true or false');
    return leaf(
      spec.compose ? composedPresence(path, spec.compose) : path,
      value ? 'exists' : 'not_exists',
      undefined,
      false,
    );
  }
  if (value === null) {
    if (spec.compose) return leaf(composedPresence(path, spec.compose), 'not_exists', undefined, false);
    if (m.op || m.re || m.cidr || m.compare || m.base64 || m.windash)
      throw new SigmaError(at, 'null (an absent field) takes no modifier');
    return leaf(path, 'not_exists', undefined, false);
  }
  if (m.compare) {
    const n =
      typeof value === 'number' ? value : typeof value === 'string' && value.trim() !== '' ? Number(value) : NaN;
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
  if (typeof value !== 'string' && typeof value !== 'number')
    throw new SigmaError(at, 'a value is text, a number, a boolean or null');
  if (kind === 'number') {
    if (m.op || m.base64 || m.windash)
      throw new SigmaError(at, `${path} is a number in OCSF: "${m.op ?? m.base64 ?? 'windash'}" does not apply`);
    const n = typeof value === 'number' ? value : /^\s*-?\d+(\.\d+)?\s*$/.test(value) ? Number(value) : NaN;
    if (!Number.isFinite(n))
      throw new SigmaError(at, `${path} is a number in OCSF: ${JSON.stringify(value)} cannot match it`);
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
    if (pieces(text).some((x) => !('lit' in x)))
      throw new SigmaError(at, 'base64 of a value with wildcards cannot be computed');
    const encoded = base64Variants(text, m.base64 === 'base64offset', m.utf16);
    const leaves = encoded.map((v) => textLeaf(path, v, m, at));
    return leaves.length === 1 ? leaves[0]! : { any: leaves };
  }
  // Sigma's empty value is an empty field: Weir's absence (docs/conditions.md) holds missing, null and "".
  if (text === '' && !m.op) return leaf(path, 'not_exists', undefined, false);
  const test = textLeaf(path, text, m, at);
  // A placeholder the vendor writes for "empty" (Windows: `-`) is left out by the mapping: a test it passes holds on the absent attribute too.
  const absentToo = (spec.placeholders ?? []).some((p) => holdsOn(test, p));
  return absentToo ? { any: [test, leaf(path, 'not_exists', undefined, false)] } : test;
}

/** Whether a text leaf holds on the value (the placeholders of a field). */
function holdsOn(c: FieldCondition, value: string): boolean {
  const ci = c.ignore_case === true;
  const [v, x] = ci ? [value.toLowerCase(), String(c.value).toLowerCase()] : [value, String(c.value)];
  switch (c.op) {
    case 'eq':
      return v === x;
    case 'prefix':
      return v.startsWith(x);
    case 'suffix':
      return v.endsWith(x);
    case 'contains':
      return v.includes(x);
    case 'regex':
      return RE2JS.compile(String(c.value), ci ? RE2JS.CASE_INSENSITIVE : 0)
        .matcher(value)
        .find();
    default:
      return false;
  }
}

/** A compiled item: a condition, or a constant where the variant decides it (an absent field, an EventID). */
export type Compiled = Condition | boolean;

/** Sigma's field name resolved in a variant's table: exact, else the one entry differing only in case. */
export function tableEntry(v: SigmaVariant, name: string): [string, SigmaField] | undefined {
  if (v.fields[name]) return [name, v.fields[name]];
  const folded = Object.keys(v.fields).filter((k) => k.toLowerCase() === name.toLowerCase());
  return folded.length === 1 ? [folded[0]!, v.fields[folded[0]!]!] : undefined;
}

const isEventId = (name: string) => name.toLowerCase() === 'eventid';

/** EventID decided against the variant's ids: plain values only, as Sigma rules write them. */
function eventIdItem(v: SigmaVariant, values: unknown[], m: Mods, modNames: string[], at: string): Compiled {
  if (modNames.some((n) => n.toLowerCase() !== 'all'))
    throw new SigmaError(at, 'EventID compares plain values only (the ids an event can have)');
  const ids = values.map((x) => {
    if (typeof x !== 'string' && typeof x !== 'number') throw new SigmaError(at, 'an EventID is a number');
    return String(x).trim();
  });
  const ours = new Set(v.eventIds);
  const hit = [...new Set(ids.filter((id) => ours.has(id)))];
  if (m.all ? new Set(ids).size > 1 || hit.length === 0 : hit.length === 0) return false;
  if (hit.length === ours.size) return true;
  return hit.length === 1
    ? leaf('metadata.event_code', 'eq', hit[0], false)
    : leaf('metadata.event_code', 'in', hit, false);
}

/** What an item on a field the variant never writes is: an absent field (only `null` and `exists: false` hold). */
function absentItem(values: unknown[], m: Mods): boolean {
  const one = (x: unknown) => (m.exists ? x === false : x === null);
  return m.all ? values.every(one) : values.some(one);
}

/**
 * A field item `Field|mod|mod: value(s)` in one variant. `used` collects the Sigma names the
 * variant resolved; an item on a field the variant lacks is decided as an absent field.
 */
export function fieldItem(v: SigmaVariant, key: string, value: unknown, at: string, used: Set<string>): Compiled {
  const [name, ...modNames] = key.split('|');
  const m = readMods(modNames, at);
  const values = Array.isArray(value) ? value : [value];
  if (values.length === 0) throw new SigmaError(at, 'an empty list of values matches nothing; remove the item');
  if (values.some((x) => Array.isArray(x) || (typeof x === 'object' && x !== null)))
    throw new SigmaError(at, 'a value is text, a number, a boolean or null (not a list or a map)');
  if (v.eventIds && isEventId(name!)) {
    used.add('EventID');
    return eventIdItem(v, values, m, modNames, at);
  }
  const entry = tableEntry(v, name!);
  if (!entry) return absentItem(values, m);
  used.add(entry[0]);
  const spec: SigmaField =
    v.placeholders && !entry[1].also
      ? { ...entry[1], placeholders: [...v.placeholders, ...(entry[1].placeholders ?? [])] }
      : entry[1];
  const kind = spec.compose ? 'text' : kindOf(v, spec.path);
  const onPath = (path: string) =>
    combineValues(
      values.map((x, i) => valueLeaf(path, kind, spec, x, m, Array.isArray(value) ? `${at}[${i}]` : at)),
      m.all,
    );
  if (!spec.also) return onPath(spec.path);
  // A vendor field kept under `unmapped`, at one of its framings' paths: it holds on any of them; its absence, on all.
  const one = values.length === 1 ? values[0] : undefined;
  const absence = (m.exists && one === false) || (!m.exists && one === null);
  return fold(absence ? 'all' : 'any', [spec.path, ...spec.also].map(onPath));
}

/** The values of one field: OR (or AND with |all); plain text equalities of an OR become one `in`. */
function combineValues(items: Compiled[], all: boolean): Compiled {
  if (all ? items.includes(false) : items.includes(true)) return !all;
  const leaves = items.filter((x): x is Condition => typeof x !== 'boolean');
  if (leaves.length === 0) return all;
  if (leaves.length === 1) return leaves[0]!;
  if (all) return { all: leaves };
  // Ranges of one field: one cidr leaf with the list.
  const cidrs = leaves.filter((l): l is FieldCondition => 'op' in l && l.op === 'cidr' && typeof l.value === 'string');
  if (cidrs.length > 1 && cidrs.every((l) => l.field === cidrs[0]!.field)) {
    const rest = leaves.filter((l) => !cidrs.includes(l as FieldCondition));
    const merged: FieldCondition = { field: cidrs[0]!.field, op: 'cidr', value: cidrs.map((l) => l.value as string) };
    return rest.length ? { any: [merged, ...rest] } : merged;
  }
  const eqs = leaves.filter(
    (l): l is FieldCondition => 'op' in l && l.op === 'eq' && typeof l.value === 'string' && l.ignore_case === true,
  );
  const sameField = eqs.filter((l) => l.field === eqs[0]?.field);
  if (sameField.length > 1) {
    const rest = leaves.filter((l) => !sameField.includes(l as FieldCondition));
    const merged: FieldCondition = {
      field: sameField[0]!.field,
      op: 'in',
      value: sameField.map((l) => l.value),
      ignore_case: true,
    };
    return rest.length ? { any: [merged, ...rest] } : merged;
  }
  return { any: leaves };
}

// Composite fields (logsource-types.ts `compose`): one Sigma value the mapping splits over
// several OCSF attributes, compiled to conditions on the parts that hold exactly when the whole
// text would match.

type TextOp = 'eq' | 'prefix' | 'suffix' | 'contains';

/** A text value under contains/startswith/endswith, wildcards at its ends only, as one operator and a literal. */
function plainText(value: unknown, m: Mods, at: string, what: string): { op: TextOp; s: string } {
  if (m.re || m.cidr || m.compare || m.base64 || m.windash)
    throw new SigmaError(at, `${what}: only text with contains, startswith or endswith compiles on it`);
  if (typeof value !== 'string' && typeof value !== 'number')
    throw new SigmaError(at, `${what}: the value must be text`);
  let p = pieces(String(value));
  let starts = m.op === 'contains' || m.op === 'endswith';
  let ends = m.op === 'contains' || m.op === 'startswith';
  if (p[0] && 'any' in p[0]) [starts, p] = [true, p.slice(1)];
  if (p.length && 'any' in p[p.length - 1]!) [ends, p] = [true, p.slice(0, -1)];
  if (p.length > 1 || (p[0] && !('lit' in p[0])))
    throw new SigmaError(at, `${what}: a wildcard inside the value cannot be split over the OCSF attributes`);
  const s = p[0] && 'lit' in p[0] ? p[0].lit : '';
  return { op: starts && ends ? 'contains' : starts ? 'suffix' : ends ? 'prefix' : 'eq', s };
}

/** One part compared: an empty prefix, suffix or substring only asks that the part be there. */
function part(field: string, op: TextOp, s: string, ci: boolean): Condition {
  return s === '' && op !== 'eq' ? leaf(field, 'exists', undefined, false) : leaf(field, op, s, ci);
}

const allOf = (...c: Compiled[]): Compiled =>
  c.includes(false) ? false : c.length === 1 ? c[0]! : { all: c as Condition[] };
const anyOf = (...c: Compiled[]): Compiled => (c.length === 1 ? c[0]! : { any: c as Condition[] });

/**
 * `A\B` text over its parts: `a` (the domain, or a registry value's key path) and `b` (the
 * account, or the value's name), neither of which ends in a backslash; `b` never holds one, `a`
 * may (`aHoldsSep`), and may be missing (`aOptional`: an account without a domain is the name alone).
 */
function splitText(
  a: string,
  b: string,
  aHoldsSep: boolean,
  aOptional: boolean,
  op: TextOp,
  s: string,
  ci: boolean,
): Compiled {
  const k = s.lastIndexOf('\\');
  const [head, tail] = k < 0 ? ['', s] : [s.slice(0, k), s.slice(k + 1)];
  if (k >= 0 && !aHoldsSep && head.includes('\\')) return false;
  const aMissing = leaf(a, 'not_exists', undefined, false);
  if (k < 0) {
    if (op === 'eq') return aOptional ? allOf(aMissing, leaf(b, 'eq', s, ci)) : false;
    if (op === 'suffix') return part(b, 'suffix', s, ci);
    if (op === 'prefix')
      return aOptional
        ? anyOf(part(a, 'prefix', s, ci), allOf(aMissing, part(b, 'prefix', s, ci)))
        : part(a, 'prefix', s, ci);
    return anyOf(part(a, 'contains', s, ci), part(b, 'contains', s, ci));
  }
  if (op === 'eq') return allOf(leaf(a, 'eq', head, ci), leaf(b, 'eq', tail, ci));
  if (op === 'suffix') return allOf(part(a, 'suffix', head, ci), leaf(b, 'eq', tail, ci));
  const spanning = allOf(
    op === 'prefix' ? leaf(a, 'eq', head, ci) : part(a, 'suffix', head, ci),
    part(b, 'prefix', tail, ci),
  );
  return aHoldsSep ? anyOf(part(a, op, s, ci), spanning) : spanning;
}

const HASH = /^(?:(md5|sha1|sha256|sha384|sha512|imphash)=)?([0-9a-f]+)$/i;

function composedLeaf(
  path: string,
  compose: NonNullable<SigmaField['compose']>,
  value: unknown,
  m: Mods,
  at: string,
): Compiled {
  const ci = !m.cased;
  if (compose === 'flag') {
    const b = String(value).toLowerCase();
    if (m.op || m.re || m.cidr || m.compare || m.base64 || m.windash || (b !== 'true' && b !== 'false'))
      throw new SigmaError(
        at,
        `the mapping writes ${path} only when this flag is true: only the values true and false compare`,
      );
    return leaf(path, b === 'true' ? 'exists' : 'not_exists', undefined, false);
  }
  if (compose === 'hex') {
    if (m.op || m.re || m.cidr || m.base64 || m.windash)
      throw new SigmaError(
        at,
        `${path} holds the number the vendor writes in hex: only exact values (0x1410) and gt/gte/lt/lte compare`,
      );
    const n =
      typeof value === 'number'
        ? value
        : typeof value === 'string' && /^0x[0-9a-f]+$/i.test(value.trim())
          ? Number.parseInt(value.trim().slice(2), 16)
          : NaN;
    if (!Number.isFinite(n))
      throw new SigmaError(at, `${path} holds a number written in hex: ${JSON.stringify(value)} is not one (0x1410)`);
    return leaf(path, m.compare ?? 'eq', n, false);
  }
  const { op, s } = plainText(value, m, at, `the field is split over ${path}`);
  if (compose === 'user') return splitText(`${path}.domain`, `${path}.name`, false, true, op, s, ci);
  if (compose === 'regvalue') return splitText(`${path}.path`, `${path}.name`, true, false, op, s, ci);
  const values = `${path}[*].value`;
  if (compose === 'hash') return part(values, op, s, ci);
  // Sysmon's `Hashes` (SHA1=...,MD5=...,IMPHASH=...) is one hashes entry per algorithm: `ALGO=hex` anywhere in it is an entry whose value begins with hex.
  const h = HASH.exec(s);
  if (!h || (h[1] && op !== 'contains'))
    throw new SigmaError(
      at,
      `the hashes in ${path} compare as "ALGORITHM=hex" with contains, or as hex (a whole value, or with contains)`,
    );
  return h[1] ? leaf(values, 'prefix', h[2]!, true) : part(values, op, h[2]!, true);
}

/** The attribute whose presence is the composite field's. */
function composedPresence(path: string, compose: NonNullable<SigmaField['compose']>): string {
  return compose === 'user'
    ? `${path}.name`
    : compose === 'regvalue'
      ? `${path}.path`
      : compose === 'hex' || compose === 'flag'
        ? path
        : `${path}[*].value`;
}
