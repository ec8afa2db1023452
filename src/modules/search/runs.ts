// Searches (docs/search.md): submitting a run (a query, or a saved query with another time
// range), waiting a moment for it, and the history: the caller's runs (an administrator may
// read the organization's), each result paged, its CSV, cancellation. A run is a job; reads
// never change anything (expiry runs in the background).
import type { Actor } from '../../core/actor.js';
import type { Clock } from '../../core/clock.js';
import { AppError, errors } from '../../core/errors.js';
import { newId } from '../../core/ids.js';
import type { OffsetPage } from '../../core/paging.js';
import { inScope, scopeOf, targetOrganization } from '../../core/scope.js';
import { decodeRecords } from '../../pipeline/batch-codec.js';
import { setAuditTarget } from '../audit/service.js';
import { planQuery, type QueryInput, type TimeRange } from './query/definition.js';
import type { SearchResult } from './runner.js';
import type { RunSummary, SearchStore } from './store.js';

export const SEARCH_QUEUE = 'search';
export const RUN_JOB = 'search.run';

export interface SubmitInput {
  query?: QueryInput;
  query_id?: string;
  /** With query_id: another time range than the saved one. */
  time?: TimeRange;
  /** How long to wait for the result before answering 202 (ms; 0: do not wait). */
  wait_ms?: number;
}

