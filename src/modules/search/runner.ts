// Executing one search run (a job on the search queue): its count, its rows and each
// aggregation, one statement each, the progress written after each and a cancellation looked
// for between them. The result and its CSV are stored encoded with their expiry times; a
// failure is recorded on the run (the history says why), never lost.
import type { Clock } from '../../core/clock.js';
import { csvRow, type CsvValue } from '../../core/csv.js';
import type { Logger } from '../../platform/logger.js';
import { encodeRecords } from '../../pipeline/batch-codec.js';
import { parseDuration, planQuery, type PlannedQuery, type QueryInput } from './query/definition.js';
import type { RunRow, SearchStore } from './store.js';
import type { Bucket, StoredRow, StoreQueries, StoreScope } from './store-query.js';

export type AggregationResult =
  | { type: 'count'; value: number }
  | { type: 'count_by'; fields: string[]; buckets: Bucket[] }
  | { type: 'top'; field: string; values: { value: unknown; count: number }[] }
  | { type: 'histogram'; interval: string; buckets: { start: string; count: number }[] };

export interface SearchResult {
  rows: StoredRow[];
  aggregations: AggregationResult[];
  /** Live queries: what the vendor was asked and how much was read (docs/live-queries.md). */
  live?: Record<string, unknown>;
}

/** What a live query (a vendor's API through its integration) answers for a planned query. */
export interface LiveExecutor {
  run(
    run: RunRow,
    input: QueryInput,
    plan: PlannedQuery,
    progress: (p: number) => Promise<void>,
    signal: AbortSignal,
  ): Promise<{ matched: number; result: SearchResult; detail?: Record<string, unknown> }>;
}

export interface RunnerDeps {
  store: SearchStore;
  queries: StoreQueries;
  clock: Clock;
  logger: Logger;
  config: { maxRows: number; resultHours: number; csvHours: number };
  live?: LiveExecutor;
  /** After a run ends (completed, failed or cancelled): schedules notify. */
  finished?: (run: RunRow) => Promise<void>;
}

const HOUR = 3_600_000;
const FINAL = new Set(['completed', 'failed', 'cancelled']);

export class SearchCancelled extends Error {
  constructor() {
    super('the search was cancelled');
    this.name = 'SearchCancelled';
  }
}

/** The CSV of a result: the envelope columns, then the asked fields or the common ones and the whole event. */
export function resultCsv(rows: StoredRow[], fields: string[] | null): string {
  const cell = (v: unknown): CsvValue =>
    v === null || v === undefined ? null : typeof v === 'object' ? JSON.stringify(v) : (v as CsvValue);
  const envelope = ['event_id', 'time', 'integration_id', 'stream'];
  const common = ['class_uid', 'severity_id', 'message'];
  const header = fields ? [...envelope, ...fields] : [...envelope, ...common, 'event'];
  let out = csvRow(header);
  for (const r of rows) {
    const head = [r.event_id, r.time, r.integration_id, r.stream];
    if (fields) out += csvRow([...head, ...fields.map((f) => cell(r.fields?.[f]))]);
    else out += csvRow([...head, ...common.map((f) => cell(r.event?.[f])), JSON.stringify(r.event ?? null)]);
  }
  return out;
}

