// Lookups (source value -> output value) and the constants of a document, which are copied
// for every event so that no two events ever share an object.
import type { OcsfAttribute } from '../../ocsf/types.js';
import type { Lookup, MappingProblem } from './types.js';

type Obj = Record<string, unknown>;

/** A lookup miss without a default: the target stays unset. */
export const MISSING: unique symbol = Symbol('missing');

/** A deep copy of JSON data: constants and raw subtrees must not be shared between events. */
export function cloneJson(v: unknown): unknown {
  if (typeof v !== 'object' || v === null) return v;
  if (Array.isArray(v)) return v.map(cloneJson);
  const o: Obj = {};
  for (const k in v as Obj) o[k] = cloneJson((v as Obj)[k]);
  return o;
}

/** A function returning the constant (a fresh copy when it is an object or a list). */
export const constant = (v: unknown): (() => unknown) =>
  typeof v === 'object' && v !== null ? () => cloneJson(v) : () => v;

function enumLabel(attr: OcsfAttribute): string {
  return Object.entries(attr.enum ?? {})
    .map(([k, c]) => `${k} ${c}`)
    .join(', ');
}

/** The problem with a constant written for an enum attribute, if any. */
export function enumProblem(attr: OcsfAttribute | undefined, v: unknown): string | undefined {
  if (!attr?.enum) return undefined;
  if (typeof v === 'number' && Object.hasOwn(attr.enum, String(v))) return undefined;
  return `${JSON.stringify(v)} is not a value of ${attr.name} (${enumLabel(attr)})`;
}

export interface CompiledLookup {
  map: Map<string, unknown>;
  ignoreCase: boolean;
  hasDefault: boolean;
  dflt: () => unknown;
}

/** Compiles a lookup; for an enum target every output must be a value of the enum. */
export function compileLookup(
  l: Lookup,
  at: string,
  attr: OcsfAttribute | undefined,
  problems: MappingProblem[],
): CompiledLookup {
  const map = new Map<string, unknown>();
  for (const [k, v] of Object.entries(l.map)) {
    const p = enumProblem(attr, v);
    if (p) problems.push({ at: `${at}/map/${k.replace(/~/g, '~0').replace(/\//g, '~1')}`, message: p });
    const key = l.ignore_case ? k.toLowerCase() : k;
    if (map.has(key)) problems.push({ at: `${at}/map`, message: `"${k}" is listed twice (ignore_case)` });
    map.set(key, v);
  }
  const hasDefault = l.default !== undefined;
  if (hasDefault) {
    const p = enumProblem(attr, l.default);
    if (p) problems.push({ at: `${at}/default`, message: p });
  }
  return { map, ignoreCase: l.ignore_case === true, hasDefault, dflt: constant(l.default) };
}

/** Looks one value up: MISSING when it is not listed and there is no default. */
function lookupOne(l: CompiledLookup, v: unknown): unknown {
  if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') {
    const key = l.ignoreCase ? String(v).toLowerCase() : String(v);
    const hit = l.map.get(key);
    if (hit !== undefined || l.map.has(key)) return typeof hit === 'object' && hit !== null ? cloneJson(hit) : hit;
  }
  return l.hasDefault ? l.dflt() : MISSING;
}

/** Looks a value up; a list is looked up element by element (misses dropped). */
export function applyLookup(l: CompiledLookup, v: unknown): unknown {
  if (!Array.isArray(v)) return lookupOne(l, v);
  const out: unknown[] = [];
  for (const x of v) {
    const r = lookupOne(l, x);
    if (r !== MISSING) out.push(r);
  }
  return out.length > 0 ? out : MISSING;
}
