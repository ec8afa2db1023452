// Redaction of secrets from texts that leave the process (stored errors, logs, answers).
// Two layers. By value: every form in which a known secret can come back from a server that
// echoes a request (raw, base64 at any byte alignment, URL-encoded, JSON-escaped) is hidden,
// and so is any prefix of such a form of at least REDACT_MIN characters, because an echo is
// often cut (by the server, or by our own read limit) in the middle of the value. By pattern:
// whatever follows an Authorization header or a key=value named like a secret, for secrets
// the redactor was not told about.
//
// The work is proportional to the text: the forms are indexed by their first REDACT_MIN
// characters, and each position of the text costs one map lookup.

/**
 * Shortest run of a secret form that is hidden. Three characters of a secret (or 2 bytes of
 * a base64 form) say little about it, while hiding every 3-character coincidence would
 * blank out ordinary words of error messages; four is where a match stops being chance.
 */
export const REDACT_MIN = 4;
export const REDACTED = '[redacted]';

export type Redactor = (text: string) => string;

const ARMOR = /^-----(BEGIN|END) /;

/**
 * A secret whose first `publicPrefix` characters are not secret: the "user:" of a Basic
 * "user:password". A plain-text match must reach REDACT_MIN characters past that prefix, so
 * the user name alone ("weir" in "weir-test") stays readable.
 */
export interface SecretValue {
  value: string;
  publicPrefix: number;
}

interface Form {
  form: string;
  /** Shortest run that counts as a match. */
  min: number;
}

function base64Forms(bytes: Buffer): string[] {
  const out: string[] = [];
  // Aligned: what an Authorization header or a base64 of the value alone carries.
  out.push(bytes.toString('base64'));
  // The value inside a longer base64 text starts at byte offset 1 or 2 of a 3-byte group: the
  // first characters then also encode the bytes before it, and the last one the bytes after.
  for (const shift of [1, 2] as const) {
    const encoded = Buffer.concat([Buffer.alloc(shift), bytes])
      .toString('base64')
      .replace(/=+$/, '');
    const tail = (shift + bytes.length) % 3 === 0 ? 0 : 1;
    out.push(encoded.slice(shift + 1, encoded.length - tail));
  }
  const url = out.map((f) => f.replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, ''));
  return [...out, ...url];
}

// The plain-text encodings, each a function so that the public prefix is measured in the same encoding.
const TEXT_ENCODINGS: ((v: string) => string)[] = [
  (v) => v,
  (v) => encodeURIComponent(v),
  (v) => encodeURIComponent(v).replace(/%[0-9A-F]{2}/g, (h) => h.toLowerCase()),
  (v) => new URLSearchParams({ v }).toString().slice(2),
  (v) => JSON.stringify(v).slice(1, -1),
];

function formsOf(secret: SecretValue): Form[] {
  const out: Form[] = [];
  const head = secret.value.slice(0, secret.publicPrefix);
  for (const encode of TEXT_ENCODINGS)
    out.push({ form: encode(secret.value), min: head ? encode(head).length + REDACT_MIN : REDACT_MIN });
  // A base64 form of the public prefix alone is not ordinary text: hiding it costs nothing.
  for (const form of base64Forms(Buffer.from(secret.value, 'utf8'))) out.push({ form, min: REDACT_MIN });
  // Some servers (PHP's json_encode by default) escape "/" in JSON: base64 has slashes.
  for (const f of [...out]) if (f.form.includes('/')) out.push({ form: f.form.replace(/\//g, '\\/'), min: f.min });
  return out.filter((f) => f.form.length >= f.min);
}

/** Every form in which `value` may come back in a text (the value itself included). */
export function secretForms(value: string): string[] {
  return [...new Set(formsOf({ value, publicPrefix: 0 }).map((f) => f.form))];
}

/** The values to hide for a secret: the whole, and each line of a multi-line one (a PEM key is often echoed wrapped or cut by line). */
function secretParts(secret: SecretValue): SecretValue[] {
  if (!secret.value.includes('\n')) return [secret];
  const lines = secret.value
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l.length >= REDACT_MIN && !ARMOR.test(l))
    .map((value) => ({ value, publicPrefix: 0 }));
  return [secret, ...lines];
}

// Second layer. A header value may start with a scheme word ("Basic", "Bearer", "Splunk"):
// the credential is what follows it.
const AUTH_HEADER = /\b((?:proxy-)?authorization)(["']?\s*[:=]\s*["']?)(?:([A-Za-z][\w.-]*)[ \t]+)?([^\s"',;}]+)/gi;
const KEYED =
  /\b((?:x-amz-security-|session[-_]?|access[-_]?|refresh[-_]?|id[-_]?)?token|api[-_]?key|apikey|password|passwd|pwd|secret(?:[-_]access[-_]key)?|client[-_]secret)(["']?\s*[:=]\s*["']?)([^\s"',;}&<]+)/gi;
