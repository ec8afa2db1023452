// A reference implementation of Sigma's matching semantics, written from the Sigma
// specification and independent of Weir's Sigma compiler (src/pipeline/detect/sigma/): it
// evaluates a rule's `detection` over a flat event keyed by Sigma field names, so that the
// end-to-end test (test/sigma/semantic.test.ts) can say what a rule must match without
// asking the code under test. Nothing here imports the compiler.
//
// The semantics held (Sigma specification, "Rules" and "Modifiers"):
// - field names compare ignoring case;
// - a map is the AND of its items, a list of maps the OR of the maps, a list of values the OR
//   of the values (the AND with `|all`);
// - text compares ignoring case unless `|cased`; `*` is any run of characters and `?` one
//   character, `\*`, `\?` and `\\` the literal characters, any other backslash itself;
// - `null` is an absent or empty field, `''` an empty one, and no other value matches either;
// - modifiers contains, startswith, endswith, all, re (with i, m, s), cidr, exists,
//   gt/gte/lt/lte, windash, base64, base64offset, utf16le/wide, utf16be, utf16, cased;
// - the condition: and, or, not, parentheses, `1 of x*`, `all of x*`, `1 of them`,
//   `all of them` (`them` leaves out identifiers starting with `_`); an aggregation after `|`
//   is not part of what one event matches and is ignored here.
import ipaddr from 'ipaddr.js';
import { RE2JS } from 're2js';

/** A flat event keyed by Sigma field names (as a rule writes them; compared ignoring case). */
export type SigmaEvent = Record<string, string | number | boolean | null>;
export type Json = Record<string, unknown>;

/** A rule (or part of it) the reference does not implement: keyword searches, unknown modifiers. */
export class UnsupportedSigma extends Error {}

export const isRecord = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

// ---------------------------------------------------------------------------------------------
// Field items

export type Modifier =
  | 'contains'
  | 'startswith'
  | 'endswith'
  | 'all'
  | 're'
  | 'i'
  | 'm'
  | 's'
  | 'cidr'
  | 'exists'
  | 'gt'
  | 'gte'
  | 'lt'
  | 'lte'
  | 'windash'
  | 'base64'
  | 'base64offset'
  | 'utf16le'
  | 'wide'
  | 'utf16be'
  | 'utf16'
  | 'cased';
const MODIFIERS = new Set<string>([
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
  'gt',
  'gte',
  'lt',
  'lte',
  'windash',
  'base64',
  'base64offset',
  'utf16le',
  'wide',
  'utf16be',
  'utf16',
  'cased',
]);

/** One `Field|mod|mod: value(s)` item of a search identifier. */
export interface Item {
  /** The field as the rule writes it. */
  field: string;
  mods: Set<Modifier>;
  /** The values (a single value is a list of one). */
  values: unknown[];
  /** The key as written, for messages. */
  key: string;
}

export function parseItem(key: string, value: unknown): Item {
  const [field, ...mods] = key.split('|');
  for (const m of mods) if (!MODIFIERS.has(m.toLowerCase())) throw new UnsupportedSigma(`modifier "${m}" of ${key}`);
  const values = Array.isArray(value) ? value : [value];
  if (values.length === 0) throw new UnsupportedSigma(`empty list of values in ${key}`);
  return { field: field!, mods: new Set(mods.map((m) => m.toLowerCase() as Modifier)), values, key };
}

/** A search identifier as a list of maps (alternatives), each a list of items (all must hold). */
export function identifierMaps(body: unknown, name: string): Item[][] {
  if (isRecord(body)) return [Object.entries(body).map(([k, v]) => parseItem(k, v))];
  if (Array.isArray(body) && body.length > 0 && body.every(isRecord))
    return body.map((m) => Object.entries(m).map(([k, v]) => parseItem(k, v)));
  throw new UnsupportedSigma(
    `search identifier "${name}" is not a map or a list of maps (keyword searches are not evaluated)`,
  );
}

/** The event's value of a field, its name compared ignoring case; undefined when absent. */
export function fieldValue(event: SigmaEvent, field: string): string | number | boolean | null | undefined {
  if (Object.hasOwn(event, field)) return event[field];
  const lower = field.toLowerCase();
  for (const [k, v] of Object.entries(event)) if (k.toLowerCase() === lower) return v;
  return undefined;
}

const isEmpty = (v: unknown) => v === undefined || v === null || v === '';

/** One piece of a Sigma string: literal text, `*`, `?`, or one of several characters (windash). */
export type Piece = { lit: string } | { any: true } | { one: true } | { oneOf: string[] };

