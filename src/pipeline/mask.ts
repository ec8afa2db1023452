// Masking personal data in what the product shows back to people (drift examples, field
// discovery, tap, capture export): keeps a hint of the value's shape (`j***@example.com`,
// `192.0.2.x`) so a mapping author can tell what a field holds, never the value itself. A
// value masked in one field is masked wherever else it appears in the event (observables,
// message, raw_data, inside longer strings). Work is bounded (depth, node and string caps,
// one regular expression per event for the copies) so a hostile event cannot make masking
// expensive.
import { isIPv4, isIPv6 } from 'node:net';
import { BY_KEY, eventPlace, isPersonalKey, isPersonalPath, PERSONAL, type Place } from './mask-rules.js';

export { isPersonalKey, isPersonalPath } from './mask-rules.js';

export const MASK = '***';

/** Limits of maskEvent: deeper levels, further nodes and longer strings are cut. */
export const MASK_LIMITS = { depth: 12, nodes: 2_000, stringLength: 1_024 } as const;

/**
 * Copies of a masked value are looked for when it has at least this many characters: shorter
 * ones ("US", "1", "ok") are codes rather than identities, and hunting them would blank
 * unrelated text all over the event.
 */
export const COPY_MIN = 3;
/** Most distinct masked values hunted in one event; past it every other string is masked whole (fail closed, bounded cost). */
export const COPY_MAX = 256;

const EMAIL_RE = /([A-Za-z0-9._%+-])[A-Za-z0-9._%+-]*@([A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,})/g;
const LONE_EMAIL_RE = /^[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}$/;
// Candidates only; each is confirmed with node:net before it is masked.
const IPV6_RE = /(?<![\w:])(?:[0-9A-Fa-f]{0,4}:){2,7}(?:[0-9A-Fa-f]{0,4}|\d{1,3}(?:\.\d{1,3}){3})(?![\w:])/g;
const IPV4_RE = /(?<![\w.])(\d{1,3}\.\d{1,3}\.\d{1,3})\.\d{1,3}(?![\w.])/g;
// Nine or more digits, optionally grouped by spaces or dashes: cards, phones, accounts.
// Not inside a word or an identifier such as a UUID (no word character or dash around).
const DIGITS_RE = /(?<![\w-])\d(?:[ -]?\d){8,}(?![\w-])/g;

function maskIpv6(ip: string): string {
  const groups = ip.split(':').filter((g) => g !== '');
  return `${groups.slice(0, 2).join(':')}:x`;
}

/** A free text with e-mail addresses, IP addresses and long digit runs masked. */
export function maskText(text: string): string {
  let out = text.length > MASK_LIMITS.stringLength ? `${text.slice(0, MASK_LIMITS.stringLength)}…` : text;
  if (out.includes('@'))
    out = out.replace(EMAIL_RE, (_m, first: string, domain: string) => `${first}${MASK}@${domain}`);
  if (out.includes(':')) out = out.replace(IPV6_RE, (m) => (isIPv6(m) ? maskIpv6(m) : m));
  if (out.includes('.')) out = out.replace(IPV4_RE, (m, head: string) => (isIPv4(m) ? `${head}.x` : m));
  return out.replace(DIGITS_RE, MASK);
}

// What maskPersonalScalar makes of a value: kept as it is when met again (the tap masks what the
// dispatcher already masked), so that `192.0.2.x` does not become `1***` the second time.
const MASKED_FORM =
  /^(?:[^*]?\*\*\*(?:@[A-Za-z0-9.-]+)?|\d{1,3}\.\d{1,3}\.\d{1,3}\.x|[0-9A-Fa-f]{0,4}:[0-9A-Fa-f]{0,4}:x)$/;

/** A value known to be personal: only its shape survives. */
function maskPersonalScalar(value: unknown): unknown {
  if (typeof value === 'number' || typeof value === 'bigint') return MASK;
  if (typeof value !== 'string') return value; // booleans and null say nothing about a person
  if (value === '' || (value.length <= 256 && MASKED_FORM.test(value))) return value;
  // node:net's checks cost microseconds; most values cannot be addresses at all.
  if (value.includes('.') && isIPv4(value)) return `${value.slice(0, value.lastIndexOf('.'))}.x`;
  if (value.includes(':') && isIPv6(value)) return maskIpv6(value);
  // A lone e-mail address keeps its domain; a longer text with one in it is masked whole.
  if (value.includes('@') && LONE_EMAIL_RE.test(value)) return maskText(value);
  return value.length > 1 ? `${value[0]}${MASK}` : MASK;
}

/** Finds the copies of masked values in a string and masks each as its field was masked. */
type Hunter = ((text: string) => string) & { longest: number };
/** Up to this many values, each string is scanned once per value; above, with one regular expression. */
const FEW = 8;
/** Every string masked whole: too many distinct values to hunt. */
const ALL = 'all';

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

// A copy is a whole word: "Role" is not hunted inside "AssumeRole", nor "ana" inside
// "banana"; "ana" in "C:\Users\ana\" or "ana@example.com" is.
const isWordChar = (c: string | undefined) => c !== undefined && /[A-Za-z0-9]/.test(c);

