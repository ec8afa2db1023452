// The check of redaction tests: which pieces of a secret can still be read in a text, in any
// encoding a server may have echoed it in. Every run of REDACT_MIN characters of the secret
// is looked for in the text as it is, URL-decoded, JSON-unescaped, and in every base64 (or
// base64url) run of the text decoded at each of its four character alignments.
import { REDACT_MIN } from '../../src/core/redaction.js';

function grams(secret: string): Set<string> {
  const out = new Set<string>();
  for (let i = 0; i + REDACT_MIN <= secret.length; i++) out.add(secret.slice(i, i + REDACT_MIN));
  return out;
}

function urlDecoded(text: string): string {
  return text.replace(/\+/g, ' ').replace(/(%[0-9A-Fa-f]{2})+/g, (run) => {
    try {
      return decodeURIComponent(run);
    } catch {
      return run;
    }
  });
}

function jsonUnescaped(text: string): string {
  return text.replace(/\\(["\\/bfnrt]|u[0-9a-fA-F]{4})/g, (_m, c: string) => {
    if (c.startsWith('u')) return String.fromCharCode(parseInt(c.slice(1), 16));
    return ({ b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' } as Record<string, string>)[c] ?? c;
  });
}

function base64Decodings(text: string): string[] {
  const out: string[] = [];
  for (const run of text.match(/[A-Za-z0-9+/_-]{4,}/g) ?? []) {
    for (let skip = 0; skip < 4 && run.length - skip >= 4; skip++)
      out.push(Buffer.from(run.slice(skip), 'base64').toString('latin1'));
  }
  return out;
}

/** Pieces of `secret` (REDACT_MIN characters each) readable in `text`; empty when none. */
export function leaks(text: string, secret: string): string[] {
  const wanted = grams(secret);
  // The secret's bytes as latin1 text, to compare with base64-decoded bytes.
  const wantedBytes = grams(Buffer.from(secret, 'utf8').toString('latin1'));
  const plain = [text, urlDecoded(text), jsonUnescaped(text), urlDecoded(jsonUnescaped(text))];
  const found = new Set<string>();
  for (const t of plain)
    for (let i = 0; i + REDACT_MIN <= t.length; i++)
      if (wanted.has(t.slice(i, i + REDACT_MIN))) found.add(t.slice(i, i + REDACT_MIN));
  for (const t of plain.flatMap(base64Decodings)) {
    for (let i = 0; i + REDACT_MIN <= t.length; i++)
      if (wantedBytes.has(t.slice(i, i + REDACT_MIN))) found.add(`base64 of ${t.slice(i, i + REDACT_MIN)}`);
  }
  return [...found];
}