// A scheme and a credential-looking word without the header name ("Basic dXNlcjpw...").
// The word after the scheme must look encoded (a digit, "+/=" or a capital past its first
// letter): "Basic authentication" stays readable.
const SCHEME =
  /\b(Basic|Bearer|Splunk|ApiKey)[ \t]+[A-Za-z0-9+/=._~-](?=[A-Za-z0-9+/=._~-]*[A-Z0-9+/=])[A-Za-z0-9+/=._~-]{7,}/g;

/** Hides what follows names that announce a secret (the layer for secrets the caller did not name). */
export function redactPatterns(text: string): string {
  return text
    .replace(
      AUTH_HEADER,
      (_m, name: string, sep: string, scheme: string | undefined) =>
        `${name}${sep}${scheme ? `${scheme} ` : ''}${REDACTED}`,
    )
    .replace(KEYED, (_m, name: string, sep: string) => `${name}${sep}${REDACTED}`)
    .replace(SCHEME, (_m, scheme: string) => `${scheme} ${REDACTED}`);
}

/**
 * A redactor for these secret values (empty and whitespace-only values are ignored). Apply it
 * to a text before cutting it: a cut made after redaction can only shorten a marker.
 */
export function createRedactor(secrets: Iterable<string | SecretValue>): Redactor {
  const index = new Map<string, Form[]>();
  for (const raw of secrets) {
    const secret = typeof raw === 'string' ? { value: raw, publicPrefix: 0 } : raw;
    if (typeof secret.value !== 'string' || secret.value.slice(secret.publicPrefix).trim() === '') continue;
    for (const part of secretParts(secret)) {
      for (const f of formsOf(part)) {
        const key = f.form.slice(0, REDACT_MIN);
        const list = index.get(key);
        if (!list) index.set(key, [f]);
        else if (!list.some((x) => x.form === f.form && x.min === f.min)) list.push(f);
      }
    }
  }
  if (index.size === 0) return redactPatterns;
  return (text: string) => redactPatterns(redactValues(text, index));
}

/** Replaces every run of the text that is a prefix (>= REDACT_MIN) of a form; overlapping or touching runs become one marker. */
function redactValues(text: string, index: Map<string, Form[]>): string {
  let out = '';
  let copied = 0;
  let runStart = -1;
  let runEnd = -1;
  for (let i = 0; i + REDACT_MIN <= text.length; i++) {
    const candidates = index.get(text.substr(i, REDACT_MIN));
    if (!candidates) continue;
    let best = 0;
    for (const { form, min } of candidates) {
      let m = REDACT_MIN;
      while (m < form.length && i + m < text.length && text.charCodeAt(i + m) === form.charCodeAt(m)) m++;
      if (m >= min && m > best) best = m;
    }
    if (best === 0) continue;
    if (i <= runEnd) {
      runEnd = Math.max(runEnd, i + best);
      continue;
    }
    if (runStart >= 0) {
      out += text.slice(copied, runStart) + REDACTED;
      copied = runEnd;
    }
    runStart = i;
    runEnd = i + best;
  }
  if (runStart < 0) return text;
  return out + text.slice(copied, runStart) + REDACTED + text.slice(runEnd);
}

/** Most characters of a text that are read to build a short message of it. */
const WINDOW = 16_384;

/**
 * Redacts, then cuts to at most `max` characters (an ellipsis marks the cut). Only the first
 * 16 KiB are read: a secret cut at that point is a prefix of its form and still hidden.
 */
export function redactAndCut(redact: Redactor, text: string, max: number): string {
  const clean = redact(text.length > WINDOW ? text.slice(0, WINDOW) : text);
  return clean.length > max ? `${clean.slice(0, max - 1)}…` : clean;
}
