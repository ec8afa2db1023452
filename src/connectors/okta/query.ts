// Okta System Log live queries: the `filter` parameter (a SCIM-like expression: eq, sw, co,
// and, or, parentheses; strings double-quoted) beside since/until (developer.okta.com,
// "System Log API", Filtering). Okta compares case-insensitively, a wider answer that the
// local filter narrows.
import { NOTHING, conjuncts, nameOf, type LiveQuerySpec, type VendorFilter } from '../query.js';

const OP = { eq: 'eq', prefix: 'sw', contains: 'co' } as const;

/** A string literal of Okta's filter: double quotes, backslash escapes. */
export function oktaString(value: string): string {
  return `"${value.replace(/["\\]/g, (c) => `\\${c}`)}"`;
}

function text(f: VendorFilter, top: boolean): string {
  if ('field' in f) return `${nameOf(f.field)} ${OP[f.op]} ${oktaString(f.value)}`;
  const parts = 'and' in f ? f.and.map((p) => text(p, false)) : f.or.map((p) => text(p, false));
  const joined = parts.join('and' in f ? ' and ' : ' or ');
  return top ? joined : `(${joined})`;
}

export const oktaQuery: LiveQuerySpec = {
  or: true,
  parameter: 'filter (eq, sw, co, and, or) with since and until',
  streams: {
    system_log: [
      { path: 'eventType', ops: ['eq', 'prefix', 'contains'] },
      { path: 'actor.id', ops: ['eq'] },
      { path: 'actor.alternateId', ops: ['eq', 'prefix', 'contains'] },
      { path: 'actor.displayName', ops: ['eq', 'prefix', 'contains'] },
      { path: 'transaction.id', ops: ['eq'] },
      { path: 'displayMessage', ops: ['eq', 'prefix', 'contains'] },
      { path: 'client.ipAddress', ops: ['eq'] },
    ],
  },
  render(_stream, filter) {
    if (filter === null) return NOTHING;
    const t = conjuncts(filter).length > 1 ? text({ and: conjuncts(filter) }, true) : text(filter, true);
    return { params: { filter: t }, text: t };
  },
};
