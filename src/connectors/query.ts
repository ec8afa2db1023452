// Live queries (docs/live-queries.md): which part of a planned query a vendor can filter
// itself. The query names OCSF fields; the vendor filters its own fields. The bridge is the
// live mapping of the stream: a condition on an OCSF field is pushed down only when the
// mapping fills that field from one vendor field by a plain copy (no cast, lookup, template,
// condition, default or fallback), exactly once in the document, and the vendor declares it
// can filter that field with that operator (connectors/<vendor>/query.ts).
//
// What is pushed down is a NECESSARY condition: every event the query matches also matches
// the vendor filter (the vendor may return more: a case-insensitive `eq`, a category match).
// The whole condition is always applied again to the normalized rows, so a wider vendor
// filter costs only transfer, never a wrong answer. Hence: NOT is never pushed (a vendor's
// negation of a missing field differs), an OR with a part the vendor cannot filter pulls
// everything, and a value that is not text stays local.
import type { Condition } from '../pipeline/conditions/types.js';

export type PushOp = 'eq' | 'prefix' | 'contains';

/** A vendor field a stream's filter can test, with the raw path the mapping reads it from. */
export interface VendorField {
  /** The raw event path (as a mapping's `from` names it): `actor.alternateId`. */
  path: string;
  /** The vendor's name for it in its filter language, when it differs from the path. */
  name?: string;
  ops: readonly PushOp[];
}

/** A necessary condition over vendor fields; `null` stands for "no constraint". */
export type VendorFilter =
  { field: VendorField; op: PushOp; value: string } | { and: VendorFilter[] } | { or: VendorFilter[] };

export interface RenderedFilter {
  /** Request parameters the connector adds to its first request of the window. */
  params: Record<string, string>;
  /** The vendor filter as sent (for the answer and the docs); null when nothing was pushed. */
  text: string | null;
}

export interface LiveQuerySpec {
  /** The filterable vendor fields per stream (what /api/providers/query-capabilities lists). */
  streams: Readonly<Record<string, readonly VendorField[]>>;
  /**
   * Raw paths the API's rows never carry (another form of the same record, such as Graph's Azure
   * Monitor export under `properties`): a mapping that reads them first, in a fallback list or
   * another assignment to the same attribute, still fills the attribute from the vendor field.
   */
  absent?: readonly string[];
  /** Whether the vendor's filter has OR. */
  or: boolean;
  /** One line on how the filter is sent (for the capabilities answer). */
  parameter: string;
  /** Renders a necessary condition; a part the vendor cannot express is dropped (it stays local). */
  render(stream: string, filter: VendorFilter | null): RenderedFilter;
}

interface PlainAssignment {
  target?: unknown;
  from?: unknown;
  set?: unknown;
  [k: string]: unknown;
}

const PLAIN_KEYS = new Set(['target', 'from', 'on_error']);

/** Every assignment of a mapping document (defaults, rules, nested `set`). */
function assignments(doc: Record<string, unknown>): PlainAssignment[] {
  const out: PlainAssignment[] = [];
  const walk = (list: unknown, depth: number) => {
    if (!Array.isArray(list) || depth > 8) return;
    for (const a of list) {
      if (typeof a !== 'object' || a === null) continue;
      out.push(a as PlainAssignment);
      walk((a as PlainAssignment).set, depth + 1);
    }
  };
  walk(doc.defaults, 0);
  if (Array.isArray(doc.rules)) for (const r of doc.rules) walk((r as { set?: unknown }).set, 0);
  return out;
}

/**
 * Where a document's parse steps write: `into` paths, or undefined when a step writes at the
 * top level (where a parsed field may replace any vendor field).
 */
function parsedRoots(doc: Record<string, unknown>, never: (from: unknown) => boolean): string[] | undefined {
  const roots: string[] = [];
  for (const step of Array.isArray(doc.parse) ? (doc.parse as unknown[]) : []) {
    // A step that reads what the API's rows never carry never runs on them.
    if (never((step as { from?: unknown } | null)?.from)) continue;
    const into = (step as { into?: unknown } | null)?.into;
    if (typeof into !== 'string' || into === '') return undefined;
    roots.push(into);
  }
  return roots;
}

/**
 * The OCSF fields whose conditions a vendor can filter, with the vendor field each comes
 * from, according to a mapping document. A field a parse step writes is not the vendor's: a
 * document whose parse steps write at the top level pushes nothing down, and one whose steps
 * write `into` a path pushes down only copies from outside it.
 */
