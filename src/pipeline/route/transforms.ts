// Route transforms compiled once, validated in the same pass. They never mutate the event
// they are given (every route of the organization sees the same record.ocsf): drop and
// mask copy only the objects on the way to the fields they change and share the rest;
// keep builds a new tree. Sampling is a decision, not an edit: it is taken from a hash of
// the event id, whatever its position in the list, so a redelivered batch samples the
// same events and an event sampled out costs no copy.
import { maskCopies, maskEvent, maskValue } from '../mask.js';
import { checkKnownField, parseRoutePath, PathSyntaxError, type FieldRule, type PathSegment } from './paths.js';
import { fieldProblem, type RouteProblem } from './conditions.js';

export const TRANSFORM_TYPES = ['drop_fields', 'keep_fields', 'sample', 'mask'] as const;
export const TRANSFORM_LIMITS = { transforms: 20, fields: 200 } as const;

export type EventEdit = (ocsf: Record<string, unknown>) => Record<string, unknown>;

export interface CompiledTransforms {
  /** Share of events kept by the sample transform (1: no sampling). */
  rate: number;
  /** The content transforms in order; null when the event goes out as it came. */
  apply: EventEdit | null;
}

interface PathNode {
  leaf: boolean;
  keys: Map<string, PathNode>;
  /** `[*]`: the rest of the path applies to every element. */
  all: PathNode | null;
}

const REMOVE = Symbol('remove');
type LeafEdit = (value: unknown) => unknown;

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function setOwn(o: Record<string, unknown>, key: string, value: unknown): void {
  // A parsed "__proto__" key is data; plain assignment would replace the prototype.
  if (key === '__proto__')
    Object.defineProperty(o, key, { value, enumerable: true, writable: true, configurable: true });
  else o[key] = value;
}

function newNode(): PathNode {
  return { leaf: false, keys: new Map(), all: null };
}

function addPath(root: PathNode, segs: PathSegment[]): void {
  let node = root;
  for (const s of segs) {
    if (node.leaf) return; // a shorter path already covers this one
    if (s.t === 'key') {
      let next = node.keys.get(s.k);
      if (!next) node.keys.set(s.k, (next = newNode()));
      node = next;
    } else node = node.all ??= newNode();
  }
  node.leaf = true;
  node.keys.clear();
  node.all = null;
}

/** Applies `leaf` to the fields the tree names; containers on the way are copied only when something under them changes. */
function edit(value: unknown, node: PathNode, leaf: LeafEdit): unknown {
  if (Array.isArray(value)) {
    if (!node.all) return value;
    let out: unknown[] | null = null;
    for (let i = 0; i < value.length; i++) {
      const next = edit(value[i], node.all, leaf);
      if (next !== value[i]) (out ??= value.slice())[i] = next;
    }
    return out ?? value;
  }
  if (!isRecord(value)) return value;
  let out: Record<string, unknown> | null = null;
  for (const [key, child] of node.keys) {
    if (!Object.hasOwn(value, key)) continue;
    const cur = value[key];
    const next = child.leaf ? leaf(cur) : edit(cur, child, leaf);
    if (next === cur) continue;
    out ??= { ...value };
    if (next === REMOVE) delete out[key];
    else setOwn(out, key, next);
  }
  // A lone object where a list was expected stands for a one-element list.
  const self = out ?? value;
  return node.all ? edit(self, node.all, leaf) : self;
}

/** The part of `value` the tree names; undefined when none of it is there. */
function project(value: unknown, node: PathNode): unknown {
  if (node.leaf) return value;
  if (Array.isArray(value)) {
    if (!node.all) return undefined;
    const out: unknown[] = [];
    for (const el of value) {
      const kept = project(el, node.all);
      if (kept !== undefined) out.push(kept);
    }
    return out.length > 0 ? out : undefined;
  }
  if (!isRecord(value)) return undefined;
  let out: Record<string, unknown> | undefined;
  for (const [key, child] of node.keys) {
    if (!Object.hasOwn(value, key)) continue;
    const kept = project(value[key], child);
    if (kept !== undefined) setOwn((out ??= {}), key, kept);
  }
  if (out === undefined && node.all) return project(value, node.all);
  return out;
}

// Fields named by a mask transform are personal by the user's word, whatever their key
// says: masked as mask.ts masks a value under a personal key (only its shape survives).
const PERSONAL_KEY = 'secret';
const maskNamed: LeafEdit = (v) => maskValue(PERSONAL_KEY, v);
const removeField: LeafEdit = () => REMOVE;

/** The named fields masked, and every copy of their values elsewhere in the event (message, observables...). */
function maskNamedEverywhere(o: Record<string, unknown>, tree: PathNode): Record<string, unknown> {
  const seen: unknown[] = [];
  const masked = edit(o, tree, (v) => {
    seen.push(v);
    return maskNamed(v);
  }) as Record<string, unknown>;
  return seen.length === 0 ? masked : (maskCopies(masked, seen) as Record<string, unknown>);
}

