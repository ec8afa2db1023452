// A condition as an API request gives it: the JSON tree, or a string in the text form
// (text.ts). Routes, detection rules, enrichment policies and collection filters take either
// and store the tree. A syntax error, and a later problem of a leaf written as text, point at
// the line and column in the text.
import { parseQueryText, QueryTextError, type ParsedText, type TextProblem } from './text.js';
import type { Condition, FieldCondition } from './types.js';

export interface ConditionInput {
  /** The tree (the value itself when it was not text); null for an empty text. */
  condition: unknown;
  /** The text's syntax error: the condition is then null and must be refused. */
  syntax?: TextProblem;
  /** Where, in the text, the leaf a located path (`.all[1].field`) names starts. */
  locate(path: string): TextProblem | undefined;
}

const nowhere = () => undefined;

/** Reads a condition given as text or as a tree; an empty or blank text is null (every event). */
export function readCondition(value: unknown): ConditionInput {
  if (typeof value !== 'string') return { condition: value, locate: nowhere };
  if (value.trim() === '') return { condition: null, locate: nowhere };
  let parsed: ParsedText;
  try {
    parsed = parseQueryText(value);
  } catch (e) {
    if (!(e instanceof QueryTextError)) throw e;
    return { condition: null, syntax: e.problem, locate: nowhere };
  }
  return {
    condition: parsed.condition,
    locate(path) {
      const leaf = leafAt(parsed.condition, path);
      const offset = leaf ? parsed.offsets.get(leaf) : undefined;
      if (offset === undefined) return undefined;
      return { message: '', offset, ...parsed.position(offset) };
    },
  };
}

/** The leaf a located path (`.all[1].any[0].field`, `[0].not.value`) names in the tree. */
export function leafAt(cond: Condition | null, path: string): FieldCondition | undefined {
  let node: unknown = cond;
  for (const m of path.matchAll(/\.?(all|any|not|field|op|value|ignore_case)|\[(\d+)\]|\/(all|any|not|\d+)/g)) {
    const key = m[1] ?? m[3];
    if (m[2] !== undefined || (key !== undefined && /^\d+$/.test(key)))
      node = (node as unknown[] | undefined)?.[Number(m[2] ?? key)];
    else if (key === 'all' || key === 'any' || key === 'not')
      node = (node as Record<string, unknown> | undefined)?.[key];
    else break;
  }
  return node && typeof node === 'object' && 'field' in node ? (node as FieldCondition) : undefined;
}

/** " (line 1, column 14)": where a problem is in the text, for a message. */
export function at(p: { line: number; column: number }): string {
  return ` (line ${p.line}, column ${p.column})`;
}