/** Sigma's string syntax: wildcards and their escapes. */
export function sigmaPieces(value: string): Piece[] {
  const out: Piece[] = [];
  let lit = '';
  for (let i = 0; i < value.length; i++) {
    const c = value[i]!;
    const next = value[i + 1];
    if (c === '\\' && (next === '*' || next === '?' || next === '\\')) {
      lit += next;
      i++;
    } else if (c === '*' || c === '?') {
      if (lit) out.push({ lit });
      lit = '';
      out.push(c === '*' ? { any: true } : { one: true });
    } else lit += c;
  }
  if (lit) out.push({ lit });
  return out;
}

/** The literal text of a string without wildcards (escapes resolved); undefined when it has wildcards. */
export function plainText(value: string): string | undefined {
  const p = sigmaPieces(value);
  if (p.some((x) => !('lit' in x))) return undefined;
  return p.map((x) => (x as { lit: string }).lit).join('');
}

/** The dash characters `windash` accepts for a `-` or `/` that starts an option. */
export const WINDASH_CHARS = ['-', '/', '\u2013', '\u2014', '\u2015'];

/** windash: each `-` or `/` that starts a word (not preceded by a word character, followed by one) may be any dash character. */
function windashPieces(pieces: Piece[]): Piece[] {
  const out: Piece[] = [];
  for (const p of pieces) {
    if (!('lit' in p)) {
      out.push(p);
      continue;
    }
    let last = 0;
    for (const m of p.lit.matchAll(/\B[-/]\b/g)) {
      if (m.index > last) out.push({ lit: p.lit.slice(last, m.index) });
      out.push({ oneOf: WINDASH_CHARS });
      last = m.index + 1;
    }
    if (last < p.lit.length) out.push({ lit: p.lit.slice(last) });
  }
  return out;
}

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

const patternCache = new Map<string, RegExp>();
function piecesRegExp(pieces: Piece[], caseSensitive: boolean): RegExp {
  const body = pieces
    .map((p) =>
      'lit' in p ? escapeRe(p.lit) : 'any' in p ? '.*' : 'one' in p ? '.' : `(?:${p.oneOf.map(escapeRe).join('|')})`,
    )
    .join('');
  const key = `${caseSensitive ? 's' : 'i'}${body}`;
  let re = patternCache.get(key);
  if (!re) {
    re = new RegExp(`^${body}$`, caseSensitive ? 'su' : 'siu');
    patternCache.set(key, re);
  }
  return re;
}

/** The bytes of a text in the encoding a utf16 modifier names (none: UTF-8). utf16: with the byte-order mark, little-endian. */
export function encodeText(text: string, mods: Set<Modifier>): Buffer {
  if (mods.has('utf16le') || mods.has('wide')) return Buffer.from(text, 'utf16le');
  if (mods.has('utf16be')) return Buffer.from(text, 'utf16le').swap16();
  if (mods.has('utf16')) return Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]);
  return Buffer.from(text, 'utf8');
}

/**
 * base64offset as the Sigma specification defines it: the value encoded after 0, 1 and 2
 * leading bytes, with the characters that depend on the leading bytes cut at the start
 * (0, 2, 3 characters) and those that depend on what follows cut at the end (by the
 * encoded length modulo 3: none, 3 or 2 characters).
 */
export function base64OffsetVariants(bytes: Buffer): string[] {
  const start = [0, 2, 3];
  const end = [undefined, -3, -2];
  const out: string[] = [];
  for (let i = 0; i < 3; i++) {
    const b64 = Buffer.concat([Buffer.alloc(i, 0x20), bytes]).toString('base64');
    out.push(b64.slice(start[i], end[(bytes.length + i) % 3]));
  }
  return out;
}

/** The text strings (Sigma syntax) a string value stands for under its modifiers: base64 turns it into its encodings. */
export function encodedForms(value: string, mods: Set<Modifier>): { forms: string[]; literal: boolean } {
  if (!mods.has('base64') && !mods.has('base64offset')) return { forms: [value], literal: false };
  const text = plainText(value);
  if (text === undefined) throw new UnsupportedSigma('base64 of a value with wildcards');
  const bytes = encodeText(text, mods);
  return { forms: mods.has('base64offset') ? base64OffsetVariants(bytes) : [bytes.toString('base64')], literal: true };
}

function asNumber(v: unknown): number {
  if (typeof v === 'number') return v;
  if (typeof v === 'string' && v.trim() !== '') return Number(v);
  return NaN;
}

