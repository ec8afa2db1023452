// An organization's ordered routes compiled into one plan function (docs/routing.md).
// Compiled once per change of the routes; plan() runs per batch on the dispatcher's hot
// path, so conditions are closures, destinations are numbered at compile time (an event's
// "already has a copy" is one typed-array slot, not a Set per event) and the OCSF text of
// an untransformed copy is cut from the stored line instead of serialized again.
import { at as textAt, readCondition } from '../conditions/input.js';
import type { NormalizedRecord } from '../envelope.js';
import { compileRecordCondition, type RecordPredicate, type RouteProblem } from './conditions.js';
import type { FieldRule } from './paths.js';
import { compileTransforms, hashId, keptBySample, type EventEdit } from './transforms.js';
import type { CompiledRoutes, Copy, FilterReason, RouteSpec, RoutingPlan } from './types.js';

export type { FieldRule, RouteProblem };

/** A stored route that does not compile (it was valid when written; the rules changed since, or the row was edited by hand). */
export class RouteCompileError extends Error {
  constructor(
    readonly routeId: string,
    readonly problems: RouteProblem[],
  ) {
    super(`route ${routeId} does not compile: ${problems.map((p) => `${p.path}: ${p.message}`).join('; ')}`);
    this.name = 'RouteCompileError';
  }
}

export interface ValidateOptions {
  /**
   * Per part, whether its field paths must exist in OCSF (FieldRule). Default `ocsf` for
   * both: a definition written by a user now. A part kept as stored (an edit that leaves it
   * unchanged, a rollback) takes `any`, so a route written before a path became refused
   * can still be renamed, disabled or rolled back.
   */
  fields?: { condition: FieldRule; transforms: FieldRule };
  /** Prefix of the problems' locations (dry-run drafts: `routes[2]`). */
  at?: string;
}

/**
 * Every problem of a route's condition and transforms, each with its location
 * (`condition.all[2].value`); empty when valid. The condition may be the tree or its text form
 * (conditions/text.ts): a problem of a text condition also says its line and column.
 */
export function validateRouteParts(
  condition: unknown,
  transforms: unknown,
  options: ValidateOptions = {},
): RouteProblem[] {
  const problems: RouteProblem[] = [];
  const fields = options.fields ?? { condition: 'ocsf', transforms: 'ocsf' };
  const prefix = options.at ? `${options.at}.` : '';
  const at = `${prefix}condition`;
  const input = readCondition(condition);
  if (input.syntax) {
    const { message, ...where } = input.syntax;
    problems.push({ path: at, message: `${message}${textAt(where)}`, ...where });
  } else {
    const found: RouteProblem[] = [];
    compileRecordCondition(input.condition, found, at, fields.condition);
    for (const p of found) {
      const where = input.locate(p.path.slice(at.length));
      if (!where) problems.push(p);
      else
        problems.push({
          ...p,
          message: `${p.message}${textAt(where)}`,
          line: where.line,
          column: where.column,
          offset: where.offset,
        });
    }
  }
  compileTransforms(transforms, problems, `${prefix}transforms`, fields.transforms);
  return problems;
}

/** The tree of a route's condition given as the tree or as text (validateRouteParts checks it first). */
export function routeCondition(condition: unknown): RouteSpec['condition'] {
  return (readCondition(condition ?? null).condition ?? null) as RouteSpec['condition'];
}

interface CompiledRoute {
  id: string;
  match: RecordPredicate;
  rate: number;
  edit: EventEdit | null;
  /** Destination numbers (see `destinations`), duplicates removed. */
  dests: number[];
  final: boolean;
}

// Every normalized line ends with `,"ocsf":<event JSON>}` (pipeline/normalize/stage.ts).
// Inside JSON strings a quote is escaped, so the first occurrence of this marker is the key.
const OCSF_MARKER = ',"ocsf":';

