// A query as a user writes it (docs/search.md): a time range (absolute or relative), a
// condition (the JSON tree of docs/conditions.md, or its text form), the fields to return, a
// sort, a limit, and aggregations. plan() checks it whole, reporting every problem with its
// location (and, for the text form, its line and column), fields against the OCSF catalog with
// the closest known name, and returns what the store and the live path execute.
import { AppError } from '../../../core/errors.js';
import type { Condition, FieldCondition } from '../../../pipeline/conditions/types.js';
import {
  compileRecordCondition,
  fieldProblem,
  type RecordPredicate,
  type RouteProblem,
} from '../../../pipeline/route/conditions.js';
import { compileField } from '../../../pipeline/route/paths.js';
import { parseQueryText, QueryTextError } from '../../../pipeline/conditions/text.js';

export type Aggregation =
  | { type: 'count' }
  | { type: 'count_by'; fields: string[]; size?: number }
  | { type: 'top'; field: string; size?: number }
  | { type: 'histogram'; interval: string };

export interface SortKey {
  field: string;
  order?: 'asc' | 'desc';
}

export interface TimeRange {
  /** RFC 3339, or relative to now: `now`, `now-15m`, `now-7d`. */
  from?: string;
  to?: string;
  /** Shorthand for from = now - last, to = now: `15m`, `24h`, `7d`. */
  last?: string;
}

export interface QueryInput {
  organization_id?: number;
  /** Enterprise: run against the vendor through this integration instead of the event store. */
  integration_id?: number;
  /** With integration_id: the stream to query (default: the platform's first). */
  stream?: string;
  time?: TimeRange;
  /** The condition as a tree (docs/conditions.md). */
  where?: Condition;
  /** The condition as text: `class_uid = 3002 and actor.user.name ~ "adm*"`. */
  query?: string;
  fields?: string[];
  sort?: SortKey[];
  limit?: number;
  aggregations?: Aggregation[];
}

export interface PlannedQuery {
  from: Date;
  to: Date;
  condition: Condition | null;
  /** The condition compiled for events in memory (live queries filter with it). */
  predicate: RecordPredicate;
  fields: string[] | null;
  sort: Required<SortKey>[];
  limit: number;
  aggregations: Aggregation[];
}

export interface QueryProblem {
  location: string;
  message: string;
  closest?: string;
  line?: number;
  column?: number;
  offset?: number;
}

export const QUERY_LIMITS = {
  fields: 100,
  sort: 5,
  aggregations: 10,
  countByFields: 3,
  bucketSize: 1_000,
  histogramBuckets: 2_000,
  defaultLimit: 100,
  defaultRange: '24h',
} as const;

const UNIT_MS: Record<string, number> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };
const DURATION = /^(\d{1,6})(s|m|h|d|w)$/;

/** `15m` → 900000; undefined when it is not a duration. */
export function parseDuration(text: string): number | undefined {
  const m = DURATION.exec(text.trim());
  return m ? Number(m[1]) * UNIT_MS[m[2]!]! : undefined;
}

function parseInstant(text: string, now: Date): Date | undefined {
  const t = text.trim();
  if (t === 'now') return now;
  const rel = /^now-(.+)$/.exec(t);
  if (rel) {
    const ms = parseDuration(rel[1]!);
    return ms === undefined ? undefined : new Date(now.getTime() - ms);
  }
  // RFC 3339 with a time zone: a bare date or a local time would be read in the server's zone.
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/i.test(t)) return undefined;
  const d = new Date(t);
  return Number.isNaN(d.getTime()) ? undefined : d;
}

export function invalidQuery(problems: QueryProblem[]): AppError {
  const first = problems[0]!;
  const where = first.line !== undefined ? ` (line ${first.line}, column ${first.column})` : '';
  return new AppError('search.invalid_query', {
    detail: `${first.location}: ${first.message}${where}`,
    details: { errors: problems },
  });
}

