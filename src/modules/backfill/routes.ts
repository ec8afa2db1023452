import { offsetEnvelope } from '../../core/paging.js';
import { scopeOf } from '../../core/scope.js';
import { route, type Api } from '../../platform/http/routes.js';
import { DEFAULT_LIMIT, ErrorBody } from '../../platform/http/schemas.js';
import type { Diagnostics as DiagnosticsRunner } from './diagnostics.js';
import {
  BackfillJob,
  BackfillJobPage,
  CreateBody,
  Diagnostics,
  IntegrationParams,
  JobParams,
  ListQuery,
} from './schema.js';
import type { BackfillService } from './service.js';

export function backfillRoutes(app: Api, service: BackfillService, diagnostics: DiagnosticsRunner): void {
  route(app, {
    method: 'POST',
    url: '/api/integrations/:integration_id/backfill',
    operationId: 'backfill.create',
    summary: 'Re-collect a past window of some streams of an integration, as a job',
    description:
      'Body {streams, from_ts, to_ts}: `stream` (singular) is 422 backfill.stream_singular; an unknown stream 422 backfill.unknown_stream; ' +
      'a window over 90 days 400 backfill.window_too_long; a start more than 90 days back 400 backfill.start_too_old; to_ts not after ' +
      'from_ts or in the future 400 backfill.invalid_window; a managed-provider parent 422 backfill.managed_provider_parent; a platform ' +
      "without connector 422 integration.not_collectable. The start is clamped to the vendor's retention, with a warning.",
    access: { requires: 'integration.write' },
    // Stored, then queued outside a transaction (the embedded queue shares the one connection).
    audit: 'separate',
    schema: {
      params: IntegrationParams,
      body: CreateBody,
      response: { 201: BackfillJob, 409: ErrorBody, 503: ErrorBody },
    },
    handler: async (req, reply) => {
      const job = await service.create(req.actor!, req.params.integration_id, req.body);
      reply.code(201);
      return job;
    },
  });

  route(app, {
    method: 'GET',
    url: '/api/integrations/:integration_id/backfill-jobs',
    operationId: 'backfill.list',
    summary: 'Backfill jobs of an integration, newest first',
    access: { requires: 'integration.read' },
    schema: { params: IntegrationParams, querystring: ListQuery, response: { 200: BackfillJobPage } },
    handler: async (req) => {
      const { limit = DEFAULT_LIMIT, offset = 0, status } = req.query;
      const page = { limit, offset };
      const { items, total } = await service.list(scopeOf(req.actor!), req.params.integration_id, status, page);
      return offsetEnvelope(items, total, page);
    },
  });

  // Declared before /:job_id so that "diagnostics" is never read as a job id.
  route(app, {
    method: 'GET',
    url: '/api/backfill-jobs/diagnostics',
    operationId: 'backfill.diagnostics',
    summary: 'Do the API and the workers share one message broker? With a live round trip through it',
    description:
      "Compares this process's queue backend and broker (Redis host, port, database and key prefix, or the database; never credentials) " +
      'with what live workers report, enqueues a backfill.ping job and waits up to 3 s for a worker to complete it. ' +
      'When a job is accepted with 201 and nothing happens, look here first.',
    access: { requires: 'user.manage' },
    schema: { response: { 200: Diagnostics, 503: ErrorBody } },
    handler: async (req) => diagnostics.run(scopeOf(req.actor!)),
  });

  route(app, {
    method: 'GET',
    url: '/api/backfill-jobs/:job_id',
    operationId: 'backfill.get',
    summary: 'One backfill job with its progress per stream',
    access: { requires: 'integration.read' },
    schema: { params: JobParams, response: { 200: BackfillJob } },
    handler: async (req) => service.get(scopeOf(req.actor!), req.params.job_id),
  });

  route(app, {
    method: 'POST',
    url: '/api/backfill-jobs/:job_id/cancel',
    operationId: 'backfill.cancel',
    summary: 'Cancel a backfill job: a queued one ends at once, a running one after the page in hand',
    description:
      'Answers 202 with the job (cancel_requested true; status cancelled at once when it was only queued). A finished job is 409 backfill.already_finished.',
    access: { requires: 'integration.write' },
    schema: { params: JobParams, response: { 202: BackfillJob, 409: ErrorBody } },
    handler: async (req, reply) => {
      const job = await service.cancel(scopeOf(req.actor!), req.params.job_id);
      reply.code(202);
      return job;
    },
  });
}