function compileFields(
  raw: unknown,
  problems: RouteProblem[],
  at: string,
  optional: boolean,
  rule: FieldRule,
): PathNode | null | undefined {
  if (raw === undefined && optional) return null;
  if (!Array.isArray(raw) || raw.length === 0) {
    problems.push({ path: at, message: 'fields needs a non-empty list of field paths' });
    return undefined;
  }
  if (raw.length > TRANSFORM_LIMITS.fields) {
    problems.push({ path: at, message: `fields lists at most ${TRANSFORM_LIMITS.fields} paths` });
    return undefined;
  }
  const root = newNode();
  let ok = true;
  raw.forEach((f, i) => {
    try {
      if (typeof f !== 'string') throw new PathSyntaxError('a field path is a string');
      const segs = parseRoutePath(f, { indexes: false });
      if (segs.length === 0 || segs[segs.length - 1]!.t !== 'key')
        throw new PathSyntaxError('a field path ends with a field name');
      checkKnownField(segs, rule);
      addPath(root, segs);
    } catch (e) {
      problems.push(fieldProblem(`${at}[${i}]`, e));
      ok = false;
    }
  });
  return ok ? root : undefined;
}

const ALLOWED_KEYS: Record<(typeof TRANSFORM_TYPES)[number], string[]> = {
  drop_fields: ['type', 'fields'],
  keep_fields: ['type', 'fields'],
  sample: ['type', 'rate'],
  mask: ['type', 'fields'],
};

/** Compiles a transform list; problems (every one) go to `problems` and the result is then undefined. `fields` as in compileRecordCondition. */
export function compileTransforms(
  list: unknown,
  problems: RouteProblem[],
  at = 'transforms',
  fields: FieldRule = 'any',
): CompiledTransforms | undefined {
  if (list === null || list === undefined) return { rate: 1, apply: null };
  if (!Array.isArray(list)) {
    problems.push({ path: at, message: 'transforms is a list' });
    return undefined;
  }
  if (list.length > TRANSFORM_LIMITS.transforms) {
    problems.push({ path: at, message: `a route has at most ${TRANSFORM_LIMITS.transforms} transforms` });
    return undefined;
  }
  const before = problems.length;
  const edits: EventEdit[] = [];
  let rate = 1;
  let samples = 0;
  list.forEach((t, i) => {
    const here = `${at}[${i}]`;
    if (!isRecord(t) || typeof t.type !== 'string' || !(TRANSFORM_TYPES as readonly string[]).includes(t.type)) {
      problems.push({ path: `${here}.type`, message: `type must be one of ${TRANSFORM_TYPES.join(', ')}` });
      return;
    }
    const type = t.type as (typeof TRANSFORM_TYPES)[number];
    const extra = Object.keys(t).find((k) => !ALLOWED_KEYS[type].includes(k));
    if (extra !== undefined) {
      problems.push({
        path: `${here}.${extra}`,
        message: `unknown key for ${type} (allowed: ${ALLOWED_KEYS[type].join(', ')})`,
      });
      return;
    }
    if (type === 'sample') {
      if (++samples > 1) problems.push({ path: here, message: 'a route has at most one sample transform' });
      if (typeof t.rate !== 'number' || !(t.rate > 0 && t.rate <= 1)) {
        problems.push({ path: `${here}.rate`, message: 'rate is a number greater than 0 and at most 1' });
        return;
      }
      rate = t.rate;
      return;
    }
    const tree = compileFields(t.fields, problems, `${here}.fields`, type === 'mask', fields);
    if (tree === undefined) return;
    if (type === 'drop_fields') edits.push((o) => edit(o, tree!, removeField) as Record<string, unknown>);
    else if (type === 'keep_fields')
      edits.push((o) => (project(o, tree!) as Record<string, unknown> | undefined) ?? {});
    else if (tree === null) edits.push(maskEvent);
    else edits.push((o) => maskNamedEverywhere(o, tree));
  });
  if (problems.length > before) return undefined;
  let apply: EventEdit | null = null;
  if (edits.length === 1) apply = edits[0]!;
  else if (edits.length > 1)
    apply = (o) => {
      let v = o;
      for (let i = 0; i < edits.length; i++) v = edits[i]!(v);
      return v;
    };
  return { rate, apply };
}

/** 32-bit FNV-1a of a string with a final avalanche (murmur3 fmix32), so near-identical ids spread evenly. */
export function hashId(id: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) {
    h ^= id.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** True when an event whose id hashes to `hash` is kept at `rate` (the same events for every route with the same rate). */
export function keptBySample(hash: number, rate: number): boolean {
  return rate >= 1 || hash < rate * 4294967296;
}