/** Checks a path a query names outside its condition (fields, sort, aggregations). */
function checkPath(path: string, location: string, problems: QueryProblem[]): void {
  try {
    compileField(path, 'ocsf');
  } catch (e) {
    const p = fieldProblem(location, e);
    problems.push(
      p.closest === undefined ? { location, message: p.message } : { location, message: p.message, closest: p.closest },
    );
  }
}

function timeRange(
  time: TimeRange | undefined,
  now: Date,
  maxRangeMs: number,
  problems: QueryProblem[],
): { from: Date; to: Date } {
  const t = time ?? { last: QUERY_LIMITS.defaultRange };
  let from: Date | undefined;
  let to: Date | undefined = now;
  if (t.last !== undefined) {
    if (t.from !== undefined || t.to !== undefined)
      problems.push({ location: 'time', message: 'give last, or from and to, not both' });
    const ms = parseDuration(t.last);
    if (ms === undefined || ms === 0)
      problems.push({
        location: 'time.last',
        message: 'must be a duration such as 15m, 24h or 7d (units s, m, h, d, w)',
      });
    else from = new Date(now.getTime() - ms);
  } else {
    from = t.from === undefined ? undefined : parseInstant(t.from, now);
    if (t.from === undefined) problems.push({ location: 'time.from', message: 'is required (or give time.last)' });
    else if (!from)
      problems.push({
        location: 'time.from',
        message: 'must be an RFC 3339 time with a zone (2026-11-20T08:00:00Z) or relative to now (now-7d)',
      });
    if (t.to !== undefined) {
      to = parseInstant(t.to, now);
      if (!to)
        problems.push({
          location: 'time.to',
          message: 'must be an RFC 3339 time with a zone or relative to now (now, now-1h)',
        });
    }
  }
  if (from && to) {
    if (from.getTime() >= to.getTime()) problems.push({ location: 'time', message: 'from must be before to' });
    else if (to.getTime() - from.getTime() > maxRangeMs)
      problems.push({
        location: 'time',
        message: `a query covers at most ${Math.round(maxRangeMs / 86_400_000)} days`,
      });
  }
  return { from: from ?? now, to: to ?? now };
}

function conditionOf(
  input: QueryInput,
  problems: QueryProblem[],
): { condition: Condition | null; predicate?: RecordPredicate } {
  if (input.where !== undefined && input.query !== undefined) {
    problems.push({ location: 'query', message: 'give the condition as where (JSON) or as query (text), not both' });
    return { condition: null };
  }
  let condition: Condition | null = input.where ?? null;
  let at = 'where';
  let offsets: Map<FieldCondition, number> | undefined;
  let position: ((offset: number) => { line: number; column: number }) | undefined;
  if (input.query !== undefined && input.query.trim() !== '') {
    try {
      const parsed = parseQueryText(input.query);
      condition = parsed.condition;
      offsets = parsed.offsets;
      position = parsed.position;
      at = 'query';
    } catch (e) {
      if (!(e instanceof QueryTextError)) throw e;
      problems.push({
        location: 'query',
        message: e.problem.message,
        line: e.problem.line,
        column: e.problem.column,
        offset: e.problem.offset,
      });
      return { condition: null };
    }
  }
  const found: RouteProblem[] = [];
  const predicate = compileRecordCondition(condition, found, at, 'ocsf');
  for (const p of found) {
    const problem: QueryProblem = {
      location: p.path,
      message: p.message,
      ...(p.closest === undefined ? {} : { closest: p.closest }),
    };
    if (offsets && position) {
      // A text query's problem points at the leaf's field in the text.
      const leaf = leafAt(condition, p.path.slice(at.length));
      const offset = leaf ? offsets.get(leaf) : undefined;
      if (offset !== undefined) Object.assign(problem, { location: 'query', offset, ...position(offset) });
    }
    problems.push(problem);
  }
  return { condition, ...(predicate ? { predicate } : {}) };
}

