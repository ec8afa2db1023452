// The text form of the one condition language (docs/conditions.md, The text form): what a person
// types, `class_uid = 3002 and status_id = 2 and actor.user.name ~ "adm*"`, compiled to the
// condition tree, so the text and the JSON form mean the same thing everywhere: in searches,
// routes, detection rules, enrichment policies and collection filters. print.ts says a tree back
// as text. A small recursive-descent parser: every error says where (offset, line, column) and
// what was expected.
import { CASE_OPS, type Condition, type ConditionOp, type FieldCondition } from './types.js';

export interface TextProblem {
  message: string;
  /** 0-based offset into the text. */
  offset: number;
  /** 1-based line and column. */
  line: number;
  column: number;
}

export class QueryTextError extends Error {
  constructor(readonly problem: TextProblem) {
    super(`${problem.message} (line ${problem.line}, column ${problem.column})`);
    this.name = 'QueryTextError';
  }
}

export const MAX_TEXT_LENGTH = 16_384;

type TokenKind = 'field' | 'string' | 'number' | 'op' | 'lparen' | 'rparen' | 'comma' | 'end';
interface Token {
  kind: TokenKind;
  text: string;
  /** Strings: the unescaped value; numbers: the number. */
  value?: string | number;
  offset: number;
}

/** The words of the text form: never a bare field name (print.ts quotes such a field). */
export const KEYWORDS: ReadonlySet<string> = new Set([
  'and',
  'or',
  'not',
  'in',
  'exists',
  'missing',
  'true',
  'false',
  'null',
  'contains',
  'startswith',
  'endswith',
  'matches',
  'cidr',
  'nocase',
]);
const COMPARATORS = ['==', '!=', '>=', '<=', '=~', '!~', '=', '>', '<', '~'] as const;
// A field path: names, .names, [n], [*], ["key"] (the path syntax of docs/conditions.md).
export const FIELD_PATTERN = String.raw`[A-Za-z_@][A-Za-z0-9_]*(?:\.[A-Za-z0-9_]+|\[(?:\*|\d+|"(?:[^"\\\n]|\\.)*")\])*`;
const FIELD = new RegExp(FIELD_PATTERN, 'y');
const NUMBER = /-?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?(?![A-Za-z0-9_.])/y;
// An unquoted value: a word that is not a keyword (an address, a host name, a glob).
const BARE = /[A-Za-z0-9_.:/*?@+-]+/y;

function position(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let start = 0;
  for (let i = 0; i < offset && i < text.length; i++) {
    if (text[i] === '\n') {
      line++;
      start = i + 1;
    }
  }
  return { line, column: offset - start + 1 };
}

function describe(t: Token): string {
  return t.kind === 'end' ? 'the end of the query' : `"${t.text}"`;
}

class Parser {
  private pos = 0;
  private tok: Token;
  /** The offset of each leaf in the text, for problems found later (an unknown field). */
  readonly offsets = new Map<FieldCondition, number>();

  constructor(private readonly text: string) {
    this.tok = this.lex();
  }

  fail(message: string, offset = this.tok.offset): never {
    throw new QueryTextError({ message, offset, ...position(this.text, offset) });
  }

  private lex(): Token {
    const s = this.text;
    while (this.pos < s.length && /\s/.test(s[this.pos]!)) this.pos++;
    const offset = this.pos;
    if (this.pos >= s.length) return { kind: 'end', text: '', offset };
    const c = s[this.pos]!;
    if (c === '(') return this.take('lparen', 1);
    if (c === ')') return this.take('rparen', 1);
    if (c === ',') return this.take('comma', 1);
    if (c === '"' || c === "'") return this.lexString(c);
    for (const op of COMPARATORS) if (s.startsWith(op, this.pos)) return this.take('op', op.length);
    if (c === '&' && s[this.pos + 1] === '&') return { ...this.take('field', 2), text: 'and' };
    if (c === '|' && s[this.pos + 1] === '|') return { ...this.take('field', 2), text: 'or' };
    NUMBER.lastIndex = this.pos;
    const num = NUMBER.exec(s);
    if (num) {
      this.pos += num[0].length;
      return { kind: 'number', text: num[0], value: Number(num[0]), offset };
    }
    FIELD.lastIndex = this.pos;
    const field = FIELD.exec(s);
    BARE.lastIndex = this.pos;
    const bare = BARE.exec(s);
    // A bare value longer than the path it starts with (10.0.0.0/8, adm*) is a value.
    if (field && !(bare && bare[0].length > field[0].length)) {
      this.pos += field[0].length;
      return { kind: 'field', text: field[0], offset };
    }
    if (bare) {
      this.pos += bare[0].length;
      return { kind: 'string', text: bare[0], value: bare[0], offset };
    }
    return this.fail(`unexpected character "${c}"`, offset);
  }

  private take(kind: TokenKind, n: number): Token {
    const t = { kind, text: this.text.slice(this.pos, this.pos + n), offset: this.pos };
    this.pos += n;
    return t;
  }

  private lexString(quote: string): Token {
    const s = this.text;
    const offset = this.pos;
    let out = '';
    let i = this.pos + 1;
    for (; i < s.length; i++) {
      const ch = s[i]!;
      if (ch === quote) break;
      if (ch === '\\') {
        const next = s[++i];
        if (next === undefined) break;
        out += next === 'n' ? '\n' : next === 't' ? '\t' : next;
        continue;
      }
      out += ch;
    }
    if (i >= s.length) this.fail('a string is not closed', offset);
    this.pos = i + 1;
    return { kind: 'string', text: s.slice(offset, this.pos), value: out, offset };
  }

  private next(): Token {
    const t = this.tok;
    this.tok = this.lex();
    return t;
  }

  /** The current token's kind (a method, so that TypeScript does not narrow it across next()). */
  private kind(): TokenKind {
    return this.tok.kind;
  }

  /** Whether the current token is the keyword (case-insensitive). */
  private is(word: string): boolean {
    return this.tok.kind === 'field' && this.tok.text.toLowerCase() === word;
  }

  parse(): Condition {
    if (this.kind() === 'end') this.fail('the query is empty');
    const cond = this.or();
    if (this.kind() !== 'end') this.fail(`expected "and", "or" or the end of the query, found ${describe(this.tok)}`);
    return cond;
  }

  private or(): Condition {
    const parts = [this.and()];
    while (this.is('or')) {
      this.next();
      parts.push(this.and());
    }
    return parts.length === 1 ? parts[0]! : { any: parts };
  }

  private and(): Condition {
    const parts = [this.unary()];
    while (this.is('and')) {
      this.next();
      parts.push(this.unary());
    }
    return parts.length === 1 ? parts[0]! : { all: parts };
  }

  private unary(): Condition {
    if (this.is('not')) {
      this.next();
      return { not: this.unary() };
    }
    if (this.kind() === 'lparen') {
      this.next();
      const inner = this.or();
      if (this.kind() !== 'rparen') this.fail(`expected ")", found ${describe(this.tok)}`);
      this.next();
      return inner;
    }
    return this.comparison();
  }

  /** A comparison, then `nocase` when it ignores case (ignore_case on its leaf). */
  private comparison(): Condition {
    const made: FieldCondition[] = [];
    const cond = this.comparisonOnly(made);
    if (this.is('nocase')) {
      const at = this.tok.offset;
      this.next();
      for (const leaf of made) {
        if (!CASE_OPS.includes(leaf.op)) this.fail('nocase applies to text comparisons only', at);
        leaf.ignore_case = true;
      }
    }
    return cond;
  }

  private comparisonOnly(made: FieldCondition[]): Condition {
    const t = this.tok;
    if (t.kind !== 'field' || KEYWORDS.has(t.text.toLowerCase()))
      this.fail(`expected a field name, found ${describe(t)}`);
    this.next();
    const leaf = (op: ConditionOp, value?: unknown): FieldCondition => {
      const c: FieldCondition = value === undefined ? { field: t.text, op } : { field: t.text, op, value };
      this.offsets.set(c, t.offset);
      made.push(c);
      return c;
    };
    if (this.is('exists')) return (this.next(), leaf('exists'));
    if (this.is('missing')) return (this.next(), leaf('not_exists'));
    if (this.is('not')) {
      this.next();
      if (this.is('exists')) return (this.next(), leaf('not_exists'));
      if (this.is('in')) return (this.next(), leaf('not_in', this.list()));
      if (this.is('contains')) return (this.next(), { not: leaf('contains', this.value()) });
      this.fail(`expected "in", "exists" or "contains" after "not", found ${describe(this.tok)}`);
    }
    if (this.is('in')) return (this.next(), leaf('in', this.list()));
    // contains: text in text, or any scalar in a list (docs/conditions.md).
    if (this.is('contains')) return (this.next(), leaf('contains', this.value()));
    for (const [word, op] of [
      ['startswith', 'prefix'],
      ['endswith', 'suffix'],
      ['matches', 'regex'],
    ] as const) {
      if (this.is(word)) return (this.next(), leaf(op, this.text_value(word)));
    }
    if (this.is('cidr')) {
      this.next();
      return leaf('cidr', this.kind() === 'lparen' ? this.list() : this.text_value('cidr'));
    }
    if (this.kind() !== 'op')
      this.fail(
        `expected an operator (=, !=, >, >=, <, <=, ~, =~, in, exists, contains, startswith, endswith, matches, cidr) after ${t.text}, found ${describe(this.tok)}`,
      );
    const op = this.next().text;
    switch (op) {
      case '=':
      case '==':
        return leaf('eq', this.value());
      case '!=':
        return leaf('ne', this.value());
      case '>':
      case '>=':
      case '<':
      case '<=': {
        const v = this.tok;
        const value = this.value();
        if (typeof value !== 'number') this.fail(`${op} compares with a number`, v.offset);
        return leaf(({ '>': 'gt', '>=': 'gte', '<': 'lt', '<=': 'lte' } as const)[op], value);
      }
      case '=~':
        return leaf('regex', this.text_value(op));
      case '!~':
        return { not: this.glob(leaf) };
      case '~':
        return this.glob(leaf);
    }
    return this.fail(`unknown operator ${op}`);
  }

  /** `field ~ "adm*"`: * any characters, ? one; a prefix, suffix or contains when it can be one. */
  private glob(leaf: (op: ConditionOp, value?: unknown) => FieldCondition): Condition {
    const at = this.tok.offset;
    const pattern = this.text_value('~');
    if (pattern === '' || /^\*+$/.test(pattern)) return leaf('exists');
    const inner = pattern.replace(/^\*+/, '').replace(/\*+$/, '');
    const starts = pattern.startsWith('*');
    const ends = pattern.endsWith('*');
    if (!/[*?]/.test(inner)) {
      if (starts && ends) return leaf('contains', inner);
      if (ends) return leaf('prefix', inner);
      if (starts) return leaf('suffix', inner);
      return leaf('eq', inner);
    }
    if (pattern.length > 512) this.fail('a pattern is limited to 512 characters', at);
    const re = pattern
      .replace(/[.+^${}()|[\]\\]/g, '\\$&')
      .replace(/\*/g, '.*')
      .replace(/\?/g, '.');
    return leaf('regex', `^${re}$`);
  }

  private text_value(after: string): string {
    const v = this.tok;
    const value = this.value();
    if (typeof value !== 'string') this.fail(`${after} needs a text value (in quotes)`, v.offset);
    return value;
  }

  private value(): string | number | boolean | null {
    const t = this.tok;
    if (t.kind === 'string' || t.kind === 'number') return (this.next(), t.value!);
    if (t.kind === 'field') {
      const word = t.text.toLowerCase();
      this.next();
      if (word === 'true') return true;
      if (word === 'false') return false;
      if (word === 'null') return null;
      if (KEYWORDS.has(word)) this.fail(`expected a value, found the keyword "${t.text}"`, t.offset);
      return t.text;
    }
    return this.fail(`expected a value, found ${describe(t)}`);
  }

  private list(): (string | number | boolean | null)[] {
    if (this.kind() !== 'lparen') this.fail(`expected "(" to start a list, found ${describe(this.tok)}`);
    this.next();
    const out = [this.value()];
    while (this.kind() === 'comma') {
      this.next();
      out.push(this.value());
    }
    if (this.kind() !== 'rparen') this.fail(`expected "," or ")" in the list, found ${describe(this.tok)}`);
    this.next();
    return out;
  }
}

export interface ParsedText {
  condition: Condition;
  /** Where each leaf's field starts in the text. */
  offsets: Map<FieldCondition, number>;
  position(offset: number): { line: number; column: number };
}

/** Parses the text form; throws QueryTextError with the position. */
export function parseQueryText(text: string): ParsedText {
  if (text.length > MAX_TEXT_LENGTH)
    throw new QueryTextError({
      message: `a query is limited to ${MAX_TEXT_LENGTH} characters`,
      offset: MAX_TEXT_LENGTH,
      ...position(text, MAX_TEXT_LENGTH),
    });
  const parser = new Parser(text);
  const condition = parser.parse();
  return { condition, offsets: parser.offsets, position: (offset) => position(text, offset) };
}
