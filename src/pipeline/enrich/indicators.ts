// Reading indicator feeds: what kind of indicator a text is (by its shape alone), and the
// records of a CSV text (RFC 4180, with the `#` comment lines feeds put around their data).
import { isIP } from 'node:net';

export const INDICATOR_TYPES = ['ipv4', 'ipv6', 'cidr', 'domain', 'url', 'md5', 'sha1', 'sha256'] as const;
export type IndicatorType = (typeof INDICATOR_TYPES)[number];

const URL_SHAPE = /^[a-z][a-z0-9+.-]*:\/\/\S+$/i;
const HEX = /^[0-9a-f]+$/i;
const HASH_BY_LENGTH: Record<number, IndicatorType> = { 32: 'md5', 40: 'sha1', 64: 'sha256' };
// Labels of letters, digits, hyphens (and underscores, which real DNS names carry), a last
// label that is alphabetic or punycode: "1.2.3" and "10.0.0.999" are not domains.
const DOMAIN = /^(?=.{1,253}$)(?:[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?\.)+(?:[a-z]{2,63}|xn--[a-z0-9-]{1,59})$/i;

/** The indicator's type, or null when its shape is none of them (defanged forms such as hxxp:// or [.] are not undone). */
export function classifyIndicator(text: string): IndicatorType | null {
  const ip = isIP(text);
  if (ip === 4) return 'ipv4';
  if (ip === 6) return 'ipv6';
  const slash = text.indexOf('/');
  if (slash > 0 && !text.includes('://')) {
    const family = isIP(text.slice(0, slash));
    const bits = text.slice(slash + 1);
    if (family && /^\d{1,3}$/.test(bits) && Number(bits) <= (family === 4 ? 32 : 128)) return 'cidr';
    return null;
  }
  if (URL_SHAPE.test(text)) return 'url';
  if (HEX.test(text)) return HASH_BY_LENGTH[text.length] ?? null;
  if (DOMAIN.test(text.endsWith('.') ? text.slice(0, -1) : text)) return 'domain';
  return null;
}

export interface CsvRecord {
  /** 1-based line where the record starts. */
  line: number;
  cells: string[];
}

/**
 * The records of a CSV text, and the comment lines (a `#` at the start of a record) met
 * before the first record: some feeds (abuse.ch) put their header there, commented out.
 */
export function readCsv(text: string): { records: CsvRecord[]; leadingComments: string[] } {
  const records: CsvRecord[] = [];
  const leadingComments: string[] = [];
  let i = 0;
  let line = 1;
  const n = text.length;
  while (i < n) {
    const start = line;
    if (text[i] === '#') {
      const end = text.indexOf('\n', i);
      const comment = text.slice(i + 1, end < 0 ? n : end).replace(/\r$/, '');
      if (!records.length) leadingComments.push(comment);
      i = end < 0 ? n : end + 1;
      line++;
      continue;
    }
    const cells: string[] = [];
    let cell = '';
    let quoted = false;
    for (; i < n; i++) {
      const c = text[i]!;
      if (quoted) {
        if (c === '"' && text[i + 1] === '"') {
          cell += '"';
          i++;
        } else if (c === '"') quoted = false;
        else {
          if (c === '\n') line++;
          cell += c;
        }
      } else if (c === '"' && cell === '') quoted = true;
      else if (c === ',') {
        cells.push(cell);
        cell = '';
      } else if (c === '\n') {
        i++;
        line++;
        break;
      } else if (c !== '\r' || text[i + 1] !== '\n') cell += c;
    }
    cells.push(cell);
    if (cells.length > 1 || cells[0]!.trim() !== '') records.push({ line: start, cells });
  }
  return { records, leadingComments };
}