export interface RunsDeps {
  store: SearchStore;
  clock: Clock;
  maxRows: number;
  /** Queues the run's job (the database queue's joins the open transaction; BullMQ's is sent after it commits). */
  enqueue(runId: string): Promise<void>;
  transaction<T>(fn: () => Promise<T>): Promise<T>;
  /** Checks a live query (Enterprise, the integration in the organization, what the vendor can do); throws the 4xx. */
  checkLive(actor: Actor, organizationId: number, input: QueryInput): Promise<void>;
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

const FINAL = new Set(['completed', 'failed', 'cancelled']);
const WAIT_DEFAULT_MS = 10_000;
const WAIT_POLL_MS = 50;

/** A stable key of who ran a search: `user:5`, `service_account:3`. */
export function ownerKey(actor: Actor): string {
  return `${actor.kind}:${actor.id}`;
}

/** Whether the caller reads the whole organization's history (administrators). */
function administers(actor: Actor): boolean {
  return actor.permissions.has('user.manage');
}

export function runOut(r: RunSummary) {
  const query = r.query as QueryInput;
  return {
    id: r.id,
    organization_id: r.organization_id,
    kind: r.kind,
    query_id: r.query_id,
    schedule_id: r.schedule_id,
    query,
    state: r.state,
    progress: r.progress,
    matched: r.matched === null ? null : Number(r.matched),
    returned: r.returned,
    cap: query.limit ?? 100,
    capped: r.capped,
    took_ms: r.took_ms,
    error: r.error,
    notified: r.notified,
    run_by: r.actor,
    created_at: r.created_at,
    started_at: r.started_at,
    finished_at: r.finished_at,
    result_expires_at: r.result_expires_at,
    csv_expires_at: r.csv_expires_at,
    result_available: r.has_result,
    csv_available: r.has_csv,
  };
}

export type RunOut = ReturnType<typeof runOut>;

export function createRunsService(deps: RunsDeps) {
  const { store, clock } = deps;

  /**
   * A run the caller may read: their own, any of their organizations' for an administrator, and
   * a schedule's runs for whoever reads the schedule's history (mapping.read); 404 otherwise.
   */
  async function visible(actor: Actor, id: string): Promise<RunSummary> {
    const run = await store.getRunSummary(id);
    const readable =
      run &&
      (run.actor === ownerKey(actor) ||
        administers(actor) ||
        (run.kind === 'scheduled' && actor.permissions.has('mapping.read')));
    if (!run || !readable || !inScope(scopeOf(actor), run.organization_id)) throw errors.notFound('Search');
    return run;
  }

  async function resolve(actor: Actor, input: SubmitInput): Promise<{ query: QueryInput; queryId: string | null }> {
    if (input.query_id !== undefined) {
      if (input.query !== undefined)
        throw errors.validation('give query or query_id, not both', {
          errors: [{ location: 'body/query', message: 'not with query_id' }],
        });
      const saved = await store.getQuery(scopeOf(actor), input.query_id);
      if (!saved) throw errors.notFound('Saved query');
      const query = {
        ...(saved.query as QueryInput),
        organization_id: saved.organization_id,
        ...(input.time ? { time: input.time } : {}),
      };
      return { query, queryId: saved.id };
    }
    if (input.query === undefined)
      throw errors.validation('give query (a query definition) or query_id (a saved query)', {
        errors: [{ location: 'body/query', message: 'is required' }],
      });
    if (input.time !== undefined)
      throw errors.validation('time goes inside query', {
        errors: [{ location: 'body/time', message: 'only with query_id' }],
      });
    return { query: input.query, queryId: null };
  }

  return {
    visible,

    async submit(actor: Actor, input: SubmitInput): Promise<{ run: RunOut; finished: boolean }> {
      const { query, queryId } = await resolve(actor, input);
      const organizationId = await targetOrganization(
        store,
        scopeOf(actor),
        query.organization_id,
        'body/query/organization_id',
      );
      const now = clock.now();
      const plan = planQuery(query, { now, maxRangeDays: 3650, maxLimit: deps.maxRows });
      if (query.integration_id !== undefined) await deps.checkLive(actor, organizationId, query);
      const stored: QueryInput = {
        ...query,
        organization_id: organizationId,
        time: { from: plan.from.toISOString(), to: plan.to.toISOString() },
      };
      const id = newId();
      await deps.transaction(async () => {
        await store.insertRun(
          {
            id,
            organization_id: organizationId,
            user_id: actor.kind === 'user' ? actor.id : null,
            actor: ownerKey(actor),
            kind: 'interactive',
            query_id: queryId,
            schedule_id: null,
            slot: null,
            query: stored as Record<string, unknown>,
          },
          now,
        );
        await deps.enqueue(id);
      });
      setAuditTarget({
        type: 'search',
        id,
        organizationId,
        details: { query_id: queryId, live: query.integration_id !== undefined },
      });
      const waitMs = Math.min(input.wait_ms ?? WAIT_DEFAULT_MS, 60_000);
      const deadline = Date.now() + waitMs;
      let run = (await store.getRunSummary(id))!;
      while (!FINAL.has(run.state) && Date.now() < deadline) {
        await deps.sleep(WAIT_POLL_MS);
        run = (await store.getRunSummary(id))!;
      }
      return { run: runOut(run), finished: FINAL.has(run.state) };
    },

    async history(actor: Actor, f: { scope: 'mine' | 'organization'; organization_id?: number }, page: OffsetPage) {
      if (f.scope === 'organization' && !administers(actor))
        throw errors.forbidden(
          "Reading the organization's search history needs user.manage; without it you see your own runs",
        );
      if (f.organization_id !== undefined && !inScope(scopeOf(actor), f.organization_id))
        throw errors.notFound('Organization');
      const { items, total } = await store.listRuns(
        {
          scope: scopeOf(actor),
          ...(f.scope === 'mine' ? { owner: ownerKey(actor) } : {}),
          ...(f.organization_id !== undefined ? { organizationId: f.organization_id } : {}),
        },
        page,
      );
      return { items: items.map(runOut), total };
    },

    /** The run and a page of its rows, with its aggregations; 410 once the result expired. */
    async result(actor: Actor, id: string, page: OffsetPage) {
      const summary = await visible(actor, id);
      const out = runOut(summary);
      if (summary.state !== 'completed')
        return { ...out, rows: [], aggregations: [], total: 0, limit: page.limit, offset: page.offset };
      const run = await store.getRun(id);
      if (!run?.result) {
        throw new AppError('search.result_expired', {
          detail: `The result of search ${id} expired at ${summary.result_expires_at?.toISOString() ?? 'an earlier time'}; run the query again`,
          details: { search_id: id },
        });
      }
      const result = JSON.parse(await decodeRecords(run.result)) as SearchResult;
      return {
        ...out,
        rows: result.rows.slice(page.offset, page.offset + page.limit),
        aggregations: result.aggregations,
        total: result.rows.length,
        limit: page.limit,
        offset: page.offset,
        ...(result.live ? { live: result.live } : {}),
      };
    },

    /** The CSV text; 409 before the run completed, 410 once the CSV expired (the JSON may still be there). */
    async csv(actor: Actor, id: string): Promise<string> {
      const summary = await visible(actor, id);
      if (summary.state !== 'completed') {
        throw new AppError('search.not_finished', {
          detail: `Search ${id} is ${summary.state}: its CSV exists once it completed`,
          details: { search_id: id, state: summary.state },
        });
      }
      const run = await store.getRun(id);
      if (!run?.csv) {
        throw new AppError('search.result_expired', {
          detail: `The CSV of search ${id} expired at ${summary.csv_expires_at?.toISOString() ?? 'an earlier time'}${run?.result ? '; the JSON result is still readable' : ''}`,
          details: { search_id: id, result_available: Boolean(run?.result) },
        });
      }
      return decodeRecords(run.csv);
    },

    async cancel(actor: Actor, id: string): Promise<RunOut> {
      const run = await visible(actor, id);
      if (!FINAL.has(run.state)) await store.requestCancel(id, clock.now());
      setAuditTarget({ type: 'search', id, organizationId: run.organization_id });
      // A running search stops at its next step; the answer shows the request taken.
      return runOut((await store.getRunSummary(id))!);
    },
  };
}

export type RunsService = ReturnType<typeof createRunsService>;
