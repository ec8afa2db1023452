// Masking personal data in what the product shows back to people (drift examples, field
// discovery, tap, capture export): keeps a hint of the value's shape (`j***@example.com`,
// `192.0.2.x`) so a mapping author can tell what a field holds, never the value itself. A
// value masked in one field is masked wherever else it appears in the event (observables,
// message, raw_data, inside longer strings). Work is bounded (depth, node and string caps,
// one regular expression per event for the copies) so a hostile event cannot make masking
// expensive.
import { isIPv4, isIPv6 } from 'node:net';

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

// Compared against the key lowercased with every non-alphanumeric character removed.
const PERSONAL_SUBSTRINGS = [
  'mail', // email, e_mail, mailbox, emailAddress
  'username',
  'userprincipal',
  'principalname',
  'alternateid',
  'login',
  'displayname',
  'fullname',
  'firstname',
  'lastname',
  'givenname',
  'surname',
  'familyname',
  'nickname',
  'actorname',
  'phone',
  'mobile',
  'msisdn',
  'address', // ipAddress, sourceIPAddress, macAddress, street address
  'ipaddr',
  'ipv4',
  'ipv6',
  'remoteaddr',
  'forwardedfor',
  'password',
  'passwd',
  'secret',
  'apikey',
  'accesskey',
  'authorization',
  'cookie',
  'ssn',
  'birth',
  'creditcard',
  'cardnumber',
];
// Run-together spellings that end in "ip" ("zip", "ship" must not match).
const IP_SUFFIXES = [
  'clientip',
  'remoteip',
  'sourceip',
  'srcip',
  'dstip',
  'destip',
  'destinationip',
  'hostip',
  'publicip',
  'privateip',
  'localip',
  'callerip',
  'userip',
  'realip',
  'peerip',
];
// Whole words (from snake, kebab and camel case) that name personal data on their own.
const PERSONAL_WORDS = new Set(['ip', 'ipv4', 'ipv6', 'ips', 'user', 'users', 'upn', 'email', 'phone', 'addr']);
// Not personal although they contain a personal word.
const NOT_PERSONAL = new Set(['useragent', 'usertype', 'usercount', 'mailer']);

const keyCache = new Map<string, boolean>();
const KEY_CACHE_MAX = 10_000;

/** True when a key (one segment, any case and separator style) names personal data. */
export function isPersonalKey(key: string): boolean {
  const cached = keyCache.get(key);
  if (cached !== undefined) return cached;
  const result = classify(key);
  if (keyCache.size >= KEY_CACHE_MAX) keyCache.clear();
  keyCache.set(key, result);
  return result;
}

function classify(key: string): boolean {
  const flat = key.toLowerCase().replace(/[^a-z0-9]/g, '');
  if (flat === '' || NOT_PERSONAL.has(flat)) return false;
  if (PERSONAL_WORDS.has(flat)) return true;
  if (PERSONAL_SUBSTRINGS.some((s) => flat.includes(s))) return true;
  if (IP_SUFFIXES.some((s) => flat.endsWith(s))) return true;
  const words = key
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/);
  return words.some((w) => PERSONAL_WORDS.has(w));
}

/** True when any segment of a dotted path (`user.name`, `a.list[].ip`) names personal data. */
export function isPersonalPath(path: string): boolean {
  for (const segment of path.split('.')) {
    if (isPersonalKey(segment.replace(/\[\d*\]/g, ''))) return true;
  }
  return false;
}

const EMAIL_RE = /([A-Za-z0-9._%+-])[A-Za-z0-9._%+-]*@([A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,})/g;
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

/** A value known to be personal: only its shape survives. */
function maskPersonalScalar(value: unknown): unknown {
  if (typeof value === 'number' || typeof value === 'bigint') return MASK;
  if (typeof value !== 'string') return value; // booleans and null say nothing about a person
  if (value === '') return value;
  // node:net's checks cost microseconds; most values cannot be addresses at all.
  if (value.includes('.') && isIPv4(value)) return `${value.slice(0, value.lastIndexOf('.'))}.x`;
  if (value.includes(':') && isIPv6(value)) return maskIpv6(value);
  const at = value.indexOf('@');
  if (at > 0) {
    const masked = maskText(value);
    if (masked !== value) return masked;
  }
  return value.length > 1 ? `${value[0]}${MASK}` : MASK;
}

