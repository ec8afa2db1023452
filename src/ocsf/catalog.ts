// The OCSF catalog: lookups over a set of definitions (the project's definitions.json, or
// the official compiled schema in tests). Built once; everything here is read-only.
import definitions from './definitions.json' with { type: 'json' };
import type { OcsfDefinitions, RawAttribute, RawConstraints } from './format.js';
import type { OcsfAttribute, OcsfCatalog, OcsfClassDef, OcsfObjectDef, OcsfTypeDef } from './types.js';

export const OCSF_VERSION = '1.8.0';

/** The object type whose content is free (what `unmapped` holds): nothing under it is checked. */
export const FREE_OBJECT = 'object';

export class OcsfDefinitionError extends Error {}

const RESOLVE_CACHE_MAX = 10_000;

function toAttribute(name: string, raw: RawAttribute): OcsfAttribute {
  return Object.freeze({
    name,
    caption: raw.caption,
    type: raw.type,
    ...(raw.object_type !== undefined ? { objectType: raw.object_type } : {}),
    isArray: raw.is_array === true,
    requirement: raw.requirement,
    ...(raw.enum ? { enum: Object.freeze({ ...raw.enum }) } : {}),
    ...(raw.sibling !== undefined ? { sibling: raw.sibling } : {}),
    ...(raw.profiles?.length ? { profiles: Object.freeze([...raw.profiles]) } : {}),
    ...(raw.observable !== undefined ? { observable: raw.observable } : {}),
  });
}

function toAttributes(attrs: Record<string, RawAttribute>): Readonly<Record<string, OcsfAttribute>> {
  const out: Record<string, OcsfAttribute> = {};
  for (const [name, raw] of Object.entries(attrs)) out[name] = toAttribute(name, raw);
  return Object.freeze(out);
}

function toConstraints(c: RawConstraints | undefined): { constraints?: OcsfClassDef['constraints'] } {
  if (!c || (!c.at_least_one && !c.just_one)) return {};
  return {
    constraints: Object.freeze({
      ...(c.at_least_one ? { at_least_one: Object.freeze([...c.at_least_one]) } : {}),
      ...(c.just_one ? { just_one: Object.freeze([...c.just_one]) } : {}),
    }),
  };
}

/** Splits `actor.user.name`, `resources[2].uid` or `resources[].uid` into attribute names. */
function segments(path: string): string[] {
  return path.split('.').map((s) => {
    const bracket = s.indexOf('[');
    return bracket === -1 ? s : s.slice(0, bracket);
  });
}

export function createCatalog(defs: OcsfDefinitions): OcsfCatalog {
  const classes = new Map<number, OcsfClassDef>();
  for (const raw of Object.values(defs.classes)) {
    classes.set(
      raw.uid,
      Object.freeze({
        uid: raw.uid,
        name: raw.name,
        caption: raw.caption,
        categoryUid: raw.category_uid,
        // Base Event has no category of its own: the schema leaves its name null and its
        // category_uid enum names 0 "Uncategorized", which is what an event carries.
        categoryName:
          raw.category_name ?? raw.attributes.category_uid?.enum?.[String(raw.category_uid)] ?? 'Uncategorized',
        profiles: Object.freeze([...raw.profiles]),
        attributes: toAttributes(raw.attributes),
        ...toConstraints(raw.constraints),
      }),
    );
  }
  const classList = Object.freeze([...classes.values()].sort((a, b) => a.uid - b.uid));

  const objects = new Map<string, OcsfObjectDef>();
  for (const [name, raw] of Object.entries(defs.objects)) {
    objects.set(
      name,
      Object.freeze({
        name,
        caption: raw.caption,
        attributes: toAttributes(raw.attributes),
        ...toConstraints(raw.constraints),
        ...(raw.observable !== undefined ? { observable: raw.observable } : {}),
      }),
    );
  }

  const types = new Map<string, OcsfTypeDef>();
  for (const [name, raw] of Object.entries(defs.types)) {
    types.set(
      name,
      Object.freeze({
        name,
        caption: raw.caption,
        base: raw.type ?? name,
        ...(raw.max_len !== undefined ? { maxLen: raw.max_len } : {}),
        ...(raw.range ? { range: Object.freeze([raw.range[0], raw.range[1]] as const) } : {}),
        ...(raw.regex !== undefined ? { regex: raw.regex } : {}),
        ...(raw.values ? { values: Object.freeze([...raw.values]) } : {}),
        ...(raw.observable !== undefined ? { observable: raw.observable } : {}),
      }),
    );
  }

  // Every reference must resolve, so a broken definitions file fails at start, not per event.
  const check = (owner: string, attrs: Readonly<Record<string, OcsfAttribute>>) => {
    for (const a of Object.values(attrs)) {
      if (a.type === 'object_t') {
        if (!a.objectType || !objects.has(a.objectType))
          throw new OcsfDefinitionError(`${owner}.${a.name}: unknown object "${a.objectType}"`);
      } else if (!types.has(a.type)) {
        throw new OcsfDefinitionError(`${owner}.${a.name}: unknown type "${a.type}"`);
      }
    }
  };
  for (const c of classList) check(c.name, c.attributes);
  for (const o of objects.values()) check(o.name, o.attributes);

  const resolved = new Map<string, OcsfAttribute | null>();

  function resolve(classUid: number, path: string): OcsfAttribute | undefined {
    const key = `${classUid}:${path}`;
    const hit = resolved.get(key);
    if (hit !== undefined) return hit ?? undefined;
    let attrs: Readonly<Record<string, OcsfAttribute>> | undefined = classes.get(classUid)?.attributes;
    let found: OcsfAttribute | undefined;
    for (const name of segments(path)) {
      found = attrs && Object.hasOwn(attrs, name) ? attrs[name] : undefined;
      if (!found) break;
      attrs =
        found.objectType !== undefined && found.objectType !== FREE_OBJECT
          ? objects.get(found.objectType)?.attributes
          : undefined;
    }
    // Paths come from user-written mappings: bound the memo rather than let it grow.
    if (resolved.size >= RESOLVE_CACHE_MAX) resolved.clear();
    resolved.set(key, found ?? null);
    return found;
  }

  return Object.freeze({
    version: defs.ocsf_version,
    classes: () => classList,
    classByUid: (uid: number) => classes.get(uid),
    object: (name: string) => objects.get(name),
    type: (name: string) => types.get(name),
    resolve,
  });
}

let singleton: OcsfCatalog | undefined;

/** The catalog of the classes Weir supports (src/ocsf/definitions.json), built on first use. */
export function ocsfCatalog(): OcsfCatalog {
  singleton ??= createCatalog(definitions as unknown as OcsfDefinitions);
  return singleton;
}
