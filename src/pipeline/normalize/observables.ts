// Observables: for each attribute a rule assigns whose OCSF attribute or type is observable
// (an IP, a user name, a host name...), one {name, type_id, type, value} entry. Which targets
// are observable is decided at compile time; per event the finished output is read at those
// paths (lists are walked), so a value assigned twice yields one entry with the final value.
import type { OcsfCatalog } from '../../ocsf/types.js';

type Obj = Record<string, unknown>;

export interface ObservableSpec {
  name: string;
  keys: string[];
  typeId: number;
  type: string;
}

/** Observable specs for a rule's observable targets (full dotted path -> type_id). */
export function compileObservables(catalog: OcsfCatalog, targets: ReadonlyMap<string, number>): ObservableSpec[] {
  const captions = catalog.object('observable')?.attributes.type_id?.enum ?? {};
  return [...targets].map(([name, typeId]) => ({
    name,
    keys: name.split('.'),
    typeId,
    type: captions[String(typeId)] ?? 'Other',
  }));
}

function walk(v: unknown, spec: ObservableSpec, i: number, out: Obj[]): void {
  if (Array.isArray(v)) {
    for (const x of v) walk(x, spec, i, out);
    return;
  }
  if (i === spec.keys.length) {
    push(out, spec, v);
    return;
  }
  if (typeof v === 'object' && v !== null) walk((v as Obj)[spec.keys[i]!], spec, i + 1, out);
}

function push(out: Obj[], spec: ObservableSpec, v: unknown): void {
  if (typeof v === 'string' ? v !== '' : typeof v === 'number' || typeof v === 'boolean') {
    out.push({ name: spec.name, type_id: spec.typeId, type: spec.type, value: String(v) });
  }
}

/** The observables of a finished event, or undefined when there are none. */
export function collectObservables(specs: readonly ObservableSpec[], ev: Obj): Obj[] | undefined {
  if (specs.length === 0) return undefined;
  let out: Obj[] | undefined;
  for (let s = 0; s < specs.length; s++) {
    const spec = specs[s]!;
    const keys = spec.keys;
    // Most paths meet no list: follow them in a loop, and hand the rest to walk().
    let v: unknown = ev;
    let i = 0;
    for (; i < keys.length; i++) {
      if (typeof v !== 'object' || v === null || Array.isArray(v)) break;
      v = (v as Obj)[keys[i]!];
    }
    if (v === undefined) continue;
    if (i === keys.length && !Array.isArray(v)) push((out ??= []), spec, v);
    else walk(v, spec, i, (out ??= []));
  }
  return out !== undefined && out.length > 0 ? out : undefined;
}
