// Field discovery over raw samples: every leaf path seen (nested objects as dotted paths,
// array elements as `[]`), the JSON types it held, in how many samples it appeared, and
// whether the live mapping reads it. Paths are spelled as CompiledMapping.reads and drift
// spell them (joinPathKey: keys holding `.`, `[`, `]` or `"` are quoted as ["..."]).
import { joinPathKey } from '../../pipeline/normalize/paths.js';

export type JsonType = 'string' | 'number' | 'boolean' | 'null' | 'object' | 'array';

export interface DiscoveredField {
  path: string;
  /** Samples in which the path held a value of each type. */
  types: Partial<Record<JsonType, number>>;
  /** Samples in which the path appears. */
  count: number;
  /** count / samples, 0..1. */
  frequency: number;
  /** The live mapping reads the path or one of its ancestors. */
  mapped: boolean;
  /** A value seen at the path, taken from the masked sample. */
  example: unknown;
}

export interface Discovery {
  samples: number;
  fields: DiscoveredField[];
  /** More distinct paths than MAX_FIELDS were seen; the rest are left out. */
  truncated: boolean;
}

export const MAX_FIELDS = 2000;
const MAX_DEPTH = 32;
const MAX_EXAMPLE_CHARS = 200;
const NO_READS: ReadonlySet<string> = new Set();

function typeOf(v: unknown): JsonType {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  const t = typeof v;
  return t === 'string' || t === 'number' || t === 'boolean' ? t : 'object';
}

type Visit = (path: string, value: unknown, mapped: boolean) => void;

/**
 * Calls `visit` for each leaf of a JSON value (scalars, and empty or too deep containers)
 * with whether `reads` covers it: a read covers its whole subtree.
 */
function walk(
  value: unknown,
  path: string,
  depth: number,
  covered: boolean,
  reads: ReadonlySet<string>,
  visit: Visit,
): void {
  const mapped = covered || (path !== '' && reads.has(path));
  if (Array.isArray(value)) {
    if (value.length === 0 || depth >= MAX_DEPTH) return visit(path, value, mapped);
    for (const el of value) walk(el, `${path}[]`, depth + 1, mapped, reads, visit);
    return;
  }
  if (value !== null && typeof value === 'object') {
    const keys = Object.keys(value);
    if (keys.length === 0 || depth >= MAX_DEPTH) return visit(path, value, mapped);
    for (const k of keys)
      walk((value as Record<string, unknown>)[k], joinPathKey(path, k), depth + 1, mapped, reads, visit);
    return;
  }
  visit(path, value, mapped);
}

function exampleOf(v: unknown): unknown {
  if (typeof v === 'string' && v.length > MAX_EXAMPLE_CHARS) return `${v.slice(0, MAX_EXAMPLE_CHARS)}…`;
  // Containers reach here only empty or past the depth limit: shown as their empty form.
  if (Array.isArray(v)) return [];
  if (v !== null && typeof v === 'object') return {};
  return v;
}

interface Tally {
  mapped: boolean;
  types: Map<JsonType, number>;
  count: number;
  example: unknown;
  hasExample: boolean;
}

/**
 * Discovers the fields of `samples`. Types and counts come from the raw events; examples
 * come from `mask(raw)` (samples hold personal data), which must keep the event's shape.
 */
export function discoverFields(
  samples: readonly Record<string, unknown>[],
  reads: ReadonlySet<string>,
  mask: (raw: Record<string, unknown>) => Record<string, unknown>,
): Discovery {
  const tallies = new Map<string, Tally>();
  let truncated = false;
  for (const raw of samples) {
    const seen = new Map<string, { types: Set<JsonType>; mapped: boolean }>();
    walk(raw, '', 0, false, reads, (path, value, mapped) => {
      if (!path) return; // an empty event has no fields
      let entry = seen.get(path);
      if (!entry) seen.set(path, (entry = { types: new Set(), mapped }));
      entry.types.add(typeOf(value));
    });
    let needExamples = false;
    for (const [path, { types, mapped }] of seen) {
      let tally = tallies.get(path);
      if (!tally) {
        if (tallies.size >= MAX_FIELDS) {
          truncated = true;
          continue;
        }
        tallies.set(path, (tally = { mapped, types: new Map(), count: 0, example: null, hasExample: false }));
      }
      tally.count++;
      for (const t of types) tally.types.set(t, (tally.types.get(t) ?? 0) + 1);
      if (!tally.hasExample) needExamples = true;
    }
    if (!needExamples) continue;
    walk(mask(raw), '', 0, false, NO_READS, (path, value) => {
      const tally = tallies.get(path);
      // The first non-null value seen is the example; null only when nothing else was.
      if (tally && !tally.hasExample && (value !== null || tally.example === null)) {
        tally.example = exampleOf(value);
        tally.hasExample = value !== null;
      }
    });
  }
  const n = samples.length;
  const fields = [...tallies.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([path, t]): DiscoveredField => ({
      path,
      types: Object.fromEntries([...t.types.entries()].sort(([a], [b]) => (a < b ? -1 : 1))),
      count: t.count,
      frequency: n === 0 ? 0 : Math.round((t.count / n) * 10_000) / 10_000,
      mapped: t.mapped,
      example: t.example,
    }));
  return { samples: n, fields, truncated };
}
