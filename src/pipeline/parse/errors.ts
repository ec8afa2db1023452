// What every text parser shares: the failure it throws (a reason and where in the text, never
// the text itself, which may be personal data) and the object it builds its fields in.

/** A text that a parser cannot read. `position` is the 1-based character where reading stopped. */
export class ParseError extends Error {
  constructor(
    readonly reason: string,
    readonly position?: number,
    /** XML: the 1-based line and column instead of a character. */
    readonly line?: number,
    readonly column?: number,
  ) {
    super(reason);
  }

  /** `at character 57` / `at line 3, column 9` / '' when the failure has no position. */
  where(): string {
    if (this.line !== undefined) return ` at line ${this.line}, column ${this.column ?? 1}`;
    return this.position !== undefined ? ` at character ${this.position}` : '';
  }
}

export type Fields = Record<string, unknown>;

/**
 * Sets a parsed field. A `__proto__` key becomes an own property (plain assignment would set
 * the prototype); a repeated key keeps every value, as a list, rather than losing one.
 */
export function putField(out: Fields, key: string, value: unknown, repeat: 'list' | 'replace' = 'list'): void {
  if (key === '__proto__') {
    Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
    return;
  }
  if (repeat === 'list' && Object.hasOwn(out, key)) {
    const prev = out[key];
    out[key] = Array.isArray(prev) ? [...(prev as unknown[]), value] : [prev, value];
    return;
  }
  out[key] = value;
}

/** Counts fields against a parser's limit as they are added. */
export function fieldLimit(max: number): (count: number, position: number) => void {
  return (count, position) => {
    if (count > max) throw new ParseError(`more than ${max} fields`, position);
  };
}