/** The OCSF text of a stored normalized line, or undefined when the line is not of that shape. */
export function ocsfText(line: string): string | undefined {
  const at = line.indexOf(OCSF_MARKER);
  if (at < 0) return undefined;
  let end = line.length;
  while (end > at && line.charCodeAt(end - 1) <= 32) end--; // a trailing newline or \r
  if (line.charCodeAt(end - 1) !== 125 /* } */) return undefined;
  return line.slice(at + OCSF_MARKER.length, end - 1);
}

export function compileRoutes(routes: RouteSpec[]): CompiledRoutes {
  const destinations: string[] = [];
  const destIndex = new Map<string, number>();
  const compiled: CompiledRoute[] = [];
  for (const route of routes) {
    // The engine passes enabled routes only; a disabled one slipping through still never matches.
    if (route.enabled === false) continue;
    const problems: RouteProblem[] = [];
    const match = compileRecordCondition(route.condition, problems);
    const transforms = compileTransforms(route.transforms, problems);
    if (!match || !transforms) throw new RouteCompileError(route.id, problems);
    const dests: number[] = [];
    for (const id of route.destination_ids) {
      let n = destIndex.get(id);
      if (n === undefined) {
        n = destinations.length;
        destinations.push(id);
        destIndex.set(id, n);
      }
      if (!dests.includes(n)) dests.push(n);
    }
    compiled.push({ id: route.id, match, rate: transforms.rate, edit: transforms.apply, dests, final: route.final });
  }
  const routeCount = compiled.length;

  function plan(records: NormalizedRecord[], texts?: readonly string[]): RoutingPlan {
    const lists: Copy[][] = destinations.map(() => []);
    // lastGiven[d] = index of the last record that got a copy for destination d.
    const lastGiven = new Int32Array(destinations.length).fill(-1);
    const matchedCount = new Float64Array(routeCount);
    const sampledCount = new Float64Array(routeCount);
    const filtered: Record<FilterReason, number> = { no_route: 0, sampled_out: 0, dropped_by_route: 0 };
    const out: RoutingPlan['records'] = new Array(records.length);

    for (let i = 0; i < records.length; i++) {
      const record = records[i]!;
      let matchedRoutes: string[] | null = null;
      let copied = false;
      let kept = false; // some matching route kept the event (not sampled out)
      let hash = -1;
      let plain: string | undefined; // the untransformed OCSF text, shared by every plain route
      for (let k = 0; k < routeCount; k++) {
        const route = compiled[k]!;
        if (!route.match(record)) continue;
        matchedCount[k]!++;
        (matchedRoutes ??= []).push(route.id);
        if (route.rate < 1) {
          if (hash < 0) hash = hashId(record.id);
          if (!keptBySample(hash, route.rate)) {
            sampledCount[k]!++;
            if (route.final) break;
            continue;
          }
        }
        kept = true;
        let line: string | undefined;
        for (const d of route.dests) {
          if (lastGiven[d] === i) continue; // an earlier route already sent this event there
          lastGiven[d] = i;
          if (line === undefined) {
            if (route.edit) line = JSON.stringify(route.edit(record.ocsf));
            else {
              plain ??= texts?.[i] ?? JSON.stringify(record.ocsf);
              line = plain;
            }
          }
          lists[d]!.push({ index: i, routeId: route.id, line });
          copied = true;
        }
        if (route.final) break;
      }
      if (copied) out[i] = { routes: matchedRoutes! };
      else {
        const reason: FilterReason = matchedRoutes === null ? 'no_route' : kept ? 'dropped_by_route' : 'sampled_out';
        filtered[reason]++;
        out[i] = { routes: matchedRoutes ?? [], filtered: reason };
      }
    }

    const copies = new Map<string, Copy[]>();
    for (let d = 0; d < destinations.length; d++) if (lists[d]!.length > 0) copies.set(destinations[d]!, lists[d]!);
    const matched = new Map<string, number>();
    const sampledOut = new Map<string, number>();
    for (let k = 0; k < routeCount; k++) {
      const id = compiled[k]!.id;
      matched.set(id, matchedCount[k]!);
      sampledOut.set(id, sampledCount[k]!);
    }
    return { copies, records: out, matched, sampledOut, filtered };
  }

  return { plan };
}
