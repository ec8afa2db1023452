// Routes that can never match (docs/routing.md, Unreachable routes): a route after an enabled
// final route whose condition holds for every event the later route's condition holds for
// never sees an event, since the final route stops evaluation first. Decided on the trees, not
// on events, by a sound but incomplete rule: a condition implies another when they are equal
// (canonical JSON), when the other is null (every event), when one of its own conjuncts (all)
// implies the other, when each of its disjuncts (any) does, when it implies each conjunct of
// the other or one of its disjuncts. What the rule cannot prove is not reported.
import { canonicalJson } from '../../core/canonical.js';

export interface ReachRoute {
  id: string;
  name: string;
  position: number;
  enabled: boolean;
  final: boolean;
  condition: unknown;
}

export interface RouteWarning {
  /** route.unreachable: this route never matches; route.shadows: later routes never match because of this one. */
  code: 'route.unreachable' | 'route.shadows';
  message: string;
  /** The other route: the shadowing one (unreachable) or the shadowed one (shadows). */
  route_id: string;
  route_name: string;
  position: number;
}

const MAX_STEPS = 10_000;

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function parts(c: unknown, key: 'all' | 'any'): unknown[] | undefined {
  return isRecord(c) && Object.keys(c).length === 1 && Array.isArray(c[key]) ? (c[key] as unknown[]) : undefined;
}

/** Whether every event `a` holds for, `b` holds for too (proved from the trees' shapes; false when unproved). */
export function implies(a: unknown, b: unknown, budget = { steps: MAX_STEPS }): boolean {
  if (--budget.steps < 0) return false;
  if (b === null || b === undefined) return true;
  const allB = parts(b, 'all');
  if (allB && allB.length === 0) return true;
  if (a === null || a === undefined) return false;
  if (canonicalJson(a) === canonicalJson(b)) return true;
  if (allB && allB.every((x) => implies(a, x, budget))) return true;
  const anyA = parts(a, 'any');
  if (anyA && anyA.length > 0 && anyA.every((x) => implies(x, b, budget))) return true;
  const allA = parts(a, 'all');
  if (allA && allA.some((x) => implies(x, b, budget))) return true;
  const anyB = parts(b, 'any');
  if (anyB && anyB.some((x) => implies(a, x, budget))) return true;
  return false;
}

/** The warnings of one organization's routes, by route id (routes without any are absent). */
export function routeWarnings(routes: readonly ReachRoute[]): Map<string, RouteWarning[]> {
  const ordered = [...routes].sort((x, y) => x.position - y.position);
  const out = new Map<string, RouteWarning[]>();
  const add = (id: string, w: RouteWarning) => out.set(id, [...(out.get(id) ?? []), w]);
  const budget = { steps: MAX_STEPS };
  ordered.forEach((later, j) => {
    for (const earlier of ordered.slice(0, j)) {
      if (!earlier.enabled || !earlier.final || !implies(later.condition, earlier.condition, budget)) continue;
      const every = earlier.condition === null || earlier.condition === undefined;
      add(later.id, {
        code: 'route.unreachable',
        message:
          `Never matches: route "${earlier.name}" (position ${earlier.position}) is final and matches ` +
          (every ? 'every event' : 'every event this route would match') +
          ', so evaluation stops there first. Move this route above it, or make that route not final.',
        route_id: earlier.id,
        route_name: earlier.name,
        position: earlier.position,
      });
      add(earlier.id, {
        code: 'route.shadows',
        message: `Route "${later.name}" (position ${later.position}) after this final route never matches.`,
        route_id: later.id,
        route_name: later.name,
        position: later.position,
      });
      break;
    }
  });
  return out;
}
