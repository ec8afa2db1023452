import { Type, type TSchema } from 'typebox';
import { OffsetEnvelope, OffsetQuery, Timestamp } from '../../platform/http/schemas.js';

const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);

export const MAX_BACKFILL_DAYS = 90;
export const MAX_STREAMS = 50;

export const IntegrationParams = Type.Object({ integration_id: Type.Integer({ minimum: 1, maximum: 2_147_483_647 }) });
// Job ids are UUIDs as text; the parameter is a plain string so anything unknown is a 404
// like a job outside the caller's scope.
export const JobParams = Type.Object({ job_id: Type.String({ minLength: 1, maxLength: 64 }) });

// `streams` is optional in the schema so that the singular `stream` gets its own refusal
// (422 backfill.stream_singular) rather than a generic schema error; the service requires it.
export const CreateBody = Type.Object(
  {
    streams: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 200 }), {
        minItems: 1,
        maxItems: MAX_STREAMS,
        description: "Required. Stream names of the integration's platform, plural and a list even for one stream",
      }),
    ),
    stream: Type.Optional(
      Type.Unknown({ description: 'Not accepted: send `streams` (a list). Answers 422 backfill.stream_singular' }),
    ),
    from_ts: Type.String({
      format: 'date-time',
      description: 'Start (inclusive), ISO 8601 UTC; at most 90 days in the past',
    }),
    to_ts: Type.String({
      format: 'date-time',
      description: 'End (exclusive), ISO 8601 UTC; after from_ts, not in the future, at most 90 days after from_ts',
    }),
  },
  { additionalProperties: false },
);

const JobStatus = Type.Union(
  [
    Type.Literal('queued'),
    Type.Literal('running'),
    Type.Literal('completed'),
    Type.Literal('failed'),
    Type.Literal('cancelled'),
  ],
  {
    description:
      'queued -> running -> completed | failed | cancelled (queued again while waiting out a vendor rate limit)',
  },
);

export const StreamProgress = Type.Object({
  chunk_from: Timestamp({ description: 'Start of the chunk being collected (everything before it is accepted)' }),
  chunk_to: Nullable(Timestamp({ description: 'End of that chunk; null between chunks' })),
  cursor: Nullable(Type.String({ description: "The vendor's page token inside the chunk; null = its first page" })),
  events: Type.Integer(),
  filtered: Type.Integer({ description: "Events dropped by the integration's collection filters" }),
  pages: Type.Integer(),
  done: Type.Boolean(),
  clamped_from: Nullable(
    Timestamp({ description: 'Where the start was moved to because the vendor keeps less history' }),
  ),
});

export const BackfillJob = Type.Object(
  {
    id: Type.String({ description: 'UUID' }),
    organization_id: Type.Integer(),
    integration_id: Type.Integer(),
    streams: Type.Array(Type.String()),
    from_ts: Timestamp(),
    to_ts: Timestamp(),
    status: JobStatus,
    cancel_requested: Type.Boolean({ description: 'Set by cancel: the worker finishes the page in hand and stops' }),
    progress: Type.Record(Type.String(), StreamProgress, { description: 'Per stream' }),
    events: Type.Integer({ description: 'Events accepted into the pipeline so far' }),
    pages: Type.Integer(),
    warnings: Type.Array(Type.String()),
    error: Nullable(Type.String()),
    resume_at: Nullable(Timestamp({ description: 'Queued again after the vendor asked to wait: when it resumes' })),
    created_by: Nullable(Type.Integer()),
    created_at: Timestamp(),
    started_at: Nullable(Timestamp()),
    finished_at: Nullable(Timestamp()),
    updated_at: Timestamp(),
  },
  {
    $id: 'BackfillJob',
    description:
      "A backfill job: re-collection of a past window, in chunks of the stream's longest window, page by page",
  },
);

export const ListQuery = Type.Object({
  ...OffsetQuery,
  status: Type.Optional(JobStatus),
});

export const BackfillJobPage = OffsetEnvelope(BackfillJob);

const Broker = Type.Object({
  backend: Type.String({ description: 'database or bullmq' }),
  scheme: Type.String(),
  host: Nullable(Type.String()),
  port: Nullable(Type.Integer()),
  db: Type.String({ description: 'Redis database number, or the PostgreSQL database name' }),
  prefix: Nullable(Type.String({ description: 'BullMQ key prefix' })),
});

export const Diagnostics = Type.Object(
  {
    same_broker: Type.Boolean({
      description: "true when at least one live worker reports this process's broker and none reports another",
    }),
    api: Type.Object({ process: Type.String(), queue_backend: Type.String(), broker: Broker }),
    workers: Type.Array(
      Type.Object({
        process: Type.String(),
        role: Type.String(),
        hostname: Type.String(),
        pid: Type.Integer(),
        last_seen_at: Timestamp(),
        queue_backend: Type.String(),
        broker: Nullable(Broker),
        same_broker: Type.Boolean(),
      }),
    ),
    round_trip: Type.Object({
      ok: Type.Boolean({ description: 'A backfill.ping job was completed by a worker within the wait' }),
      ms: Nullable(Type.Integer()),
      worker: Nullable(Type.String({ description: 'The process that completed it' })),
      waited_ms: Type.Integer(),
      error: Nullable(Type.String()),
    }),
    queue: Type.Object({
      waiting: Type.Integer(),
      active: Type.Integer(),
      delayed: Type.Integer(),
      failed: Type.Integer(),
    }),
    stuck_jobs: Type.Array(
      Type.Object({
        id: Type.String(),
        organization_id: Type.Integer(),
        integration_id: Type.Integer(),
        created_at: Timestamp(),
        waiting_seconds: Type.Integer(),
      }),
      { description: 'Backfill jobs in your scope queued for more than 5 minutes (past their resume time)' },
    ),
  },
  { description: 'Whether the API and the workers share one message broker, and a live round trip through it' },
);
