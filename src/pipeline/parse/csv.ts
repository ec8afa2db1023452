// One CSV record (RFC 4180) read into the columns a mapping declares: Palo Alto, Cisco and
// cloud flow logs send one record per line. Quoted fields may hold the delimiter and doubled
// quotes. Hand-written rather than csv-parse: that library reads files and streams, and its
// per-call setup costs more than reading one line (bench/parsers.ts measures both).
import { fieldLimit, ParseError, putField, type Fields } from './errors.js';

export interface CsvOptions {
  columns: readonly string[];
  delimiter?: string;
  quote?: string;
  /** More fields than columns: ignored when true, else a failure. */
  allowExtra?: boolean;
  maxFields: number;
}

/** The fields of one record, unquoted. */
export function splitCsv(text: string, delimiter = ',', quote = '"', maxFields = Number.POSITIVE_INFINITY): string[] {
  const limit = fieldLimit(maxFields);
  const fields: string[] = [];
  const n = text.length;
  let i = 0;
  for (;;) {
    limit(fields.length + 1, i + 1);
    if (text[i] === quote) {
      const open = i;
      i++;
      let buf = '';
      let from = i;
      for (;;) {
        const close = text.indexOf(quote, i);
        if (close < 0) throw new ParseError('unterminated quoted field', open + 1);
        if (text[close + 1] === quote) {
          buf += text.slice(from, close + 1);
          i = from = close + 2;
          continue;
        }
        buf += text.slice(from, close);
        i = close + 1;
        break;
      }
      fields.push(buf);
      if (i >= n) return fields;
      if (!text.startsWith(delimiter, i)) throw new ParseError('expected a delimiter after a quoted field', i + 1);
      i += delimiter.length;
      continue;
    }
    const next = text.indexOf(delimiter, i);
    if (next < 0) {
      fields.push(text.slice(i));
      return fields;
    }
    fields.push(text.slice(i, next));
    i = next + delimiter.length;
  }
}

/** The record as {column: value}; columns named "" or "_" are skipped, empty fields left out. */
export function parseCsv(text: string, options: CsvOptions): Fields {
  const { columns } = options;
  // Without allowExtra a record longer than the header fails where its extra field starts.
  const max = options.allowExtra ? options.maxFields : Math.min(options.maxFields, columns.length);
  const values = splitCsv(text, options.delimiter ?? ',', options.quote ?? '"', max);
  const out: Fields = {};
  const m = Math.min(values.length, columns.length);
  for (let c = 0; c < m; c++) {
    const name = columns[c]!;
    const v = values[c]!;
    if (name === '' || name === '_' || v === '') continue;
    putField(out, name, v, 'replace');
  }
  return out;
}