function regexFlags(mods: Set<Modifier>): number {
  return (
    (mods.has('i') ? RE2JS.CASE_INSENSITIVE : 0) |
    (mods.has('m') ? RE2JS.MULTILINE : 0) |
    (mods.has('s') ? RE2JS.DOTALL : 0)
  );
}

const reCache = new Map<string, (s: string) => boolean>();
/** A Sigma `re` value (searched anywhere in the text, as backends do) as a test; RE2 syntax, JavaScript's where RE2 refuses it. */
export function regexTest(pattern: string, mods: Set<Modifier>): (s: string) => boolean {
  const key = `${regexFlags(mods)}/${pattern}`;
  let t = reCache.get(key);
  if (!t) {
    try {
      const re = RE2JS.compile(pattern, regexFlags(mods));
      t = (s) => re.matcher(s).find();
    } catch {
      const js = new RegExp(
        pattern,
        `u${mods.has('i') ? 'i' : ''}${mods.has('m') ? 'm' : ''}${mods.has('s') ? 's' : ''}`,
      );
      t = (s) => js.test(s);
    }
    reCache.set(key, t);
  }
  return t;
}

function cidrHolds(cidr: string, v: string): boolean {
  let range: [ipaddr.IPv4 | ipaddr.IPv6, number];
  try {
    range = ipaddr.parseCIDR(cidr);
  } catch {
    throw new UnsupportedSigma(`cidr ${cidr}`);
  }
  if (!ipaddr.isValid(v)) return false;
  const addr = ipaddr.parse(v);
  if (addr.kind() !== range[0].kind()) return false;
  return addr.match(range);
}

const testers = new Map<string, (v: string | number | boolean) => boolean>();

/** Does one value of an item hold for the field's value `v` (present)? Compiled once per modifiers and value. */
function valueHolds(item: Item, value: unknown, v: string | number | boolean): boolean {
  if (typeof value === 'object' && value !== null)
    throw new UnsupportedSigma(`a value of ${item.key} is a list or a map`);
  const key = `${[...item.mods].sort().join('|')}\u0000${typeof value}\u0000${String(value)}`;
  let t = testers.get(key);
  if (!t) {
    t = tester(item.mods, value);
    testers.set(key, t);
  }
  return t(v);
}

function tester(m: Set<Modifier>, value: unknown): (v: string | number | boolean) => boolean {
  if (m.has('gt') || m.has('gte') || m.has('lt') || m.has('lte')) {
    const b = asNumber(value);
    return (v) => {
      const a = asNumber(v);
      if (!Number.isFinite(a) || !Number.isFinite(b)) return false;
      return m.has('gt') ? a > b : m.has('gte') ? a >= b : m.has('lt') ? a < b : a <= b;
    };
  }
  if (m.has('cidr')) return (v) => cidrHolds(String(value), String(v));
  if (m.has('re')) {
    const re = regexTest(String(value), m);
    return (v) => re(String(v));
  }
  const { forms, literal } = encodedForms(String(value), m);
  // base64 forms are case-sensitive text (an encoding), other text ignores case unless cased.
  const caseSensitive = m.has('cased') || literal;
  const res = forms.map((form) => {
    let pieces: Piece[] = literal ? [{ lit: form }] : sigmaPieces(form);
    if (m.has('windash')) pieces = windashPieces(pieces);
    if (m.has('contains') || m.has('endswith')) pieces = [{ any: true }, ...pieces];
    if (m.has('contains') || m.has('startswith')) pieces = [...pieces, { any: true }];
    return piecesRegExp(pieces, caseSensitive);
  });
  return (v) => {
    const text = String(v);
    return res.some((re) => re.test(text));
  };
}

/** Does an item hold in the event? */
export function itemHolds(item: Item, event: SigmaEvent): boolean {
  const v = fieldValue(event, item.field);
  if (item.mods.has('exists')) {
    const want = item.values[0];
    if (typeof want !== 'boolean' && want !== 'true' && want !== 'false')
      throw new UnsupportedSigma(`exists takes true or false in ${item.key}`);
    return (want === true || want === 'true') === !isEmpty(v);
  }
  const one = (value: unknown): boolean => {
    if (value === null) return isEmpty(v);
    if (value === '') return v === '';
    if (isEmpty(v)) return false;
    return valueHolds(item, value, v!);
  };
  return item.mods.has('all') ? item.values.every(one) : item.values.some(one);
}

export const mapHolds = (items: Item[], event: SigmaEvent): boolean => items.every((i) => itemHolds(i, event));

// ---------------------------------------------------------------------------------------------
// The condition

