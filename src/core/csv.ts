// CSV out (RFC 4180): comma-separated, CRLF line ends, a field quoted when it holds a
// comma, a quote or a line break, quotes doubled. Text that a spreadsheet would run as a
// formula (starting with = + - @, or a tab or carriage return) is prefixed with a single
// quote so that opening an export never executes what a user typed (OWASP CSV injection).

const FORMULA_START = /^[=+\-@\t\r]/;
const NEEDS_QUOTES = /[",\r\n]/;

export type CsvValue = string | number | boolean | Date | null | undefined;

export function csvCell(value: CsvValue): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  let text = value instanceof Date ? value.toISOString() : value;
  if (FORMULA_START.test(text)) text = `'${text}`;
  return NEEDS_QUOTES.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export function csvRow(values: readonly CsvValue[]): string {
  return `${values.map(csvCell).join(',')}\r\n`;
}

/**
 * Turns rows into CSV text chunks of about `chunkBytes`, header first, without holding
 * more than one chunk: the caller streams them as they come.
 */
export async function* csvChunks<T>(
  header: readonly string[],
  rows: AsyncIterable<T>,
  toValues: (row: T) => readonly CsvValue[],
  chunkBytes = 64 * 1024,
): AsyncGenerator<string> {
  let chunk = csvRow(header);
  for await (const row of rows) {
    chunk += csvRow(toValues(row));
    if (chunk.length >= chunkBytes) {
      yield chunk;
      chunk = '';
    }
  }
  if (chunk) yield chunk;
}
