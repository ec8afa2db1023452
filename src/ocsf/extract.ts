// Derives the project's OCSF definitions (definitions.json) from the official compiled
// schema: the supported classes, every object reachable from them (profile attributes
// included, since any event may switch a profile on) and the dictionary types they use,
// keeping only the keys the catalog and validator read. Pure: scripts/ocsf-extract.ts
// does the I/O, and the cross-check test runs the same function against the official file.
import type { OcsfDefinitions, RawAttribute, RawClass, RawConstraints, RawObject, RawType } from './format.js';

const ATTRIBUTE_KEYS = [
  'caption',
  'type',
  'object_type',
  'is_array',
  'requirement',
  'sibling',
  'profiles',
  'observable',
  'enum',
] as const;
const TYPE_KEYS = ['caption', 'type', 'max_len', 'range', 'regex', 'values', 'observable'] as const;

function pick<T extends object, K extends keyof T>(source: T, keys: readonly K[]): Pick<T, K> {
  const out = {} as Pick<T, K>;
  for (const key of keys) if (source[key] !== undefined) out[key] = source[key];
  return out;
}

function sortedRecord<V, W>(record: Record<string, V>, map: (value: V) => W): Record<string, W> {
  const out: Record<string, W> = {};
  for (const key of Object.keys(record).sort()) out[key] = map(record[key] as V);
  return out;
}

function attributes(attrs: Record<string, RawAttribute>): Record<string, RawAttribute> {
  return sortedRecord(attrs, (a) => pick(a, ATTRIBUTE_KEYS) as RawAttribute);
}

function constraints(c: RawConstraints | undefined): { constraints?: RawConstraints } {
  return c && (c.at_least_one || c.just_one) ? { constraints: pick(c, ['at_least_one', 'just_one']) } : {};
}

export class OcsfExtractError extends Error {}

export function extractDefinitions(schema: OcsfDefinitions, classUids: readonly number[]): OcsfDefinitions {
  const byUid = new Map(Object.values(schema.classes).map((c) => [c.uid, c]));
  const classes: Record<string, RawClass> = {};
  const objectNames = new Set<string>();
  const typeNames = new Set<string>();
  const pending: Record<string, RawAttribute>[] = [];

  for (const uid of [...classUids].sort((a, b) => a - b)) {
    const source = byUid.get(uid);
    if (!source) throw new OcsfExtractError(`class_uid ${uid} is not in the OCSF ${schema.ocsf_version} schema`);
    classes[source.name] = {
      name: source.name,
      caption: source.caption,
      uid: source.uid,
      category: source.category,
      category_uid: source.category_uid,
      category_name: source.category_name,
      profiles: [...source.profiles],
      ...constraints(source.constraints),
      attributes: attributes(source.attributes),
    };
    pending.push(source.attributes);
  }

  // Breadth-first over object_t references; cycles (process.parent_process) end at the Set.
  while (pending.length > 0) {
    const attrs = pending.pop() as Record<string, RawAttribute>;
    for (const attr of Object.values(attrs)) {
      typeNames.add(attr.type);
      const name = attr.object_type;
      if (!name || objectNames.has(name)) continue;
      const object = schema.objects[name];
      if (!object) throw new OcsfExtractError(`object "${name}" is referenced but not defined`);
      objectNames.add(name);
      pending.push(object.attributes);
    }
  }

  const objects: Record<string, RawObject> = {};
  for (const name of [...objectNames].sort()) {
    const source = schema.objects[name] as RawObject;
    objects[name] = {
      name: source.name,
      caption: source.caption,
      ...(source.profiles?.length ? { profiles: [...source.profiles] } : {}),
      ...(source.observable !== undefined ? { observable: source.observable } : {}),
      ...constraints(source.constraints),
      attributes: attributes(source.attributes),
    };
  }

  // Derived types name their base (timestamp_t -> long_t); the base must come along.
  typeNames.delete('object_t');
  for (const name of [...typeNames]) {
    for (let t = schema.types[name]; t?.type; t = schema.types[t.type]) typeNames.add(t.type);
  }
  const types: Record<string, RawType> = {};
  for (const name of [...typeNames].sort()) {
    const source = schema.types[name];
    if (!source) throw new OcsfExtractError(`type "${name}" is used but not defined`);
    types[name] = pick(source, TYPE_KEYS) as RawType;
  }

  return {
    ocsf_version: schema.ocsf_version,
    ...(schema.source ? { source: pick(schema.source, ['repo', 'ref', 'commit', 'license']) } : {}),
    types,
    classes,
    objects,
  };
}

/**
 * JSON text with one line per attribute: small enough to commit, readable in a diff.
 * Objects deeper than four levels, or holding only scalars, are written on one line.
 */
export function formatDefinitions(defs: OcsfDefinitions): string {
  const write = (value: unknown, depth: number): string => {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return JSON.stringify(value);
    const entries = Object.entries(value as Record<string, unknown>);
    const flat = entries.every(([, v]) => v === null || typeof v !== 'object' || Array.isArray(v));
    if (depth >= 4 || flat || entries.length === 0) return JSON.stringify(value);
    const pad = ' '.repeat(depth + 1);
    const body = entries.map(([k, v]) => `${pad}${JSON.stringify(k)}: ${write(v, depth + 1)}`).join(',\n');
    return `{\n${body}\n${' '.repeat(depth)}}`;
  };
  return `${write(defs, 0)}\n`;
}