export type Cond = { id: string } | { and: Cond[] } | { or: Cond[] } | { not: Cond };

/** Parses a condition over the identifiers `names`; `1 of` / `all of` expand to or / and. Ignores an aggregation after `|`. */
export function parseSigmaCondition(text: string, names: string[]): Cond {
  const bar = text.indexOf('|');
  const expr = bar >= 0 ? text.slice(0, bar) : text;
  const tokens = expr.match(/\(|\)|[^\s()]+/g) ?? [];
  let i = 0;
  const peekWord = (w: string) => tokens[i]?.toLowerCase() === w;
  const pattern = (p: string) => {
    if (p === 'them') return names.filter((n) => !n.startsWith('_'));
    const re = new RegExp(`^${p.split('*').map(escapeRe).join('.*')}$`);
    return names.filter((n) => re.test(n));
  };
  function primary(): Cond {
    const t = tokens[i];
    if (t === undefined) throw new UnsupportedSigma(`condition "${text}" ends early`);
    if (t === '(') {
      i++;
      const c = or();
      if (tokens[i] !== ')') throw new UnsupportedSigma(`condition "${text}": unclosed (`);
      i++;
      return c;
    }
    if (tokens[i + 1]?.toLowerCase() === 'of') {
      const q = t.toLowerCase();
      const target = tokens[i + 2];
      i += 3;
      if (!target) throw new UnsupportedSigma(`condition "${text}": "of" without a pattern`);
      const picked = pattern(target);
      if (!picked.length) throw new UnsupportedSigma(`condition "${text}": ${target} names no identifier`);
      const ids: Cond[] = picked.map((id) => ({ id }));
      if (q === 'all') return { and: ids };
      if (q === '1' || q === 'any') return { or: ids };
      throw new UnsupportedSigma(`condition "${text}": "${t} of"`);
    }
    if (!names.includes(t)) throw new UnsupportedSigma(`condition "${text}": unknown identifier ${t}`);
    i++;
    return { id: t };
  }
  function not(): Cond {
    if (peekWord('not')) {
      i++;
      return { not: not() };
    }
    return primary();
  }
  function and(): Cond {
    const parts = [not()];
    while (peekWord('and')) {
      i++;
      parts.push(not());
    }
    return parts.length === 1 ? parts[0]! : { and: parts };
  }
  function or(): Cond {
    const parts = [and()];
    while (peekWord('or')) {
      i++;
      parts.push(and());
    }
    return parts.length === 1 ? parts[0]! : { or: parts };
  }
  const c = or();
  if (i !== tokens.length) throw new UnsupportedSigma(`condition "${text}": unexpected "${tokens[i]}"`);
  return c;
}

/** A rule's detection, parsed once: the identifiers as maps of items, and the condition. */
export interface ParsedDetection {
  ids: Map<string, Item[][]>;
  condition: Cond;
}

export function parseDetection(detection: unknown): ParsedDetection {
  if (!isRecord(detection)) throw new UnsupportedSigma('no detection map');
  const ids = new Map<string, Item[][]>();
  for (const [name, body] of Object.entries(detection)) {
    if (name === 'condition' || name === 'timeframe') continue;
    ids.set(name, identifierMaps(body, name));
  }
  const c = detection.condition;
  const names = [...ids.keys()];
  let condition: Cond;
  if (typeof c === 'string') condition = parseSigmaCondition(c, names);
  else if (Array.isArray(c) && c.length > 0 && c.every((x) => typeof x === 'string')) {
    const all = c.map((x) => parseSigmaCondition(x as string, names));
    condition = all.length === 1 ? all[0]! : { or: all };
  } else throw new UnsupportedSigma('no condition');
  return { ids, condition };
}

export function identifierHolds(d: ParsedDetection, id: string, event: SigmaEvent): boolean {
  return d.ids.get(id)!.some((items) => mapHolds(items, event));
}

export function condHolds(d: ParsedDetection, c: Cond, event: SigmaEvent): boolean {
  if ('id' in c) return identifierHolds(d, c.id, event);
  if ('and' in c) return c.and.every((x) => condHolds(d, x, event));
  if ('or' in c) return c.or.some((x) => condHolds(d, x, event));
  return !condHolds(d, c.not, event);
}

/** Does the rule (its `detection`, parsed or not) match the event? */
export function matches(detection: unknown, event: SigmaEvent): boolean {
  const d = isParsed(detection) ? detection : parseDetection(detection);
  return condHolds(d, d.condition, event);
}

const isParsed = (d: unknown): d is ParsedDetection => isRecord(d) && d.ids instanceof Map;
