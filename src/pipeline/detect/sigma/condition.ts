// Sigma's `condition` expression (search identifiers combined with and, or, not, parentheses,
// `1 of x*`, `all of x*`, `1 of them`, `all of them`) parsed into a tree over the compiled
// search identifiers. Precedence, loosest first: or, and, not. Identifiers a logsource variant
// decides (true or false) fold away. An aggregation after `|` (`count() by Field > 5`) is read
// for the compiler to turn into a threshold (docs/sigma.md).
import type { Condition } from '../../conditions/types.js';
import { SigmaError } from './errors.js';
import type { Compiled } from './values.js';

/** `| count() [by Field] > N` (or `>=`): at least `min` matching events per group in the rule's timeframe. */
export interface Aggregation {
  by?: string;
  min: number;
  /** Where it was written, for messages. */
  at: string;
}

export interface ParsedCondition {
  tree: Compiled;
  aggregation?: Aggregation;
}

/** AND / OR of compiled parts with the constants folded away. */
export function fold(key: 'all' | 'any', parts: Compiled[]): Compiled {
  const absorbing = key === 'any';
  if (parts.includes(absorbing)) return absorbing;
  const rest = parts.filter((p): p is Condition => typeof p !== 'boolean');
  if (rest.length === 0) return !absorbing;
  return rest.length === 1 ? rest[0]! : ({ [key]: rest } as Condition);
}

const negate = (c: Compiled): Compiled => (typeof c === 'boolean' ? !c : { not: c });

type Token = { t: 'word' | '(' | ')' | '|'; v: string; at: number };

function tokenize(text: string): Token[] {
  const out: Token[] = [];
  const re = /\s*(?:([()|])|([^\s()|]+))/y;
  let m: RegExpExecArray | null;
  re.lastIndex = 0;
  while (re.lastIndex < text.length && (m = re.exec(text))) {
    const at = m.index + m[0].length - (m[1] ?? m[2] ?? '').length;
    if (m[1]) out.push({ t: m[1] as '(' | ')' | '|', v: m[1], at });
    else if (m[2]) out.push({ t: 'word', v: m[2], at });
  }
  return out;
}

/** Wildcards in `1 of sel*`: `*` any characters (Sigma names are plain words otherwise). */
function nameMatcher(pattern: string): (name: string) => boolean {
  const re = new RegExp(
    `^${pattern
      .split('*')
      .map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
      .join('.*')}$`,
  );
  return (name) => re.test(name);
}

/**
 * Parses `text` over the search identifiers `ids` (name -> compiled condition). `where`
 * locates problems: `detection.condition`, or `detection.condition[1]` in a list.
 */
export function parseCondition(text: string, ids: ReadonlyMap<string, Compiled>, where: string): ParsedCondition {
  const tokens = tokenize(text);
  let i = 0;
  const fail = (message: string, at: number): never => {
    throw new SigmaError(`${where} (column ${at + 1})`, message);
  };
  const peek = () => tokens[i];
  const isWord = (w: string) => peek()?.t === 'word' && peek()!.v.toLowerCase() === w;
  const end = text.length;

  function identifier(tok: Token): Compiled {
    const c = ids.get(tok.v);
    if (c === undefined)
      fail(
        `no search identifier named "${tok.v}" in detection (known: ${[...ids.keys()].join(', ') || 'none'})`,
        tok.at,
      );
    return c!;
  }

  function quantified(): Compiled {
    const q = tokens[i]!;
    i += 2; // the quantifier and `of`
    const target = tokens[i];
    if (!target || target.t !== 'word') return fail(`"${q.v} of" needs a name pattern or "them"`, target?.at ?? end);
    i++;
    const names = [...ids.keys()];
    const picked = target.v === 'them' ? names.filter((n) => !n.startsWith('_')) : names.filter(nameMatcher(target.v));
    if (!picked.length) return fail(`"${target.v}" names no search identifier (known: ${names.join(', ')})`, target.at);
    return fold(
      q.v.toLowerCase() === 'all' ? 'all' : 'any',
      picked.map((n) => ids.get(n)!),
    );
  }

  function primary(): Compiled {
    const tok = peek();
    if (!tok)
      return fail('the condition ends where a search identifier, "not", "(" or "1 of" / "all of" was expected', end);
    if (tok.t === '(') {
      i++;
      const inner = or();
      if (peek()?.t !== ')') return fail('a "(" is not closed', peek()?.at ?? end);
      i++;
      return inner;
    }
    if (tok.t !== 'word') return fail(`unexpected "${tok.v}"`, tok.at);
    const next = tokens[i + 1];
    if (next?.t === 'word' && next.v.toLowerCase() === 'of') {
      if (tok.v === '1' || tok.v.toLowerCase() === 'all') return quantified();
      return fail(`"${tok.v} of" is not supported: only "1 of" and "all of" compile to a condition`, tok.at);
    }
    if (['and', 'or', 'of'].includes(tok.v.toLowerCase()))
      return fail(`"${tok.v}" where a search identifier was expected`, tok.at);
    i++;
    return identifier(tok);
  }

  function not(): Compiled {
    if (isWord('not')) {
      i++;
      return negate(not());
    }
    return primary();
  }

  function chain(key: 'all' | 'any', word: string, next: () => Compiled): Compiled {
    const parts = [next()];
    while (isWord(word)) {
      i++;
      parts.push(next());
    }
    return fold(key, parts);
  }
  const and = () => chain('all', 'and', not);
  const or = (): Compiled => chain('any', 'or', and);

  /** `count() [by Field] > N` after the `|`. */
  function aggregation(bar: Token): Aggregation {
    const rest = text.slice(bar.at + 1);
    const m = /^\s*count\(\s*([^)\s]*)\s*\)\s*(?:by\s+([^\s,]+)\s*)?(>=|>|<=|<|==|=)\s*(\d+)\s*$/i.exec(rest);
    const at = `${where} (column ${bar.at + 1})`;
    if (!m)
      throw new SigmaError(
        at,
        'only "| count() > N" and "| count() by Field > N" compile (to a threshold); other aggregations (sum, avg, min, max, near, count by several fields) are refused',
      );
    if (m[1])
      throw new SigmaError(
        at,
        `count(${m[1]}) counts distinct values, which a threshold does not: only count() compiles`,
      );
    if (m[3] !== '>' && m[3] !== '>=')
      throw new SigmaError(at, `"${m[3]}" asks for few events, which a threshold cannot say: only > and >= compile`);
    const n = Number(m[4]) + (m[3] === '>' ? 1 : 0);
    return { ...(m[2] ? { by: m[2] } : {}), min: n, at };
  }

  if (!tokens.length) fail('the condition is empty', 0);
  const tree = or();
  const rest = peek();
  if (rest?.t === '|') return { tree, aggregation: aggregation(rest) };
  if (rest) fail(`unexpected "${rest.v}" (conditions combine with and, or, not and parentheses)`, rest.at);
  return { tree };
}
