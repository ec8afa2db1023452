// key=value text (FortiGate, Sophos, many appliances): `a=1 b="two words" c='x'`. Values
// may be quoted with " or ' (a backslash escapes the quote and itself inside them); unquoted
// values run to the next pair separator, so they may hold the value separator (`url=/a?b=c`).
import { fieldLimit, ParseError, putField, type Fields } from './errors.js';

export interface KvOptions {
  /** Between pairs; default: any run of spaces and tabs. */
  pairSeparator?: string;
  /** Between a key and its value; default `=`. */
  valueSeparator?: string;
  /** Characters that may quote a value; default `"'`. */
  quotes?: string;
  maxFields: number;
}

const isBlank = (c: string | undefined) => c === ' ' || c === '\t';

export function parseKv(text: string, options: KvOptions): Fields {
  const pair = options.pairSeparator;
  const eq = options.valueSeparator ?? '=';
  const quotes = options.quotes ?? '"\'';
  const limit = fieldLimit(options.maxFields);
  const out: Fields = {};
  const n = text.length;
  const atPair = (i: number) => (pair === undefined ? isBlank(text[i]) : text.startsWith(pair, i));
  const pairLen = pair === undefined ? 1 : pair.length;
  let count = 0;
  let i = 0;
  for (;;) {
    while (i < n && (atPair(i) || (pair !== undefined && isBlank(text[i])))) i += atPair(i) ? pairLen : 1;
    if (i >= n) return out;
    const keyStart = i;
    while (i < n && !text.startsWith(eq, i) && !atPair(i)) i++;
    if (i >= n || !text.startsWith(eq, i)) throw new ParseError(`expected "${eq}" after a key`, i + 1);
    const key = text.slice(keyStart, i).trim();
    if (key === '') throw new ParseError('empty key', keyStart + 1);
    i += eq.length;
    let value: string;
    const q = text[i];
    if (q !== undefined && quotes.includes(q)) {
      const open = i;
      i++;
      let buf = '';
      let from = i;
      for (;;) {
        if (i >= n) throw new ParseError('unterminated quoted value', open + 1);
        const c = text[i];
        if (c === '\\' && (text[i + 1] === q || text[i + 1] === '\\')) {
          buf += text.slice(from, i);
          from = i + 1;
          i += 2;
          continue;
        }
        if (c === q) break;
        i++;
      }
      value = buf + text.slice(from, i);
      i++;
      if (i < n && !atPair(i) && !(pair !== undefined && isBlank(text[i]))) throw new ParseError('expected a separator after a quoted value', i + 1);
    } else {
      const start = i;
      while (i < n && !atPair(i)) i++;
      value = pair === undefined ? text.slice(start, i) : text.slice(start, i).trim();
    }
    limit(++count, keyStart + 1);
    putField(out, key, value);
  }
}
