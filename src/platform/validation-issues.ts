// What a person reads when a value breaks a schema. Ajv's message for a pattern quotes the
// regular expression ('must match pattern "^(?!\/)(?![A-Za-z]:)..."'), which tells a user
// nothing. A schema says in words what it allows with `errorMessage`, after the convention
// of ajv-errors: a string for every keyword of that schema, or an object with a string per
// keyword ({pattern: 'must be ...'}). Every validator of Weir (request parts, destination
// and integration configs) shows that text in place of Ajv's. Ajv-errors itself is not used:
// it needs allErrors (request validation stops at the first error on purpose) and replaces
// the errors whose params give the location of a missing or unknown field. Ajv must run
// with `verbose: true`, so that an error carries the schema it broke.
import type { ErrorObject } from 'ajv';

/** Options every Ajv instance of Weir adds so that issueMessage can read the schema. */
export const ISSUE_OPTIONS = { verbose: true } as const;

/** The schema's own words for the broken keyword, else Ajv's message. */
export function issueMessage(e: ErrorObject): string {
  const custom = (e.parentSchema as { errorMessage?: unknown } | undefined)?.errorMessage;
  if (typeof custom === 'string') return custom;
  if (custom && typeof custom === 'object') {
    const forKeyword = (custom as Record<string, unknown>)[e.keyword];
    if (typeof forKeyword === 'string') return forKeyword;
  }
  return e.message ?? 'is invalid';
}
