// Assignment targets: OCSF attribute paths in the output event, checked against the catalog
// at compile time and turned into setter closures that create intermediate objects.
import type { OcsfAttribute, OcsfCatalog } from '../../ocsf/types.js';

export type Obj = Record<string, unknown>;

/** One step of a target path: a key, optionally an array index, or `[]` (append; last step only). */
export interface TargetStep {
  readonly k: string;
  readonly idx?: number;
  readonly append?: boolean;
}

export class TargetError extends Error {}

const STEP = /^([A-Za-z_][A-Za-z0-9_]*)(?:\[(\d{1,4})?\])?$/;

/** Attributes the compiler owns: a mapping cannot assign them (docs/mappings.md, "What the compiler adds"). */
const OWNED_EXACT = new Set([
  'class_uid',
  'class_name',
  'category_uid',
  'category_name',
  'activity_id',
  'type_uid',
  'type_name',
  'metadata',
  'metadata.version',
  'metadata.product',
  'metadata.profiles',
]);
const OWNED_PREFIX = ['observables', 'unmapped'];

export function parseTarget(path: string): TargetStep[] {
  const parts = path.split('.');
  const steps: TargetStep[] = [];
  parts.forEach((part, i) => {
    const m = STEP.exec(part);
    if (!m) throw new TargetError(`"${part}" is not an attribute name (letters, digits, _; optionally [n] or [])`);
    if (m[1] === '__proto__' || m[1] === 'constructor' || m[1] === 'prototype')
      throw new TargetError(`"${m[1]}" cannot be a target`);
    const bracket = part.endsWith(']');
    if (bracket && m[2] === undefined && i !== parts.length - 1)
      throw new TargetError('[] (append) is allowed on the last attribute only');
    steps.push(
      bracket ? (m[2] === undefined ? { k: m[1]!, append: true } : { k: m[1]!, idx: Number(m[2]) }) : { k: m[1]! },
    );
  });
  return steps;
}

export function catalogPath(steps: readonly TargetStep[]): string {
  return steps.map((s) => s.k).join('.');
}

export function ownedTarget(path: string): boolean {
  return OWNED_EXACT.has(path) || OWNED_PREFIX.some((p) => path === p || path.startsWith(`${p}.`));
}

function conflict(k: string): never {
  throw new TargetError(`cannot assign below "${k}": it already holds a value that is not an object`);
}

function child(cur: Obj, s: TargetStep): Obj {
  if (s.idx === undefined) {
    const next = cur[s.k];
    if (next === undefined) return (cur[s.k] = {}) as Obj;
    if (typeof next !== 'object' || next === null || Array.isArray(next)) conflict(s.k);
    return next as Obj;
  }
  let arr = cur[s.k];
  if (arr === undefined) cur[s.k] = arr = [];
  if (!Array.isArray(arr)) conflict(s.k);
  const el = arr[s.idx];
  if (el === undefined || el === null) return (arr[s.idx] = {}) as Obj;
  if (typeof el !== 'object' || Array.isArray(el)) conflict(s.k);
  return el as Obj;
}

function write(cur: Obj, s: TargetStep, v: unknown): void {
  if (s.append) {
    let arr = cur[s.k];
    if (arr === undefined) cur[s.k] = arr = [];
    if (!Array.isArray(arr)) conflict(s.k);
    if (Array.isArray(v)) for (const x of v) arr.push(x);
    else arr.push(v);
  } else if (s.idx !== undefined) {
    let arr = cur[s.k];
    if (arr === undefined) cur[s.k] = arr = [];
    if (!Array.isArray(arr)) conflict(s.k);
    arr[s.idx] = v;
  } else {
    cur[s.k] = v;
  }
}

export type Setter = (out: Obj, v: unknown) => void;

/** A setter for a parsed target; plain one- and two-key targets get unrolled closures. */
export function makeSetter(steps: readonly TargetStep[]): Setter {
  const last = steps[steps.length - 1]!;
  const plain = steps.every((s) => s.idx === undefined && !s.append);
  if (plain && steps.length === 1) {
    const k = last.k;
    return (out, v) => {
      out[k] = v;
    };
  }
  if (plain && steps.length === 2) {
    const a = steps[0]!.k;
    const b = last.k;
    return (out, v) => {
      let o = out[a];
      if (o === undefined) out[a] = o = {};
      else if (typeof o !== 'object' || o === null || Array.isArray(o)) conflict(a);
      (o as Obj)[b] = v;
    };
  }
  if (plain && steps.length === 3) {
    const a = steps[0]!.k;
    const b = steps[1]!.k;
    const c = last.k;
    return (out, v) => {
      let o = out[a];
      if (o === undefined) out[a] = o = {};
      else if (typeof o !== 'object' || o === null || Array.isArray(o)) conflict(a);
      let p = (o as Obj)[b];
      if (p === undefined) (o as Obj)[b] = p = {};
      else if (typeof p !== 'object' || p === null || Array.isArray(p)) conflict(b);
      (p as Obj)[c] = v;
    };
  }
  const init = steps.slice(0, -1);
  return (out, v) => {
    let cur = out;
    for (const s of init) cur = child(cur, s);
    write(cur, last, v);
  };
}

/** Reads a target back from the output (undefined when any step is missing). */
export function makeOutputGetter(steps: readonly TargetStep[]): (out: Obj) => Obj | undefined {
  // Returns the parent object of the last step: callers read and write its key.
  const init = steps.slice(0, -1);
  return (out) => {
    let cur: unknown = out;
    for (const s of init) {
      cur = (cur as Obj)[s.k];
      if (s.idx !== undefined) cur = Array.isArray(cur) ? cur[s.idx] : undefined;
      if (typeof cur !== 'object' || cur === null || Array.isArray(cur)) return undefined;
    }
    return cur as Obj;
  };
}

export interface ResolvedTarget {
  /** The attribute, or undefined below a free-form attribute (json_t, or an `object` object). */
  attr?: OcsfAttribute;
  problem?: string;
}

function freeForm(a: OcsfAttribute): boolean {
  return a.type === 'json_t' || (a.type === 'object_t' && a.objectType === 'object');
}

/**
 * Resolves a target (its full path, `each` targets included) in a class, checking list
 * syntax against is_array and profile-only attributes against the document's profiles.
 */
export function resolveTarget(
  catalog: OcsfCatalog,
  classUid: number,
  steps: readonly TargetStep[],
  profiles: readonly string[],
): ResolvedTarget {
  const names: string[] = [];
  for (let i = 0; i < steps.length; i++) {
    const s = steps[i]!;
    names.push(s.k);
    const path = names.join('.');
    const attr = catalog.resolve(classUid, path);
    if (!attr) return { problem: `the class has no attribute "${path}"` };
    if (attr.profiles && !attr.profiles.some((p) => profiles.includes(p))) {
      return {
        problem: `"${path}" exists only with the profile ${attr.profiles.join(' or ')}: add it to the document's profiles`,
      };
    }
    const listed = s.idx !== undefined || s.append === true;
    if (listed && !attr.isArray) return { problem: `"${path}" is not a list: remove the brackets` };
    if (!listed && attr.isArray && i < steps.length - 1)
      return { problem: `"${path}" is a list: write ${s.k}[0] (an element), or build it with each` };
    if (freeForm(attr) && i < steps.length - 1) return {};
    if (i === steps.length - 1) return { attr };
  }
  return {};
}
