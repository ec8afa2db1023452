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
  return [...targets].map(([name, typeId]) => ({ name, keys: name.split('.'), typeId, type: captions[String(typeId)] ?? 'Other' }));
}

function walk(v: unknown, spec: ObservableSpec, i: number, out: Obj[]): void {
  if (Array.isArray(v)) {
    for (const x of v) walk(x, spec, i, out);
    return;
  }
  if (i === spec.keys.length) {
    if (typeof v === 'string' ? v !== '' : typeof v === 'number' || typeof v === 'boolean') {
      out.push({ name: spec.name, type_id: spec.typeId, type: spec.type, value: String(v) });
    }
    return;
  }
  if (typeof v === 'object' && v !== null) walk((v as Obj)[spec.keys[i]!], spec, i + 1, out);
}

/** The observables of a finished event, or undefined when there are none. */
export function collectObservables(specs: readonly ObservableSpec[], ev: Obj): Obj[] | undefined {
  if (specs.length === 0) return undefined;
  const out: Obj[] = [];
  for (const spec of specs) walk(ev, spec, 0, out);
  return out.length > 0 ? out : undefined;
}
