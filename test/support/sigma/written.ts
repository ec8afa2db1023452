// What a built-in mapping writes, read from its JSON document: the OCSF paths the mapping's
// `defaults` and the named rules' `set` assignments write, each with the raw source keys it
// reads. The Sigma tests use it to hold the logsource tables (and the rules Weir accepts) to
// paths the mappings really write: a Sigma field read at a path no mapping writes could never
// match.
import { BUILTIN_MAPPINGS, type BuiltinMapping } from '../../../src/pipeline/normalize/builtin/index.js';
import { formatSegments } from '../../../src/pipeline/normalize/paths.js';
import { parseTarget } from '../../../src/pipeline/normalize/targets.js';
import { compileTemplate } from '../../../src/pipeline/normalize/templates.js';
import type { Assignment } from '../../../src/pipeline/normalize/types.js';

/** The built-in mapping a logsource source names (`platform.stream`, as SigmaSource.mapping writes it). */
export function builtin(mapping: string): BuiltinMapping {
  const found = BUILTIN_MAPPINGS.find((m) => `${m.platform}.${m.stream}` === mapping);
  if (!found)
    throw new Error(
      `no built-in mapping "${mapping}" (platform.stream): ${BUILTIN_MAPPINGS.map((m) => `${m.platform}.${m.stream}`).join(', ')}`,
    );
  return found;
}

/** The names of a built-in mapping's rules (`rules[].name`), in order. */
export function mappingRuleNames(mapping: string): string[] {
  return builtin(mapping).document.rules.map((r) => r.name);
}

/** The raw keys an assignment reads: its `from` (as written) and a template's placeholders. */
function reads(a: Assignment): string[] {
  const out: string[] = [];
  if (typeof a.from === 'string') out.push(a.from);
  else if (Array.isArray(a.from)) out.push(...a.from);
  if (a.each !== undefined) out.push(a.each);
  if (typeof a.template === 'string') {
    try {
      compileTemplate(a.template, (segs) => out.push(formatSegments(segs)));
    } catch {
      // An invalid template is the mapping compiler's to report (builtin.test.ts).
    }
  }
  return out;
}

/**
 * Walks assignments the way prune.ts `targetPaths` does, writing each target as a condition
 * reads it: an element step (`answers[0].rdata`) as `[*]` (`answers[*].rdata`); an append
 * (`metadata.labels[]`) as the list and its elements (`metadata.labels`, `metadata.labels[*]`);
 * the inner targets of an `each` list below the list's `[*]` (`process.file.hashes[*].value`).
 */
function walk(assignments: readonly Assignment[], prefix: string, out: Map<string, Set<string>>): void {
  const add = (path: string, keys: readonly string[]): void => {
    let set = out.get(path);
    if (!set) out.set(path, (set = new Set()));
    for (const k of keys) set.add(k);
  };
  for (const a of assignments) {
    let steps;
    try {
      steps = parseTarget(a.target);
    } catch {
      continue; // refused by the mapping compiler; builtin.test.ts holds that none is.
    }
    const parts = steps.map((s) => (s.idx !== undefined ? `${s.k}[*]` : s.k));
    const path = prefix + parts.join('.');
    const keys = reads(a);
    add(path, keys);
    const list = steps[steps.length - 1]!.append === true || a.each !== undefined;
    if (a.each !== undefined && Array.isArray(a.set)) walk(a.set, `${path.replace(/\[\*\]$/, '')}[*].`, out);
    else if (list && !path.endsWith('[*]')) add(`${path}[*]`, keys);
  }
}

/**
 * The OCSF paths the built-in mapping `platform.stream` writes for events of the named rules
 * (exact `rules[].name`), the mapping's `defaults` included, each with the raw source keys it
 * is written from (`from` as written: `EventData.Image`, `winlog.event_data.Image`, `Image`;
 * inside an `each` list, relative to the element). A constant (`value`) reads no key. Throws on
 * an unknown mapping or rule name, so a logsource table cannot name a rule that does not exist.
 */
export function writtenPaths(mapping: string, rules: string[]): Map<string, Set<string>> {
  const doc = builtin(mapping).document;
  const out = new Map<string, Set<string>>();
  walk(doc.defaults ?? [], '', out);
  for (const name of rules) {
    const rule = doc.rules.find((r) => r.name === name);
    if (!rule)
      throw new Error(
        `the built-in mapping ${mapping} has no rule named "${name}": ${doc.rules.map((r) => JSON.stringify(r.name)).join(', ')}`,
      );
    walk(rule.set ?? [], '', out);
  }
  return out;
}
