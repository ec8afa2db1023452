// Objects a rule writes are kept only when they hold what OCSF requires of them: every required
// attribute (with the document's profiles) and one of an `at_least_one` list. A `device` that
// got only the constant `type_id` because the record names no host, an account with only its
// defaulted type: such an object is left out, deepest first, so that the event is delivered
// valid rather than quarantined for an object the source never described (decision 0056).
// The plan is built once per rule from its targets; an event pays a few property reads per
// object the rule can write.
import type { OcsfCatalog, OcsfObjectDef } from '../../ocsf/types.js';
import { parseTarget, type Obj } from './targets.js';
import type { Assignment } from './types.js';

interface Node {
  readonly key: string;
  readonly isArray: boolean;
  readonly required: readonly string[];
  readonly atLeastOne: readonly string[] | undefined;
  readonly children: Node[];
}

interface Draft {
  isArray: boolean;
  required: string[];
  atLeastOne: readonly string[] | undefined;
  children: Map<string, Draft>;
}

export type Pruner = (event: Obj) => void;

function requirements(
  def: OcsfObjectDef,
  profiles: readonly string[],
): { required: string[]; atLeastOne: readonly string[] | undefined } {
  const required: string[] = [];
  for (const a of Object.values(def.attributes)) {
    if (a.requirement !== 'required') continue;
    if (a.profiles && !a.profiles.some((p) => profiles.includes(p))) continue;
    required.push(a.name);
  }
  return { required, atLeastOne: def.constraints?.at_least_one };
}

/** The full target paths (attribute names) of assignments, `each` lists' inner targets included. */
export function targetPaths(assignments: readonly Assignment[], prefix: readonly string[] = []): string[][] {
  const out: string[][] = [];
  for (const a of assignments) {
    let names: string[];
    try {
      names = [...prefix, ...parseTarget(a.target).map((s) => s.k)];
    } catch {
      continue;
    }
    out.push(names);
    if (a.each !== undefined && Array.isArray(a.set)) out.push(...targetPaths(a.set, names));
  }
  return out;
}

function draftNode(): Draft {
  return { isArray: false, required: [], atLeastOne: undefined, children: new Map() };
}

function freeze(key: string, d: Draft): Node {
  return {
    key,
    isArray: d.isArray,
    required: d.required,
    atLeastOne: d.atLeastOne,
    children: [...d.children].map(([k, c]) => freeze(k, c)),
  };
}

/** The pruner of one rule's class and targets; undefined when the rule writes no object with requirements. */
export function compilePruner(
  catalog: OcsfCatalog,
  classUid: number,
  profiles: readonly string[],
  targets: readonly string[][],
): Pruner | undefined {
  const root = draftNode();
  let any = false;
  for (const names of targets) {
    let cur = root;
    for (let i = 0; i < names.length; i++) {
      const attr = catalog.resolve(classUid, names.slice(0, i + 1).join('.'));
      // Free-form objects (`unmapped`, json_t) and scalars end the walk: nothing to require there.
      if (!attr || attr.type !== 'object_t' || !attr.objectType || attr.objectType === 'object') break;
      const def = catalog.object(attr.objectType);
      if (!def) break;
      let next = cur.children.get(names[i]!);
      if (!next) {
        const req = requirements(def, profiles);
        next = { isArray: attr.isArray, required: req.required, atLeastOne: req.atLeastOne, children: new Map() };
        cur.children.set(names[i]!, next);
        if (req.required.length > 0 || req.atLeastOne) any = true;
      }
      cur = next;
    }
  }
  if (!any) return undefined;
  const top = freeze('', root).children;
  return (event) => pruneChildren(event, top);
}

function isObject(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function present(v: unknown): boolean {
  return v !== undefined && v !== null;
}

function complete(o: Obj, node: Node): boolean {
  const required = node.required;
  for (let i = 0; i < required.length; i++) if (!present(o[required[i]!])) return false;
  const some = node.atLeastOne;
  if (some === undefined) return true;
  for (let i = 0; i < some.length; i++) if (present(o[some[i]!])) return true;
  return false;
}

/** Prunes below `o`, then says whether `o` itself is worth keeping. */
function keep(o: Obj, node: Node): boolean {
  if (node.children.length > 0) pruneChildren(o, node.children);
  if (!complete(o, node)) return false;
  for (const _ in o) return true;
  return false;
}

function pruneChildren(parent: Obj, children: readonly Node[]): void {
  for (let i = 0; i < children.length; i++) {
    const node = children[i]!;
    const v = parent[node.key];
    if (v === undefined) continue;
    if (node.isArray) {
      if (!Array.isArray(v)) continue;
      let kept = 0;
      for (let j = 0; j < v.length; j++) {
        const el: unknown = v[j];
        if (!isObject(el) || keep(el, node)) v[kept++] = el;
      }
      if (kept === 0) delete parent[node.key];
      else v.length = kept;
    } else if (isObject(v) && !keep(v, node)) {
      delete parent[node.key];
    }
  }
}
