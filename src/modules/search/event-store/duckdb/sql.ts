// The SQL pieces every part of the condition compiler (condition.ts) writes with: literals, the
// tests on a JSON value's text, and the compiling context.
// A JSON value's text as json_extract writes it (minified; JSON.stringify's in the h_* columns)
// starts with its type: tests read that first character rather than call json_type, which parses
// the whole value again (a long message costs).
export const jText = (e: string) => `CAST(${e} AS VARCHAR)`;
export const jIsString = (e: string) => `starts_with(${jText(e)}, '"')`;
export const jIsArray = (e: string) => `starts_with(${jText(e)}, '[')`;
export const jIsNumber = (e: string) =>
  `left(${jText(e)}, 1) IN ('-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9')`;
/** The text of a JSON string (escapes read). */
export const jString = (e: string) => `json_extract_string(${e}, '$')`;
/** Strings whose JSON text DuckDB (yyjson) writes as JSON.stringify does: none with a control character (yyjson's \u001F is upper-case). */
export const isPlainText = (t: string) => ![...t].some((c) => c.charCodeAt(0) < 0x20);

/**
 * A SQL string literal: single quotes doubled; NUL, which DuckDB's parser cannot take inside a
 * literal, joined in as chr(0). Throws on text DuckDB cannot hold (an unpaired surrogate).
 */
export function sqlString(s: string): string {
  if (!s.isWellFormed())
    throw new RangeError('text with an unpaired UTF-16 surrogate cannot be compared in the event store');
  const parts = s.split('\u0000').map((p) => `'${p.replaceAll("'", "''")}'`);
  return parts.length === 1 ? parts[0]! : `(${parts.join(' || chr(0) || ')})`;
}

export function sqlDouble(n: number): string {
  if (!Number.isFinite(n)) throw new RangeError(`not a finite number: ${n}`);
  return `CAST(${String(n)} AS DOUBLE)`;
}

export const isString = (v: unknown): v is string => typeof v === 'string';
export const isNumber = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

// Compiling context: lambda names, and the event paths a condition reads.
export class Ctx {
  private n = 0;
  readonly paths: string[] = [];
  /** `shared`: the lambda variable holding every event path's value (one json_extract), or null: each read inline. */
  constructor(readonly shared: string | null) {}

  v(): string {
    return `_w${++this.n}`;
  }

  /** The value of `event` at a path (a JSON pointer or JSONPath string). */
  event(path: string): string {
    if (this.shared === null) return `json_extract(event, ${sqlString(path)})`;
    let i = this.paths.indexOf(path);
    if (i < 0) i = this.paths.push(path) - 1;
    return `${this.shared}[${i + 1}]`;
  }

  /** `body` over `expr` evaluated once (a lambda over a one-element list). */
  bind(expr: string, body: (v: string) => string): string {
    if (/^_w\d+$/.test(expr)) return body(expr);
    const v = this.v();
    return `list_transform([${expr}], lambda ${v}: ${body(v)})[1]`;
  }

  /** Whether any element of the JSON list `list` passes `test`. */
  any(list: string, test: (e: string) => string): string {
    const v = this.v();
    return `(len(list_filter(${list}, lambda ${v}: ${test(v)})) > 0)`;
  }
}