export function pushdownFields(
  fields: readonly VendorField[],
  doc: Record<string, unknown> | undefined,
  absent: readonly string[] = [],
): Map<string, VendorField> {
  const out = new Map<string, VendorField>();
  const under = (roots: readonly string[], from: string) =>
    roots.some((root) => from === root || from.startsWith(`${root}.`) || from.startsWith(`${root}[`));
  const never = (from: unknown) => typeof from === 'string' && under(absent, from);
  const parsed = doc ? parsedRoots(doc, never) : undefined;
  if (!doc || !parsed) return out;
  const byPath = new Map(fields.map((f) => [f.path, f]));
  // Per target, the vendor field of its one plain copy; a target some other assignment may fill
  // from what the API's rows carry (a second copy, a cast, a fallback) is not the vendor field's.
  const found = new Map<string, VendorField | null>();
  for (const a of assignments(doc)) {
    if (typeof a.target !== 'string') continue;
    const froms = typeof a.from === 'string' ? [a.from] : Array.isArray(a.from) ? a.from : [];
    const live = froms.filter((f) => !never(f));
    // Only reads of what the API's rows never carry (and no default): it never fills the attribute live.
    if (froms.length > 0 && live.length === 0 && a.default === undefined) continue;
    const plain =
      !a.target.includes('[') &&
      Object.keys(a).every((k) => PLAIN_KEYS.has(k)) &&
      live.length === 1 &&
      typeof live[0] === 'string' &&
      !under(parsed, live[0]);
    const vendor = plain ? byPath.get(live[0] as string) : undefined;
    found.set(a.target, found.has(a.target) || !vendor ? null : vendor);
  }
  for (const [target, vendor] of found) if (vendor) out.set(target, vendor);
  return out;
}

function leaf(field: VendorField, op: PushOp, value: unknown): VendorFilter | null {
  if (typeof value !== 'string' || value === '' || !field.ops.includes(op)) return null;
  return { field, op, value };
}

/** The necessary condition of `cond` the pushdown fields can express (null: none). */
export function necessary(cond: Condition | null, fields: Map<string, VendorField>, or: boolean): VendorFilter | null {
  if (cond === null) return null;
  if ('all' in cond) {
    const parts = cond.all.map((c) => necessary(c, fields, or)).filter((c): c is VendorFilter => c !== null);
    return parts.length === 0 ? null : parts.length === 1 ? parts[0]! : { and: parts };
  }
  if ('any' in cond) {
    if (!or || cond.any.length === 0) return null;
    const parts = cond.any.map((c) => necessary(c, fields, or));
    // One branch the vendor cannot filter may match anything: the whole OR stays local.
    if (parts.some((p) => p === null)) return null;
    return parts.length === 1 ? parts[0]! : { or: parts as VendorFilter[] };
  }
  if ('not' in cond) return null;
  const field = fields.get(cond.field);
  if (!field) return null;
  switch (cond.op) {
    case 'eq':
      return leaf(field, 'eq', cond.value);
    case 'in': {
      const values = Array.isArray(cond.value) ? cond.value : [];
      if (values.length === 0 || values.some((v) => typeof v !== 'string' || v === '') || !field.ops.includes('eq'))
        return null;
      if (values.length === 1) return leaf(field, 'eq', values[0]);
      return or ? { or: values.map((v) => ({ field, op: 'eq' as const, value: v as string })) } : null;
    }
    case 'prefix':
      return leaf(field, 'prefix', cond.value) ?? leaf(field, 'contains', cond.value);
    case 'suffix':
    case 'contains':
      return leaf(field, 'contains', cond.value);
    default:
      return null;
  }
}

/** The leaves joined by AND at the top of a filter (an OR or a single leaf is one part). */
export function conjuncts(filter: VendorFilter | null): VendorFilter[] {
  if (filter === null) return [];
  return 'and' in filter ? filter.and.flatMap(conjuncts) : [filter];
}

/** The vendor name of a field. */
export function nameOf(field: VendorField): string {
  return field.name ?? field.path;
}

export type VendorLeaf = Extract<VendorFilter, { field: VendorField }>;

export function isLeaf(f: VendorFilter): f is VendorLeaf {
  return 'field' in f;
}

/** Nothing pushed down: the vendor returns the whole window. */
export const NOTHING: RenderedFilter = Object.freeze({ params: Object.freeze({}), text: null });
