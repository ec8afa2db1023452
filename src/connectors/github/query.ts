// GitHub audit-log live queries: qualifiers in the search `phrase` beside created:
// (docs.github.com, "Searching the audit log for your organization"): action: and actor:,
// ANDed by spaces; the phrase has no OR. `action:team` also matches every team.* action, a
// wider answer the local filter narrows. A value the phrase cannot carry bare (spaces, quotes,
// colons) stays local rather than risk GitHub reading it differently.
import { NOTHING, conjuncts, isLeaf, nameOf, type LiveQuerySpec } from '../query.js';

const BARE = /^[A-Za-z0-9_.@/-]{1,200}$/;

export const githubQuery: LiveQuerySpec = {
  or: false,
  parameter: 'phrase qualifiers action: and actor: beside created:',
  streams: {
    audit_log: [
      { path: 'action', ops: ['eq'] },
      { path: 'actor', ops: ['eq'] },
    ],
  },
  render(_stream, filter) {
    const seen = new Set<string>();
    const terms: string[] = [];
    for (const f of conjuncts(filter).filter(isLeaf)) {
      const name = nameOf(f.field);
      // Two values of one qualifier would both have to hold: only the first is sent.
      if (f.op !== 'eq' || !BARE.test(f.value) || seen.has(name)) continue;
      seen.add(name);
      terms.push(`${name}:${f.value}`);
    }
    return terms.length === 0 ? NOTHING : { params: { phrase: terms.join(' ') }, text: terms.join(' ') };
  },
};