/** The leaf a located path (`.all[1].any[0].field`) names in the tree. */
function leafAt(cond: Condition | null, path: string): FieldCondition | undefined {
  let node: unknown = cond;
  for (const m of path.matchAll(/\.?(all|any|not|field|op|value)|\[(\d+)\]/g)) {
    if (m[2] !== undefined) node = (node as unknown[])[Number(m[2])];
    else if (m[1] === 'all' || m[1] === 'any' || m[1] === 'not') node = (node as Record<string, unknown>)[m[1]];
    else break;
  }
  return node && typeof node === 'object' && 'field' in node ? (node as FieldCondition) : undefined;
}

function checkAggregations(aggs: Aggregation[], range: { from: Date; to: Date }, problems: QueryProblem[]): void {
  if (aggs.length > QUERY_LIMITS.aggregations)
    problems.push({ location: 'aggregations', message: `at most ${QUERY_LIMITS.aggregations} aggregations` });
  aggs.forEach((a, i) => {
    const at = `aggregations[${i}]`;
    if (a.type === 'count_by') {
      if (a.fields.length === 0 || a.fields.length > QUERY_LIMITS.countByFields)
        problems.push({
          location: `${at}.fields`,
          message: `count_by groups by 1 to ${QUERY_LIMITS.countByFields} fields`,
        });
      a.fields.forEach((f, j) => {
        checkPath(f, `${at}.fields[${j}]`, problems);
        if (f.includes('[*]'))
          problems.push({
            location: `${at}.fields[${j}]`,
            message: 'count_by groups by single values; use top for every element of a list ([*])',
          });
      });
    } else if (a.type === 'top') {
      checkPath(a.field, `${at}.field`, problems);
    } else if (a.type === 'histogram') {
      const ms = parseDuration(a.interval);
      if (ms === undefined || ms === 0)
        problems.push({ location: `${at}.interval`, message: 'must be a duration such as 1m, 1h or 1d' });
      else if ((range.to.getTime() - range.from.getTime()) / ms > QUERY_LIMITS.histogramBuckets) {
        problems.push({
          location: `${at}.interval`,
          message: `makes more than ${QUERY_LIMITS.histogramBuckets} buckets over the time range; choose a longer interval`,
        });
      }
    }
  });
}

/** Checks a query whole; throws 422 search.invalid_query listing every problem. */
export function planQuery(
  input: QueryInput,
  opts: { now: Date; maxRangeDays: number; maxLimit: number },
): PlannedQuery {
  const problems: QueryProblem[] = [];
  const range = timeRange(input.time, opts.now, opts.maxRangeDays * 86_400_000, problems);
  const { condition, predicate } = conditionOf(input, problems);
  const fields = input.fields ?? null;
  if (fields) {
    if (fields.length > QUERY_LIMITS.fields)
      problems.push({ location: 'fields', message: `at most ${QUERY_LIMITS.fields} fields` });
    fields.forEach((f, i) => checkPath(f, `fields[${i}]`, problems));
  }
  const sort = (input.sort ?? [{ field: 'time', order: 'desc' }]).map(
    (s) => ({ field: s.field, order: s.order ?? 'asc' }) as Required<SortKey>,
  );
  if (sort.length > QUERY_LIMITS.sort)
    problems.push({ location: 'sort', message: `at most ${QUERY_LIMITS.sort} sort keys` });
  sort.forEach((s, i) => {
    checkPath(s.field, `sort[${i}].field`, problems);
    if (s.field.includes('[*]'))
      problems.push({ location: `sort[${i}].field`, message: 'a sort key is one value: [*] is not allowed' });
  });
  const limit = input.limit ?? QUERY_LIMITS.defaultLimit;
  if (!Number.isInteger(limit) || limit < 0 || limit > opts.maxLimit)
    problems.push({ location: 'limit', message: `must be an integer from 0 to ${opts.maxLimit} (the result cap)` });
  const aggregations = input.aggregations ?? [];
  checkAggregations(aggregations, range, problems);
  if (problems.length > 0 || !predicate)
    throw invalidQuery(problems.length ? problems : [{ location: 'where', message: 'the condition is not valid' }]);
  return { ...range, condition, predicate, fields, sort, limit, aggregations };
}
