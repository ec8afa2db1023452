import { Type } from 'typebox';
import { scopeOf } from '../../core/scope.js';
import { offsetEnvelope } from '../../core/paging.js';
import { route, type Api } from '../../platform/http/routes.js';
import { DEFAULT_LIMIT, ErrorBody } from '../../platform/http/schemas.js';
import type { QueriesService } from './queries.js';
import type { QueryInput } from './query/definition.js';
import type { ExportService } from './export.js';
import type { ReplayService } from './replay.js';
import type { RunsService } from './runs.js';
import type { ScheduleBody, SchedulesService } from './schedules.js';
import {
  CreateQueryBody,
  CreateScheduleBody,
  ExportBody,
  ExportResult,
  HistoryQuery,
  ListQuery,
  QueryParams,
  Replay,
  ReplayBody,
  ReplayParams,
  Result,
  Run,
  RunList,
  SavedQuery,
  SavedQueryList,
  Schedule,
  ScheduleList,
  ScheduleParams,
  SearchParams,
  SubmitBody,
  UpdateQueryBody,
} from './schema.js';

const pageOf = (q: { limit?: number; offset?: number }) => ({ limit: q.limit ?? DEFAULT_LIMIT, offset: q.offset ?? 0 });

export function searchRoutes(
  app: Api,
  s: {
    runs: RunsService;
    queries: QueriesService;
    schedules: SchedulesService;
    replay: ReplayService;
    exports: ExportService;
  },
): void {
  route(app, {
    method: 'POST',
    url: '/api/search/export',
    operationId: 'search.export',
    summary: "Write an organization's stored events of a time range as Parquet in Amazon Security Lake's layout",
    description:
      'One custom source per OCSF class (ext/weir-<class>/region=<region>/accountId=<account>/eventDay=<YYYYMMDD>/), rows sorted by time, every attribute a ' +
      'Parquet column (objects as structs): for Athena, Spark or DuckDB, or to copy into a Security Lake bucket. Written under WEIR_EXPORT_ROOT on the Weir host; the answer lists the files.',
    addition: true,
    access: { requires: 'user.manage' },
    schema: { body: ExportBody, response: { 200: ExportResult } },
    handler: async (req) => s.exports.start(req.actor!, req.body as never),
  });

  route(app, {
    method: 'POST',
    url: '/api/search',
    operationId: 'search.run',
    summary: 'Run a query (or a saved query) over the event store, or live against a vendor (Enterprise)',
    description:
      'The run is a job; the answer waits up to wait_ms for it (200 with the first page of the result when it completed within, 202 with the run to poll at ' +
      'GET /api/search/history/result/{search_id} otherwise). Every run is stored in the search history. Needs mapping.read (reading events); a live query needs the Enterprise edition.',
    addition: true,
    access: { requires: 'mapping.read' },
    // The answer waits for a job: no transaction is held meanwhile.
    audit: 'separate',
    schema: { body: SubmitBody, response: { 200: Result, 202: Run } },
    handler: async (req, reply) => {
      const actor = req.actor!;
      const body = req.body as { query?: QueryInput; query_id?: string; time?: QueryInput['time']; wait_ms?: number };
      const { run, finished } = await s.runs.submit(actor, body);
      if (!finished) {
        reply.code(202).header('location', `/api/search/history/result/${run.id}`);
        return run;
      }
      return s.runs.result(actor, run.id, { limit: DEFAULT_LIMIT, offset: 0 });
    },
  });

  route(app, {
    method: 'POST',
    url: '/api/search/:search_id/cancel',
    operationId: 'search.cancel',
    summary: 'Cancel a queued or running search (a finished one is answered as it is)',
    addition: true,
    access: { requires: 'authenticated' },
    schema: { params: SearchParams, response: { 200: Run } },
    handler: async (req) => s.runs.cancel(req.actor!, req.params.search_id),
  });

  route(app, {
    method: 'GET',
    url: '/api/search/history',
    operationId: 'search.history',
    summary:
      "Your searches, newest first; an administrator (user.manage) may list the organization's (scope=organization)",
    access: { requires: 'authenticated' },
    schema: { querystring: HistoryQuery, response: { 200: RunList } },
    handler: async (req) => {
      const page = pageOf(req.query);
      const { items, total } = await s.runs.history(
        req.actor!,
        {
          scope: req.query.scope ?? 'mine',
          ...(req.query.organization_id !== undefined ? { organization_id: req.query.organization_id } : {}),
        },
        page,
      );
      return offsetEnvelope(items, total, page);
    },
  });

  route(app, {
    method: 'GET',
    url: '/api/search/history/result/:search_id',
    operationId: 'search.result',
    summary:
      'A search with a page of its rows and its aggregations; its state and progress while it runs; 410 once the result expired',
    access: { requires: 'authenticated' },
    schema: {
      params: SearchParams,
      querystring: Type.Object({
        limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: DEFAULT_LIMIT })),
        offset: Type.Optional(Type.Integer({ minimum: 0, default: 0 })),
      }),
      response: { 200: Result, 410: ErrorBody },
    },
    handler: async (req) => s.runs.result(req.actor!, req.params.search_id, pageOf(req.query)),
  });

  route(app, {
    method: 'GET',
    url: '/api/search/history/result/:search_id/csv',
    operationId: 'search.result_csv',
    summary:
      'The result as CSV; 409 before the search completed; 410 once the CSV expired (earlier than the JSON result)',
    access: { requires: 'authenticated' },
    schema: {
      params: SearchParams,
      response: { 200: Type.String({ description: 'text/csv' }), 409: ErrorBody, 410: ErrorBody },
    },
    handler: async (req, reply) => {
      const csv = await s.runs.csv(req.actor!, req.params.search_id);
      reply
        .header('content-type', 'text/csv; charset=utf-8')
        .header('content-disposition', `attachment; filename="search-${req.params.search_id}.csv"`);
      return csv;
    },
  });

  route(app, {
    method: 'POST',
    url: '/api/search/replay',
    operationId: 'search.replay',
    summary: 'Re-deliver the stored events that match a condition in a time range to one destination, as a job',
    description:
      'Counted in the ledger as replayed copies; the destination delivers them like any copy (retries, breaker, dead-letter queue). Poll GET /api/search/replay/{replay_id}.',
    addition: true,
    access: { requires: 'user.manage' },
    schema: { body: ReplayBody, response: { 202: Replay } },
    handler: async (req, reply) => {
      reply.code(202);
      return s.replay.start(req.actor!, req.body as never);
    },
  });

  route(app, {
    method: 'GET',
    url: '/api/search/replay/:replay_id',
    operationId: 'search.replay_status',
    summary: "A replay's state and progress",
    addition: true,
    access: { requires: 'user.manage' },
    schema: { params: ReplayParams, response: { 200: Replay } },
    handler: async (req) => s.replay.get(req.actor!, req.params.replay_id),
  });

  route(app, {
    method: 'POST',
    url: '/api/search/replay/:replay_id/cancel',
    operationId: 'search.replay_cancel',
    summary: 'Stop a replay after the page being written (what was written is delivered)',
    addition: true,
    access: { requires: 'user.manage' },
    schema: { params: ReplayParams, response: { 200: Replay } },
    handler: async (req) => s.replay.cancel(req.actor!, req.params.replay_id),
  });

  route(app, {
    method: 'GET',
    url: '/api/queries/',
    operationId: 'queries.list',
    summary: 'Saved queries of your organizations',
    access: { requires: 'mapping.read' },
    schema: { querystring: ListQuery, response: { 200: SavedQueryList } },
    handler: async (req) => {
      const page = pageOf(req.query);
      const { items, total } = await s.queries.list(scopeOf(req.actor!), req.query.organization_id, page);
      return offsetEnvelope(items, total, page);
    },
  });

  route(app, {
    method: 'POST',
    url: '/api/queries/',
    operationId: 'queries.create',
    summary: 'Save a query under a name; it is checked whole (422 with every problem located)',
    access: { requires: 'query.save' },
    schema: { body: CreateQueryBody, response: { 201: SavedQuery, 409: ErrorBody } },
    handler: async (req, reply) => {
      const out = await s.queries.create(req.actor!, req.body as never);
      reply.code(201);
      return out;
    },
  });

  route(app, {
    method: 'GET',
    url: '/api/queries/:query_id',
    operationId: 'queries.get',
    summary: 'A saved query',
    access: { requires: 'mapping.read' },
    schema: { params: QueryParams, response: { 200: SavedQuery } },
    handler: async (req) => s.queries.get(scopeOf(req.actor!), req.params.query_id),
  });

  route(app, {
    method: 'PUT',
    url: '/api/queries/:query_id',
    operationId: 'queries.update',
    summary: "Change a saved query's name, description or definition",
    access: { requires: 'query.save' },
    schema: { params: QueryParams, body: UpdateQueryBody, response: { 200: SavedQuery, 409: ErrorBody } },
    handler: async (req) => s.queries.update(req.actor!, req.params.query_id, req.body as never),
  });

  route(app, {
    method: 'DELETE',
    url: '/api/queries/:query_id',
    operationId: 'queries.delete',
    summary: 'Delete a saved query; 409 while schedules run it',
    access: { requires: 'query.save' },
    schema: { params: QueryParams, response: { 204: Type.Null(), 409: ErrorBody } },
    handler: async (req, reply) => {
      await s.queries.remove(req.actor!, req.params.query_id);
      reply.code(204);
      return null;
    },
  });

  route(app, {
    method: 'GET',
    url: '/api/schedules/',
    operationId: 'schedules.list',
    summary: 'Schedules of your organizations',
    access: { requires: 'mapping.read' },
    schema: { querystring: ListQuery, response: { 200: ScheduleList } },
    handler: async (req) => {
      const page = pageOf(req.query);
      const { items, total } = await s.schedules.list(scopeOf(req.actor!), req.query.organization_id, page);
      return offsetEnvelope(items, total, page);
    },
  });

  route(app, {
    method: 'POST',
    url: '/api/schedules/',
    operationId: 'schedules.create',
    summary:
      "Run a saved query on a cron expression or an interval; its results are e-mailed to the organization's recipients only",
    access: { requires: 'query.save' },
    schema: { body: CreateScheduleBody, response: { 201: Schedule, 409: ErrorBody } },
    handler: async (req, reply) => {
      const out = await s.schedules.create(req.actor!, req.body as ScheduleBody);
      reply.code(201);
      return out;
    },
  });

  route(app, {
    method: 'DELETE',
    url: '/api/schedules/:sched_id',
    operationId: 'schedules.delete',
    summary: 'Stop and delete a schedule (its runs stay in the history); 404 outside your organizations',
    access: { requires: 'query.save' },
    schema: { params: ScheduleParams, response: { 204: Type.Null() } },
    handler: async (req, reply) => {
      await s.schedules.remove(req.actor!, req.params.sched_id);
      reply.code(204);
      return null;
    },
  });

  route(app, {
    method: 'GET',
    url: '/api/schedules/:sched_id/history',
    operationId: 'schedules.history',
    summary: "The schedule's runs, newest first, each with whether its e-mail went",
    access: { requires: 'mapping.read' },
    schema: {
      params: ScheduleParams,
      querystring: Type.Object({
        limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: DEFAULT_LIMIT })),
        offset: Type.Optional(Type.Integer({ minimum: 0, default: 0 })),
      }),
      response: { 200: RunList },
    },
    handler: async (req) => {
      const page = pageOf(req.query);
      const { items, total } = await s.schedules.history(req.actor!, req.params.sched_id, page);
      return offsetEnvelope(items, total, page);
    },
  });
}
