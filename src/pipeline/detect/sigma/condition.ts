// Sigma's `condition` expression (search identifiers combined with and, or, not, parentheses,
// `1 of x*`, `all of x*`, `1 of them`, `all of them`) parsed into a tree over the compiled
// search identifiers. Precedence, loosest first: or, and, not. Aggregations (`| count() ...`)
// are refused: deprecated in Sigma 2, and a tumbling-window threshold would not mean what a
// Sigma backend's aggregation means (docs/sigma.md).
import type { Condition } from '../../conditions/types.js';
import { SigmaError } from './errors.js';

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
  const re = new RegExp(`^${pattern.split('*').map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`);
  return (name) => re.test(name);
}

/**
 * Parses `text` over the search identifiers `ids` (name -> compiled condition). `where`
 * locates problems: `detection.condition`, or `detection.condition[1]` in a list.
 */
export function parseCondition(text: string, ids: ReadonlyMap<string, Condition>, where: string): Condition {
  const tokens = tokenize(text);
  let i = 0;
  const fail = (message: string, at: number): never => {
    throw new SigmaError(`${where} (column ${at + 1})`, message);
  };
  const peek = () => tokens[i];
  const isWord = (w: string) => peek()?.t === 'word' && peek()!.v.toLowerCase() === w;
  const end = text.length;

  function identifier(tok: Token): Condition {
    const c = ids.get(tok.v);
    if (!c) fail(`no search identifier named "${tok.v}" in detection (known: ${[...ids.keys()].join(', ') || 'none'})`, tok.at);
    return c!;
  }

  function quantified(): Condition {
    const q = tokens[i]!;
    i += 2; // the quantifier and `of`
    const target = tokens[i];
    if (!target || target.t !== 'word') return fail(`"${q.v} of" needs a name pattern or "them"`, target?.at ?? end);
    i++;
    const names = [...ids.keys()];
    const picked = target.v === 'them' ? names.filter((n) => !n.startsWith('_')) : names.filter(nameMatcher(target.v));
    if (!picked.length) return fail(`"${target.v}" names no search identifier (known: ${names.join(', ')})`, target.at);
    const conds = picked.map((n) => ids.get(n)!);
    if (conds.length === 1) return conds[0]!;
    return q.v.toLowerCase() === 'all' ? { all: conds } : { any: conds };
  }

  function primary(): Condition {
    const tok = peek();
    if (!tok) return fail('the condition ends where a search identifier, "not", "(" or "1 of" / "all of" was expected', end);
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
    if (['and', 'or', 'of'].includes(tok.v.toLowerCase())) return fail(`"${tok.v}" where a search identifier was expected`, tok.at);
    i++;
    return identifier(tok);
  }

  function not(): Condition {
    if (isWord('not')) {
      i++;
      return { not: not() };
    }
    return primary();
  }

  function chain(key: 'all' | 'any', word: string, next: () => Condition): Condition {
    const parts = [next()];
    while (isWord(word)) {
      i++;
      parts.push(next());
    }
    return parts.length === 1 ? parts[0]! : { [key]: parts } as Condition;
  }
  const and = () => chain('all', 'and', not);
  const or = (): Condition => chain('any', 'or', and);

  if (!tokens.length) fail('the condition is empty', 0);
  const tree = or();
  const rest = peek();
  if (rest?.t === '|') fail('aggregations ("| count() ...") are not supported: they are deprecated in Sigma and Weir would not count as a Sigma backend does; use a threshold override with group_by instead', rest.at);
  if (rest) fail(`unexpected "${rest.v}" (conditions combine with and, or, not and parentheses)`, rest.at);
  return tree;
}
