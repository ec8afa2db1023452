// A rule definition whose condition is given in the text form (docs/conditions.md, The text
// form): the condition becomes the tree, which is what is stored and compiled; a syntax error,
// and any later problem of a leaf written as text, say the line and column in the text.
import { at, readCondition } from '../conditions/input.js';
import type { RuleProblem } from './rules.js';

const LOCATION = 'definition.condition';

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export interface RuleTextResult {
  /** The definition with its condition as the tree (the input itself when it was not text). */
  definition: unknown;
  /** The text's syntax error, if any. */
  syntax?: RuleProblem;
  /** Adds the text position to problems of the condition's leaves. */
  place(problems: RuleProblem[]): RuleProblem[];
}

export function readRuleText(def: unknown): RuleTextResult {
  if (!isRecord(def) || typeof def.condition !== 'string') return { definition: def, place: (p) => p };
  const input = readCondition(def.condition);
  if (input.syntax) {
    const { message, ...where } = input.syntax;
    return {
      definition: { ...def, condition: null },
      syntax: { location: LOCATION, message: `${message}${at(where)}`, ...where },
      place: (p) => p,
    };
  }
  return {
    definition: { ...def, condition: input.condition },
    place: (problems) =>
      problems.map((p) => {
        if (!p.location.startsWith(LOCATION)) return p;
        const where = input.locate(p.location.slice(LOCATION.length));
        return where
          ? { ...p, message: `${p.message}${at(where)}`, line: where.line, column: where.column, offset: where.offset }
          : p;
      }),
  };
}