/** `text` with every whole-word occurrence of `value` replaced by `mask`. */
function replaceWhole(text: string, value: string, mask: string): string {
  const openStart = !isWordChar(value[0]);
  const openEnd = !isWordChar(value[value.length - 1]);
  let out = '';
  let from = 0;
  for (let at = text.indexOf(value); at !== -1; at = text.indexOf(value, at + 1)) {
    if (at < from) continue;
    if (!openStart && isWordChar(text[at - 1])) continue;
    if (!openEnd && isWordChar(text[at + value.length])) continue;
    out += text.slice(from, at) + mask;
    from = at + value.length;
  }
  return from === 0 ? text : out + text.slice(from);
}

const wholePattern = (value: string) =>
  `${isWordChar(value[0]) ? '(?<![A-Za-z0-9])' : ''}${escapeRe(value)}${isWordChar(value[value.length - 1]) ? '(?![A-Za-z0-9])' : ''}`;

/** values: each masked value and what its field became; a copy becomes the same. */
function hunterOf(values: Map<string, string>): Hunter | typeof ALL | null {
  if (values.size === 0) return null;
  if (values.size > COPY_MAX) return ALL;
  // Longest first: "alice@example.com" is replaced whole before "alice" could split it.
  const sorted = [...values.keys()].sort((a, b) => b.length - a.length);
  const shortest = sorted[sorted.length - 1]!.length;
  let hunt: Hunter;
  if (sorted.length <= FEW) {
    // The common case (a user, an address): a few indexOf scans cost less than compiling a pattern.
    const masks = sorted.map((v) => values.get(v)!);
    hunt = ((text: string) => {
      if (text.length < shortest) return text;
      let out = text;
      for (let i = 0; i < sorted.length; i++)
        if (out.includes(sorted[i]!)) out = replaceWhole(out, sorted[i]!, masks[i]!);
      return out;
    }) as Hunter;
  } else {
    // One pass over each string whatever the number of values (up to COPY_MAX).
    const re = new RegExp(sorted.map(wholePattern).join('|'), 'g');
    const replace = (m: string) => values.get(m) ?? MASK;
    hunt = ((text: string) => (text.length < shortest ? text : text.replace(re, replace))) as Hunter;
  }
  hunt.longest = sorted[0]!.length;
  return hunt;
}

/** The scalar values `copy` would mask as personal, as text, with what each becomes (within the same limits). */
function collect(
  value: unknown,
  place: Place,
  depth: number,
  budget: { nodes: number },
  out: Map<string, string>,
): void {
  if (value === null || typeof value !== 'object') {
    if (place.kind !== 'personal') return;
    const text =
      typeof value === 'string' ? value : typeof value === 'number' || typeof value === 'bigint' ? String(value) : '';
    if (text.length >= COPY_MIN && !out.has(text)) out.set(text, String(maskPersonalScalar(value)));
    return;
  }
  if (depth >= MASK_LIMITS.depth) return;
  if (Array.isArray(value)) {
    for (const item of value) {
      if (++budget.nodes > MASK_LIMITS.nodes) return;
      collect(item, place, depth + 1, budget, out);
    }
    return;
  }
  const here = place.refine?.(value as Record<string, unknown>) ?? place;
  for (const key of Object.keys(value)) {
    if (++budget.nodes > MASK_LIMITS.nodes) return;
    collect((value as Record<string, unknown>)[key], here.child(key), depth + 1, budget, out);
  }
}

/** A string that is not personal by its place: copies of masked values, then e-mail, IP and digit runs. */
function maskFree(text: string, hunt: Hunter | typeof ALL | null): string {
  if (hunt === ALL) return String(maskPersonalScalar(text));
  if (!hunt) return maskText(text);
  // Hunt on the text before maskText cuts it, but not further than the cut can show.
  const limit = MASK_LIMITS.stringLength + hunt.longest;
  return maskText(hunt(text.length > limit ? text.slice(0, limit) : text));
}

/** Longest raw_data text parsed as JSON to be masked field by field; a longer one is masked whole. */
const RAW_PARSE_MAX = 65_536;

/** raw_data: the vendor's event as text, masked as a raw event (by key names) when it is JSON, else whole. */
function maskRaw(text: string, depth: number, budget: { nodes: number }, hunt: Hunter | typeof ALL | null): string {
  const first = text.trimStart()[0];
  if ((first === '{' || first === '[') && text.length <= RAW_PARSE_MAX) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    if (parsed !== null && typeof parsed === 'object') return JSON.stringify(copy(parsed, BY_KEY, depth, budget, hunt));
  }
  return String(maskPersonalScalar(text));
}

function maskTree(value: unknown, place: Place): unknown {
  const values = new Map<string, string>();
  collect(value, place, 0, { nodes: 0 }, values);
  return copy(value, place, 0, { nodes: 0 }, hunterOf(values));
}

/**
 * One value seen under `key` (a key or a dotted path of a raw event): masked as personal data
 * when the key names it, else with personal data inside strings masked. Objects and arrays are
 * masked deeply, within MASK_LIMITS.
 */
