// Text that PostgreSQL can store: no NUL (U+0000), which text and jsonb refuse, and no
// unpaired UTF-16 surrogate, which jsonb refuses and UTF-8 cannot encode. Shared by the
// HTTP input contract (refuse it) and the audit trail (record it, escaped).

/** Why a string cannot be stored, or undefined when it can. */
export function textProblem(s: string): string | undefined {
  if (s.includes('\u0000')) return 'contains a NUL character (U+0000), which cannot be stored';
  if (!s.isWellFormed())
    return 'contains an unpaired UTF-16 surrogate (such as \\ud800), which is not text and cannot be stored';
  return undefined;
}

/** NUL and unpaired surrogates written as \uXXXX escapes: what can be logged and stored of a value. */
export function escapeText(s: string): string {
  if (!s.includes('\u0000') && s.isWellFormed()) return s;
  let out = '';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    const paired = c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00;
    if (paired) {
      out += s[i]! + s[i + 1]!;
      i++;
    } else if (c === 0 || (c >= 0xd800 && c <= 0xdfff)) {
      out += `\\u${c.toString(16).padStart(4, '0')}`;
    } else out += s[i];
  }
  return out;
}

/** Every string and key of a JSON-like value escaped (escapeText); other values as they are. */
export function escapeDeep(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return escapeText(value);
  if (depth > 64 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((v) => escapeDeep(v, depth + 1));
  if (value instanceof Date) return value;
  return Object.fromEntries(
    Object.entries(value as Record<string, unknown>).map(([k, v]) => [escapeText(k), escapeDeep(v, depth + 1)]),
  );
}
