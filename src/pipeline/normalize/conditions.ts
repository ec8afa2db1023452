// Conditions of a mapping document (compileMappingCondition: `when` of rules, assignments
// and parse steps): the one condition language and compiler (pipeline/conditions,
// docs/conditions.md) over the raw vendor event, whose fields are source paths (paths.ts,
// with `[?key=value]` and `@`). The old leaf form ({path, eq}) is still read, so published
// documents keep compiling.
import { compileCondition } from '../conditions/compile.js';
import { CONDITION_LIMITS, type FieldReader } from '../conditions/types.js';
import { collects, compileSegments, parsePath, PathSyntaxError, type PathSegment } from './paths.js';
import type { MappingProblem } from './types.js';

export type Predicate = (src: unknown) => boolean;

export const MAX_REGEX_LENGTH = CONDITION_LIMITS.regexLength;

export interface ConditionContext {
  problems: MappingProblem[];
  /** Called with every path a condition reads (they count as references for drift, not as mapped data). */
  onPath?: (segs: PathSegment[]) => void;
}

function reader(onPath: ConditionContext['onPath']): FieldReader<unknown> {
  return {
    describe: 'a path into the raw vendor event',
    field(path) {
      let segs: PathSegment[];
      try {
        segs = parsePath(path);
      } catch (e) {
        return { problem: e instanceof PathSyntaxError ? `invalid path: ${e.message}` : 'invalid path' };
      }
      onPath?.(segs);
      return { get: compileSegments(segs), many: collects(segs) };
    },
  };
}

const PLAIN = reader(undefined);

/**
 * Compiles a condition. Problems (located under `at`: `/rules/0/when/all/1/value`) go to
 * ctx.problems and the result is undefined; the caller keeps compiling to report every
 * problem at once.
 */
export function compileMappingCondition(cond: unknown, ctx: ConditionContext, at: string): Predicate | undefined {
  const fields = ctx.onPath ? reader(ctx.onPath) : PLAIN;
  return compileCondition(cond, { fields, oldForm: true }, (p) => {
    ctx.problems.push({ at: p.at.length === 0 ? at : `${at}/${p.at.join('/')}`, message: p.message });
  });
}