export function createRunner(deps: RunnerDeps) {
  const { store, queries, clock, logger, config } = deps;

  async function storeQuery(
    run: RunRow,
    plan: PlannedQuery,
    progress: (p: number) => Promise<void>,
    check: () => Promise<void>,
  ): Promise<{ matched: number; result: SearchResult }> {
    const scope: StoreScope = {
      organizationIds: [run.organization_id],
      from: plan.from,
      to: plan.to,
      condition: plan.condition,
    };
    const steps = 2 + plan.aggregations.length;
    let done = 0;
    const step = async () => {
      done++;
      await progress(done / steps);
      await check();
    };
    const matched = await queries.count(scope);
    await step();
    const rows = await queries.rows(scope, { fields: plan.fields, sort: plan.sort, limit: plan.limit });
    await step();
    const aggregations: AggregationResult[] = [];
    for (const a of plan.aggregations) {
      if (a.type === 'count') aggregations.push({ type: 'count', value: matched });
      else if (a.type === 'count_by')
        aggregations.push({
          type: 'count_by',
          fields: a.fields,
          buckets: await queries.countBy(scope, a.fields, a.size ?? 100),
        });
      else if (a.type === 'top')
        aggregations.push({ type: 'top', field: a.field, values: await queries.top(scope, a.field, a.size ?? 10) });
      else
        aggregations.push({
          type: 'histogram',
          interval: a.interval,
          buckets: await queries.histogram(scope, parseDuration(a.interval)!),
        });
      await step();
    }
    return { matched, result: { rows, aggregations } };
  }

  /** Runs a queued (or, after a crash, running) search to its end. */
  async function execute(runId: string, signal: AbortSignal): Promise<void> {
    const run = await store.getRun(runId);
    if (!run || FINAL.has(run.state)) return;
    const started = clock.now();
    await store.updateRun(runId, { state: 'running', started_at: started, progress: 0 });
    const check = async () => {
      if (signal.aborted || (await store.cancelRequested(runId))) throw new SearchCancelled();
    };
    const progress = (p: number) => store.updateRun(runId, { progress: Math.min(1, p) });
    let patch: Partial<RunRow>;
    try {
      await check();
      const input = run.query as QueryInput;
      // The range was made absolute when the run was created: a retried job reads the same events.
      const plan = planQuery(input, { now: run.slot ?? run.created_at, maxRangeDays: 3650, maxLimit: config.maxRows });
      const out: { matched: number; result: SearchResult; detail?: Record<string, unknown> } =
        input.integration_id !== undefined
          ? // A live query looks for a cancellation after each vendor page, when it reports progress.
            await liveQuery(
              run,
              input,
              plan,
              async (p) => {
                await progress(p);
                await check();
              },
              signal,
            )
          : await storeQuery(run, plan, progress, check);
      const now = clock.now();
      const rows = out.result.rows;
      patch = {
        state: 'completed',
        progress: 1,
        matched: out.matched,
        returned: rows.length,
        capped: out.matched > rows.length,
        took_ms: now.getTime() - started.getTime(),
        result: await encodeRecords(JSON.stringify(out.detail ? { ...out.result, live: out.detail } : out.result)),
        csv: await encodeRecords(resultCsv(rows, plan.fields)),
        finished_at: now,
        result_expires_at: new Date(now.getTime() + config.resultHours * HOUR),
        csv_expires_at: new Date(now.getTime() + config.csvHours * HOUR),
      };
    } catch (err) {
      const now = clock.now();
      if (err instanceof SearchCancelled) {
        patch = { state: 'cancelled', finished_at: now, took_ms: now.getTime() - started.getTime() };
      } else {
        const message = err instanceof Error ? err.message : String(err);
        logger.warn({ err, search_id: runId }, 'a search failed');
        patch = {
          state: 'failed',
          error: message.slice(0, 1000),
          finished_at: now,
          took_ms: now.getTime() - started.getTime(),
        };
      }
    }
    await store.updateRun(runId, patch);
    if (deps.finished) {
      const ended = await store.getRun(runId);
      if (ended)
        await deps
          .finished(ended)
          .catch((err: unknown) =>
            logger.warn({ err, search_id: runId }, 'after a search ended, its follow-up failed'),
          );
    }
  }

  async function liveQuery(
    run: RunRow,
    input: QueryInput,
    plan: PlannedQuery,
    progress: (p: number) => Promise<void>,
    signal: AbortSignal,
  ) {
    if (!deps.live) throw new Error('live queries are not available in this process');
    return deps.live.run(run, input, plan, progress, signal);
  }

  return { execute };
}

export type Runner = ReturnType<typeof createRunner>;
