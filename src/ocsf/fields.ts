// Which field paths an OCSF event of the supported classes can have: the union of every
// class's attributes (profile attributes included), walked through the objects they hold.
// For languages that address normalized events by path (route conditions and transforms),
// so that a path no class can have (`clas_uid`) is refused with the closest known field
// instead of being accepted and never matching. Below a free-form attribute (`unmapped`,
// `xattributes`: object type `object`; `data`: json_t) anything goes.
import { closest, distance } from 'fastest-levenshtein';
import { FREE_OBJECT } from './catalog.js';
import type { OcsfAttribute, OcsfCatalog } from './types.js';

/** One step of a parsed path: a key, or an element (`[0]`, `[*]`, `[?k=v]`: arrays are transparent). */
export type FieldStep = { readonly t: 'key'; readonly k: string } | { readonly t: 'idx' | 'all' | 'find' };

export interface UnknownField {
  /** Index in the steps of the key no class has there. */
  at: number;
  /** Why, in words: the key, the path before it, and the closest known field. */
  message: string;
  /** The path with the unknown key replaced by the closest known one. */
  closest: string;
}

/** The attributes reachable at one place of a path: every class (or object) that can be there, merged by name. */
type Level = ReadonlyMap<string, readonly OcsfAttribute[]>;

const PLAIN_KEY = /^[A-Za-z_][A-Za-z0-9_]*$/;

function formatPath(steps: readonly FieldStep[]): string {
  let out = '';
  for (const s of steps) {
    if (s.t === 'key') out += PLAIN_KEY.test(s.k) ? (out === '' ? s.k : `.${s.k}`) : `[${JSON.stringify(s.k)}]`;
    else out += s.t === 'all' ? '[*]' : '[0]';
  }
  return out;
}

const isFree = (a: OcsfAttribute) => a.objectType === FREE_OBJECT || a.type === 'json_t';

export interface OcsfFieldIndex {
  /** undefined when some supported class can have the path; else where and why not. */
  check(steps: readonly FieldStep[]): UnknownField | undefined;
  /** Attribute names any supported class has at its top level. */
  topLevel(): readonly string[];
}

/**
 * `extraTopLevel`: whole paths outside OCSF that the path language itself knows (the route
 * language's `envelope.*` fields), offered as suggestions for an unknown top-level key.
 */
export function createFieldIndex(catalog: OcsfCatalog, extraTopLevel: readonly string[] = []): OcsfFieldIndex {
  const merge = (sources: Iterable<Readonly<Record<string, OcsfAttribute>>>): Level => {
    const level = new Map<string, OcsfAttribute[]>();
    for (const attrs of sources) {
      for (const a of Object.values(attrs)) {
        const list = level.get(a.name);
        if (list) list.push(a);
        else level.set(a.name, [a]);
      }
    }
    return level;
  };
  const root = merge(catalog.classes().map((c) => c.attributes));
  // Levels below the root are keyed by the set of object types that can be there.
  const levels = new Map<string, Level>();
  const levelOf = (objectTypes: readonly string[]): Level => {
    const key = [...new Set(objectTypes)].sort().join(',');
    let level = levels.get(key);
    if (!level) {
      const objects = key.split(',').map((name) => catalog.object(name)?.attributes);
      level = merge(objects.filter((attrs) => attrs !== undefined));
      levels.set(key, level);
    }
    return level;
  };
  const rootNames = [...root.keys()].sort();

  function unknown(steps: readonly FieldStep[], at: number, level: Level): UnknownField {
    const key = (steps[at] as { k: string }).k;
    const atRoot = at === firstKey(steps);
    const before = formatPath(steps.slice(0, at));
    let best = [
      ...steps.slice(0, at),
      { t: 'key', k: closest(key, atRoot ? rootNames : [...level.keys()]) } as FieldStep,
    ];
    // The rest of the path, when it fits the corrected key, makes the whole suggestion.
    const whole = [...best, ...steps.slice(at + 1)];
    if (check(whole) === undefined) best = whole;
    let suggestion = formatPath(best);
    if (atRoot && extraTopLevel.length > 0) {
      const written = formatPath(steps);
      const extra = closest(written, extraTopLevel);
      if (distance(written, extra) < distance(written, suggestion)) suggestion = extra;
    }
    const where = atRoot
      ? `no supported OCSF class has '${key}'${extraTopLevel.length ? ' and it is no envelope field' : ''}`
      : `'${before}' has no field '${key}' in any supported OCSF class`;
    return { at, message: `unknown field: ${where}; closest known field: '${suggestion}'`, closest: suggestion };
  }

  function check(steps: readonly FieldStep[]): UnknownField | undefined {
    let level: Level = root;
    for (let i = 0; i < steps.length; i++) {
      const step = steps[i]!;
      if (step.t !== 'key') continue;
      const found = level.get(step.k);
      if (!found) return unknown(steps, i, level);
      if (found.some(isFree)) return undefined;
      const objects = found.flatMap((a) => (a.objectType !== undefined ? [a.objectType] : []));
      if (objects.length === 0) {
        const rest = steps.slice(i + 1).findIndex((s) => s.t === 'key');
        if (rest < 0) return undefined;
        const path = formatPath(steps.slice(0, i + 1));
        const k = (steps[i + 1 + rest] as { k: string }).k;
        return {
          at: i + 1 + rest,
          message: `unknown field: '${path}' is a value (${found[0]!.type}) with no field '${k}'; closest known field: '${path}'`,
          closest: path,
        };
      }
      level = levelOf(objects);
    }
    return undefined;
  }

  return { topLevel: () => rootNames, check };
}

function firstKey(steps: readonly FieldStep[]): number {
  return steps.findIndex((s) => s.t === 'key');
}
