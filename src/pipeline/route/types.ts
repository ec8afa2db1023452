// Routes as the one pass sees them, and what routing a batch produces. The condition
// language is docs/conditions.md (pipeline/conditions), the transforms docs/routing.md;
// compile.ts turns an organization's ordered routes into one plan function, compiled once
// per change.
import type { Condition } from '../conditions/types.js';
import type { NormalizedRecord } from '../envelope.js';

export { CONDITION_OPS, type Condition, type ConditionOp, type FieldCondition } from '../conditions/types.js';

export type Transform =
  | { type: 'drop_fields'; fields: string[] }
  | { type: 'keep_fields'; fields: string[] }
  /** Keeps about `rate` (0..1] of the events, chosen by a hash of the event id (stable across retries). */
  | { type: 'sample'; rate: number }
  /** Masks personal data (pipeline/mask.ts) in the named fields, or everywhere when fields is absent. */
  | { type: 'mask'; fields?: string[] };

/** A route as stored (routes table), routing's input. */
export interface RouteSpec {
  id: string;
  organization_id: number;
  name: string;
  position: number;
  enabled: boolean;
  /** null matches every event. */
  condition: Condition | null;
  transforms: Transform[];
  /** Empty: matching events are dropped on purpose (filtered, reason dropped_by_route). */
  destination_ids: string[];
  /** true: a match stops evaluation; false: later routes may match too (fan-out). */
  final: boolean;
  version: number;
}

export type FilterReason = 'no_route' | 'sampled_out' | 'dropped_by_route';

/** One copy of one event for one destination. */
export interface Copy {
  /** Index of the record in the batch. */
  index: number;
  routeId: string;
  /** The OCSF event after the route's transforms, as JSON text. */
  line: string;
}

export interface RoutingPlan {
  /** Per destination id, its copies in record order. An event reaches a destination at most once (the first route that sends it there wins). */
  copies: Map<string, Copy[]>;
  /** Per record: the routes that matched, in order, and why it was filtered when it has no copy. */
  records: { routes: string[]; filtered?: FilterReason }[];
  /** Per route id: events matched, events its sample transform left out. */
  matched: Map<string, number>;
  sampledOut: Map<string, number>;
  /** Events with no copy, by reason. */
  filtered: Record<FilterReason, number>;
}

/** An organization's enabled routes compiled in order. `texts[i]`, when given, is the JSON text of records[i].ocsf (untransformed copies carry it as it is). */
export interface CompiledRoutes {
  plan(records: NormalizedRecord[], texts?: readonly string[]): RoutingPlan;
}