/** Finds the copies of masked values in a string and masks each as its field was masked. */
type Hunter = ((text: string) => string) & { longest: number };
/** Up to this many values, each string is scanned once per value; above, with one regular expression. */
const FEW = 8;
/** Every string masked whole: too many distinct values to hunt. */
const ALL = 'all';

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

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
      for (let i = 0; i < sorted.length; i++) if (out.includes(sorted[i]!)) out = out.split(sorted[i]!).join(masks[i]!);
      return out;
    }) as Hunter;
  } else {
    // One pass over each string whatever the number of values (up to COPY_MAX).
    const re = new RegExp(sorted.map(escapeRe).join('|'), 'g');
    const replace = (m: string) => values.get(m) ?? MASK;
    hunt = ((text: string) => (text.length < shortest ? text : text.replace(re, replace))) as Hunter;
  }
  hunt.longest = sorted[0]!.length;
  return hunt;
}

/** The scalar values `copy` would mask as personal, as text, with what each becomes (within the same limits). */
function collect(
  value: unknown,
  personal: boolean,
  depth: number,
  budget: { nodes: number },
  out: Map<string, string>,
): void {
  if (value === null || typeof value !== 'object') {
    if (!personal) return;
    const text =
      typeof value === 'string' ? value : typeof value === 'number' || typeof value === 'bigint' ? String(value) : '';
    if (text.length >= COPY_MIN && !out.has(text)) out.set(text, String(maskPersonalScalar(value)));
    return;
  }
  if (depth >= MASK_LIMITS.depth) return;
  if (Array.isArray(value)) {
    for (const item of value) {
      if (++budget.nodes > MASK_LIMITS.nodes) return;
      collect(item, personal, depth + 1, budget, out);
    }
    return;
  }
  for (const key of Object.keys(value)) {
    if (++budget.nodes > MASK_LIMITS.nodes) return;
    collect((value as Record<string, unknown>)[key], personal || isPersonalKey(key), depth + 1, budget, out);
  }
}

/** A string that is not personal by its key: copies of masked values, then e-mail, IP and digit runs. */
function maskFree(text: string, hunt: Hunter | typeof ALL | null): string {
  if (hunt === ALL) return String(maskPersonalScalar(text));
  if (!hunt) return maskText(text);
  // Hunt on the text before maskText cuts it, but not further than the cut can show.
  const limit = MASK_LIMITS.stringLength + hunt.longest;
  return maskText(hunt(text.length > limit ? text.slice(0, limit) : text));
}

function maskTree(value: unknown, personal: boolean): unknown {
  const values = new Map<string, string>();
  collect(value, personal, 0, { nodes: 0 }, values);
  return copy(value, personal, 0, { nodes: 0 }, hunterOf(values));
}

/**
 * One value seen under `key` (a key or a dotted path): masked as personal data when the
 * key names it, else with personal data inside strings masked. Objects and arrays are
 * masked deeply, within MASK_LIMITS.
 */
export function maskValue(key: string, value: unknown): unknown {
  const personal = key.includes('.') ? isPersonalPath(key) : isPersonalKey(key);
  if (value !== null && typeof value === 'object') return maskTree(value, personal);
  return personal ? maskPersonalScalar(value) : typeof value === 'string' ? maskText(value) : value;
}

/** A deep copy of an event with personal data masked (see maskValue), every copy of a masked value included, within MASK_LIMITS. */
export function maskEvent(event: Record<string, unknown>): Record<string, unknown> {
  return maskTree(event, false) as Record<string, unknown>;
}

/**
 * `tree` with every copy of these (already masked elsewhere) values inside its strings masked
 * too, copying only the containers on the way to a changed string. For masks that name
 * fields (route transforms): the named fields are masked by the caller, their copies here.
 */
export function maskCopies(tree: unknown, maskedValues: readonly unknown[]): unknown {
  const values = new Map<string, string>();
  for (const v of maskedValues) collect(v, true, 0, { nodes: 0 }, values);
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
  personal: boolean,
  depth: number,
  budget: { nodes: number },
  hunt: Hunter | typeof ALL | null,
): unknown {
  if (value === null || typeof value !== 'object') {
    return personal ? maskPersonalScalar(value) : typeof value === 'string' ? maskFree(value, hunt) : value;
  }
  if (depth >= MASK_LIMITS.depth) return Array.isArray(value) ? [] : {};
  if (Array.isArray(value)) {
    const out: unknown[] = [];
    for (const item of value) {
      if (++budget.nodes > MASK_LIMITS.nodes) break;
      out.push(copy(item, personal, depth + 1, budget, hunt));
    }
    return out;
  }
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    if (++budget.nodes > MASK_LIMITS.nodes) break;
    // Under a personal key everything is personal (user: {name, id}).
    const masked = copy(
      (value as Record<string, unknown>)[key],
      personal || isPersonalKey(key),
      depth + 1,
      budget,
      hunt,
    );
    // A parsed "__proto__" key is data; plain assignment would replace the prototype.
    if (key === '__proto__')
      Object.defineProperty(out, key, { value: masked, enumerable: true, writable: true, configurable: true });
    else out[key] = masked;
  }
  return out;
}