export function maskValue(key: string, value: unknown): unknown {
  const personal = key.includes('.') ? isPersonalPath(key) : isPersonalKey(key);
  if (value !== null && typeof value === 'object') return maskTree(value, personal ? PERSONAL : BY_KEY);
  return personal ? maskPersonalScalar(value) : typeof value === 'string' ? maskText(value) : value;
}

/**
 * A deep copy of an event with personal data masked, every copy of a masked value included,
 * within MASK_LIMITS. A normalized OCSF event is read with its class's schema (mask-rules.ts):
 * captions, enum ids, codes, ids, timestamps and metadata stay as they are. Any other event is
 * read by its key names.
 */
export function maskEvent(event: Record<string, unknown>): Record<string, unknown> {
  return maskTree(event, eventPlace(event)) as Record<string, unknown>;
}

/**
 * A raw event and the OCSF event a mapping made of it, masked together (maskEvent each): a
 * value personal in either is masked wherever it is copied in both (the raw `actor.id` that
 * became `user.uid`).
 */
export function maskMapped(
  raw: Record<string, unknown>,
  ocsf: Record<string, unknown> | undefined,
): { raw: Record<string, unknown>; ocsf: Record<string, unknown> | undefined } {
  const rawPlace = eventPlace(raw);
  const ocsfPlace = ocsf ? eventPlace(ocsf) : BY_KEY;
  const values = new Map<string, string>();
  collect(raw, rawPlace, 0, { nodes: 0 }, values);
  if (ocsf) collect(ocsf, ocsfPlace, 0, { nodes: 0 }, values);
  const hunt = hunterOf(values);
  return {
    raw: copy(raw, rawPlace, 0, { nodes: 0 }, hunt) as Record<string, unknown>,
    ocsf: ocsf ? (copy(ocsf, ocsfPlace, 0, { nodes: 0 }, hunt) as Record<string, unknown>) : undefined,
  };
}

/**
 * `tree` with every copy of these (already masked elsewhere) values inside its strings masked
 * too, copying only the containers on the way to a changed string. For masks that name
 * fields (route transforms): the named fields are masked by the caller, their copies here.
 */
export function maskCopies(tree: unknown, maskedValues: readonly unknown[]): unknown {
  const values = new Map<string, string>();
  for (const v of maskedValues) collect(v, PERSONAL, 0, { nodes: 0 }, values);
  const hunt = hunterOf(values);
  return hunt ? replaceCopies(tree, hunt, 0, { nodes: 0 }) : tree;
}

function replaceCopies(value: unknown, hunt: Hunter | typeof ALL, depth: number, budget: { nodes: number }): unknown {
  if (typeof value === 'string') return hunt === ALL ? maskPersonalScalar(value) : hunt(value);
  if (value === null || typeof value !== 'object' || depth >= MASK_LIMITS.depth) return value;
  let out: unknown[] | Record<string, unknown> | null = null;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      if (++budget.nodes > MASK_LIMITS.nodes) break;
      const next = replaceCopies(value[i], hunt, depth + 1, budget);
      if (next !== value[i]) ((out as unknown[] | null) ??= value.slice())[i] = next;
    }
    return out ?? value;
  }
  for (const key of Object.keys(value)) {
    if (++budget.nodes > MASK_LIMITS.nodes) break;
    const cur = (value as Record<string, unknown>)[key];
    const next = replaceCopies(cur, hunt, depth + 1, budget);
    if (next === cur) continue;
    out ??= { ...(value as Record<string, unknown>) };
    if (key === '__proto__')
      Object.defineProperty(out, key, { value: next, enumerable: true, writable: true, configurable: true });
    else (out as Record<string, unknown>)[key] = next;
  }
  return out ?? value;
}

function copy(
  value: unknown,
  place: Place,
  depth: number,
  budget: { nodes: number },
  hunt: Hunter | typeof ALL | null,
): unknown {
  if (value === null || typeof value !== 'object') {
    switch (place.kind) {
      case 'personal':
      case 'text':
        return maskPersonalScalar(value);
      case 'label':
        return value;
      case 'raw':
        return typeof value === 'string' ? maskRaw(value, depth, budget, hunt) : value;
      default:
        return typeof value === 'string' ? maskFree(value, hunt) : value;
    }
  }
  if (depth >= MASK_LIMITS.depth) return Array.isArray(value) ? [] : {};
  if (Array.isArray(value)) {
    const out: unknown[] = [];
    for (const item of value) {
      if (++budget.nodes > MASK_LIMITS.nodes) break;
      out.push(copy(item, place, depth + 1, budget, hunt));
    }
    return out;
  }
  const here = place.refine?.(value as Record<string, unknown>) ?? place;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    if (++budget.nodes > MASK_LIMITS.nodes) break;
    // Under a personal place everything is personal (user: {name, id}) but the labels the schema knows.
    const masked = copy((value as Record<string, unknown>)[key], here.child(key), depth + 1, budget, hunt);
    // A parsed "__proto__" key is data; plain assignment would replace the prototype.
    if (key === '__proto__')
      Object.defineProperty(out, key, { value: masked, enumerable: true, writable: true, configurable: true });
    else out[key] = masked;
  }
  return out;
}
