// Glob keys ("*.example.com", "host-??.corp") matched case-insensitively, since what they are
// written for (host names, domains, user names, process names on Windows) mostly compares so.
// `*` matches any run of characters (also none), `?` exactly one UTF-16 code unit; there is no
// escape, character class or brace. Keys without a wildcard are answered by a Map first. The
// rest are tried in order of specificity, so a miss costs one match per pattern: the cost grows
// with the number of patterns (not with the number of exact keys), and recent answers are
// remembered because the same few values repeat from event to event.
import type { Row } from './types.js';

interface Pattern {
  text: string; // lower-cased
  literal: number; // characters other than * and ?
  stars: number;
  prefix: string; // the literal text before the first wildcard and after the last one:
  suffix: string; // cheap tests that turn most patterns down before globMatch
  row: Row;
}

/** Answers remembered; cleared when full (the values of a busy feed repeat within seconds). */
const MEMO_SIZE = 4096;
const MEMO_MAX_KEY = 256;
const MISS = null;

export function hasWildcard(key: string): boolean {
  return key.includes('*') || key.includes('?');
}

/**
 * Whether `pattern` matches all of `s` (both lower-cased). Greedy with one backtrack point: the
 * last `*` seen. O(|s| x |pattern|) at worst, never exponential, unlike a backtracking regex.
 */
export function globMatch(pattern: string, s: string): boolean {
  let p = 0;
  let i = 0;
  let starP = -1;
  let starI = 0;
  const pn = pattern.length;
  const n = s.length;
  while (i < n) {
    const c = p < pn ? pattern.charCodeAt(p) : -1;
    if (c === 42 /* * */) {
      starP = p++;
      starI = i;
    } else if (c === 63 /* ? */ || (c === s.charCodeAt(i) && c !== -1)) {
      p++;
      i++;
    } else if (starP >= 0) {
      p = starP + 1;
      i = ++starI;
    } else {
      return false;
    }
  }
  while (p < pn && pattern.charCodeAt(p) === 42) p++;
  return p === pn;
}

/**
 * Specificity, most specific first: more literal characters; then fewer `*` (a `?` pins a
 * length, a `*` does not); then the earlier pattern of the table. So for "www.example.com",
 * "www.example.*" (13 literal) beats "*.example.com" (12 literal) beats "*".
 */
function bySpecificity(a: Pattern, b: Pattern): number {
  return b.literal - a.literal || a.stars - b.stars;
}

export class WildcardIndex {
  private readonly exact = new Map<string, Row>();
  private readonly byText = new Map<string, Pattern>();
  private patterns: Pattern[] = [];
  private memo = new Map<string, Row | null>();

  get size(): number {
    return this.exact.size + this.byText.size;
  }

  get patternCount(): number {
    return this.byText.size;
  }

  /** The last row of a key wins, as in every table. */
  add(key: string, row: Row): void {
    const text = key.toLowerCase();
    if (!hasWildcard(text)) {
      this.exact.set(text, row);
      return;
    }
    const existing = this.byText.get(text);
    if (existing) {
      existing.row = row;
      return;
    }
    let literal = 0;
    let stars = 0;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c === 42) stars++;
      else if (c !== 63) literal++;
    }
    const first = Math.min(...['*', '?'].map((w) => text.indexOf(w)).filter((x) => x >= 0));
    const last = Math.max(text.lastIndexOf('*'), text.lastIndexOf('?'));
    this.byText.set(text, { text, literal, stars, prefix: text.slice(0, first), suffix: text.slice(last + 1), row });
  }

  seal(): this {
    this.patterns = [...this.byText.values()].sort(bySpecificity); // stable: table order breaks ties
    this.memo.clear();
    return this;
  }

  get(key: string): Row | undefined {
    const hit = this.exact.get(key);
    if (hit !== undefined) return hit;
    const lower = key.toLowerCase();
    if (lower !== key) {
      const h = this.exact.get(lower);
      if (h !== undefined) return h;
    }
    if (this.patterns.length === 0) return undefined;
    if (lower.length > MEMO_MAX_KEY) return this.match(lower) ?? undefined;
    let found = this.memo.get(lower);
    if (found === undefined) {
      if (this.memo.size >= MEMO_SIZE) this.memo.clear();
      found = this.match(lower);
      this.memo.set(lower, found);
    }
    return found ?? undefined;
  }

  private match(lower: string): Row | null {
    for (const p of this.patterns) {
      if (p.literal > lower.length) continue;
      if (p.prefix.length > 0 && !lower.startsWith(p.prefix)) continue;
      if (p.suffix.length > 0 && !lower.endsWith(p.suffix)) continue;
      if (globMatch(p.text, lower)) return p.row;
    }
    return MISS;
  }
}
