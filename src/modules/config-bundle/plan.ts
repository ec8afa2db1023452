// What an import plans, and the helpers every kind of object shares. A kind's planner only
// reads; its writes wait in each step's apply, which the service runs later, in plan order.
import type { Actor } from '../../core/actor.js';
import { canonicalJson } from '../../core/canonical.js';
import { scopeOf, type Scope } from '../../core/scope.js';
import type { ConfigBundle, ImportItem } from './schema.js';
import type { BundlePorts, Current } from './snapshot.js';

export type Json = Record<string, unknown>;
type Kind = ImportItem['kind'];

export interface Step {
  item: ImportItem;
  apply?: () => Promise<string | number | undefined>;
}

export interface PlanContext {
  deps: BundlePorts;
  actor: Actor;
  scope: Scope;
  organizationId: number;
  doc: ConfigBundle;
  current: Current;
  /** The organization's configuration as it stands (current.bundle). */
  cur: ConfigBundle;
  secrets: Record<string, string>;
  step(
    kind: Kind,
    name: string,
    action: ImportItem['action'],
    extra?: Partial<ImportItem>,
    apply?: Step['apply'],
  ): void;
  /** Whether the request carries the secret a marker names. */
  given(ref: string): boolean;
  missing(refs: string[]): string[];
  // Ids by name, the organization's and those the apply creates: a later kind's apply refers
  // to objects an earlier one created (routes to destinations, policies to tables and sources).
  destIds: Map<string, string>;
  tableIds: Map<string, string>;
  sourceIds: Map<string, string>;
  /** Integration ids by lower-cased name (names are unique case-insensitively). */
  integrationIds: Map<string, number>;
  savedQueryIds: Map<string, string>;
}

/** A context whose step() appends to steps. */
export function planContext(
  deps: BundlePorts,
  actor: Actor,
  organizationId: number,
  doc: ConfigBundle,
  current: Current,
  secrets: Record<string, string>,
  steps: Step[],
): PlanContext {
  const given = (ref: string) => Object.prototype.hasOwnProperty.call(secrets, ref);
  return {
    deps,
    actor,
    scope: scopeOf(actor),
    organizationId,
    doc,
    current,
    cur: current.bundle,
    secrets,
    step: (kind, name, action, extra = {}, apply) => {
      steps.push({
        item: { kind, name, action, ...extra },
        ...(action === 'create' || action === 'update' ? { apply } : {}),
      });
    },
    given,
    missing: (refs) => refs.filter((r) => !given(r)),
    destIds: new Map(current.ids.destination),
    tableIds: new Map(current.ids.table),
    sourceIds: new Map(current.ids.source),
    integrationIds: new Map([...current.ids.integration].map(([n, id]) => [n.toLowerCase(), id])),
    savedQueryIds: new Map(current.ids.savedQuery),
  };
}

/** Field names whose values differ (versions and informative fields left out). */
export function changed(a: Json, b: Json, ignore: string[] = ['version']): string[] {
  return [...new Set([...Object.keys(a), ...Object.keys(b)])]
    .filter((k) => !ignore.includes(k) && canonicalJson(a[k] ?? null) !== canonicalJson(b[k] ?? null))
    .sort();
}

/** Every secret marker in a value, with its path. */
export function markers(v: unknown, path: string[] = [], out: { path: string[]; ref: string }[] = []) {
  if (typeof v !== 'object' || v === null) return out;
  const ref = (v as Json).$secret;
  if (typeof ref === 'string' && Object.keys(v).length === 1) out.push({ path, ref });
  else for (const [k, c] of Object.entries(v)) markers(c, [...path, k], out);
  return out;
}

export function pick(o: Record<string, unknown>, keys: string[]): Json {
  return Object.fromEntries(keys.filter((k) => k in o).map((k) => [k, o[k]]));
}
