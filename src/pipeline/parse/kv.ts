// key=value text (FortiGate, Sophos, many appliances): `a=1 b="two words" c='x'`. Values
// may be quoted with " or ' (a backslash escapes the quote and itself inside them; with
// doubledQuotes a quote written twice stands for one, as in CSV: `ua="say ""hi"""`); unquoted
// values run to the next pair separator, so they may hold the value separator (`url=/a?b=c`).
// The scan moves by indexOf from separator to separator, never character by character.
import { fieldLimit, ParseError, putField, type Fields } from './errors.js';

export interface KvOptions {
  /** Between pairs; default: any run of spaces and tabs. */
  pairSeparator?: string;
  /** Between a key and its value; default `=`. */
  valueSeparator?: string;
  /** Characters that may quote a value; default `"'`. */
  quotes?: string;
  /** Inside a quoted value, the quote written twice stands for one (`""` as in CSV). */
  doubledQuotes?: boolean;
  /**
   * Real lines are cut and decorated in transit: a quoted value left open at the end of the
   * text (a relay's size limit cut the line) runs to the end, and characters glued after a
   * closing quote (a shipper's trailer such as `|`) are kept with the value instead of failing.
   */
  lenient?: boolean;
  maxFields: number;
}

const SPACE = 0x20;
const TAB = 0x09;
const BACKSLASH = 0x5c;

const unescapers = new Map<string, RegExp>();
/** `\\q` and `\\\\` inside a value quoted with q. */
function unescaper(q: string): RegExp {
  let re = unescapers.get(q);
  if (!re) unescapers.set(q, (re = new RegExp(`\\\\([${q.replace(/[\\\]^-]/g, '\\$&')}\\\\])`, 'g')));
  return re;
}

export function parseKv(text: string, options: KvOptions): Fields {
  const pair = options.pairSeparator;
  const eq = options.valueSeparator ?? '=';
  const quotes = options.quotes ?? '"\'';
  const doubled = options.doubledQuotes === true;
  const lenient = options.lenient === true;
  const limit = fieldLimit(options.maxFields);
  const out: Fields = {};
  const n = text.length;
  let tabAt = pair === undefined ? text.indexOf('\t') : -1;
  /** Where the pair separator after `i` starts (n when none). */
  const separatorFrom = (i: number): number => {
    if (pair !== undefined) {
      const at = text.indexOf(pair, i);
      return at < 0 ? n : at;
    }
    const space = text.indexOf(' ', i);
    if (tabAt >= 0 && tabAt < i) tabAt = text.indexOf('\t', i);
    const s = space < 0 ? n : space;
    return tabAt >= 0 && tabAt < s ? tabAt : s;
  };
  const blank = (c: number) => c === SPACE || c === TAB;
  const skip = (i: number): number => {
    for (;;) {
      if (i >= n) return i;
      if (pair !== undefined && text.startsWith(pair, i)) i += pair.length;
      else if (blank(text.charCodeAt(i))) i++;
      else return i;
    }
  };
  let count = 0;
  let i = skip(0);
  while (i < n) {
    const keyStart = i;
    const sep = separatorFrom(i);
    const at = text.indexOf(eq, i);
    if (at < 0 || at > sep) throw new ParseError(`expected "${eq}" after a key`, Math.min(sep, n) + 1);
    const key = text.slice(keyStart, at).trim();
    if (key === '') throw new ParseError('empty key', keyStart + 1);
    i = at + eq.length;
    let value: string;
    const q = text[i];
    if (q !== undefined && quotes.includes(q)) {
      const open = i;
      let close = text.indexOf(q, i + 1);
      for (;;) {
        if (close < 0 && lenient) {
          close = n;
          break;
        }
        if (close < 0) throw new ParseError('unterminated quoted value', open + 1);
        let slashes = 0;
        while (text.charCodeAt(close - 1 - slashes) === BACKSLASH && close - 1 - slashes > open) slashes++;
        if (slashes % 2 === 0) {
          if (!doubled || text[close + 1] !== q) break;
          close = text.indexOf(q, close + 2);
          continue;
        }
        close = text.indexOf(q, close + 1);
      }
      const raw = text.slice(open + 1, close);
      value = raw.includes('\\') ? raw.replace(unescaper(q), '$1') : raw;
      if (doubled && value.includes(q + q)) value = value.split(q + q).join(q);
      i = close + 1;
      if (i < n && !(pair !== undefined ? text.startsWith(pair, i) : false) && !blank(text.charCodeAt(i))) {
        if (!lenient) throw new ParseError('expected a separator after a quoted value', i + 1);
        const end = separatorFrom(i);
        value += text.slice(i, end);
        i = end;
      }
    } else {
      const end = separatorFrom(i);
      value = pair === undefined ? text.slice(i, end) : text.slice(i, end).trim();
      i = end;
    }
    limit(++count, keyStart + 1);
    putField(out, key, value);
    i = skip(i);
  }
  return out;
}
