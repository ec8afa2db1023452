import { Type } from 'typebox';
import { OffsetEnvelope, OffsetQuery, Timestamp } from '../../platform/http/schemas.js';

const Id = (description?: string) =>
  Type.Integer({ minimum: 1, maximum: 2_147_483_647, ...(description ? { description } : {}) });
const Uuid = (description?: string) =>
  Type.String({ minLength: 1, maxLength: 64, ...(description ? { description } : {}) });
const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()]);
const FieldPath = Type.String({
  minLength: 1,
  maxLength: 512,
  description:
    'An OCSF path (actor.user.name, observables[*].value) or envelope.id, envelope.integration_id, envelope.stream',
});

export const TimeRange = Type.Object(
  {
    from: Type.Optional(
      Type.String({ maxLength: 64, description: 'RFC 3339 with a zone (2026-11-20T08:00:00Z), or relative: now-7d' }),
    ),
    to: Type.Optional(
      Type.String({ maxLength: 64, description: 'RFC 3339 with a zone, or relative: now, now-1h (default now)' }),
    ),
    last: Type.Optional(
      Type.String({
        maxLength: 16,
        description: 'Instead of from and to: the last 15m, 24h, 7d (units s, m, h, d, w)',
      }),
    ),
  },
  { additionalProperties: false, description: 'Absolute or relative; default the last 24 hours' },
);

const Condition = Type.Unknown({
  description:
    'A condition in the one condition language (docs/conditions.md): {field, op, value}, {all: [...]}, {any: [...]}, {not: {...}}; ' +
    'fields are OCSF paths checked against the catalog (an unknown one is refused with the closest known name) or envelope.*',
});

const Aggregation = Type.Union([
  Type.Object({ type: Type.Literal('count') }, { additionalProperties: false }),
  Type.Object(
    {
      type: Type.Literal('count_by'),
      fields: Type.Array(FieldPath, { minItems: 1, maxItems: 3 }),
      size: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 100 })),
    },
    { additionalProperties: false },
  ),
  Type.Object(
    {
      type: Type.Literal('top'),
      field: FieldPath,
      size: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 10 })),
    },
    { additionalProperties: false },
  ),
  Type.Object(
    { type: Type.Literal('histogram'), interval: Type.String({ maxLength: 16, description: '1m, 1h, 1d...' }) },
    { additionalProperties: false },
  ),
]);

export const QueryDefinition = Type.Object(
  {
    organization_id: Type.Optional(Id('The organization searched (required when you can see several organizations)')),
    integration_id: Type.Optional(
      Id('Enterprise: query the vendor live through this integration instead of the event store'),
    ),
    stream: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 100,
        description: "With integration_id: the stream to query (default: the platform's first)",
      }),
    ),
    time: Type.Optional(TimeRange),
    where: Type.Optional(Condition),
    query: Type.Optional(
      Type.String({
        maxLength: 16_384,
        description:
          'The condition as text: class_uid = 3002 and status_id = 2 and actor.user.name ~ "adm*" (docs/search.md)',
      }),
    ),
    fields: Type.Optional(
      Type.Array(FieldPath, { maxItems: 100, description: 'Fields each row returns (default: the whole event)' }),
    ),
    sort: Type.Optional(
      Type.Array(
        Type.Object(
          { field: FieldPath, order: Type.Optional(Type.Union([Type.Literal('asc'), Type.Literal('desc')])) },
          { additionalProperties: false },
        ),
        { maxItems: 5, description: 'Default time, newest first' },
      ),
    ),
    limit: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: 1_000_000,
        description: 'Rows the result keeps (default 100; at most WEIR_SEARCH_MAX_ROWS, 10,000 by default): the cap',
      }),
    ),
    aggregations: Type.Optional(Type.Array(Aggregation, { maxItems: 10 })),
  },
  { additionalProperties: false, description: 'A query (docs/search.md)' },
);

export const SubmitBody = Type.Object(
  {
    query: Type.Optional(QueryDefinition),
    query_id: Type.Optional(Uuid('A saved query to run instead')),
    time: Type.Optional(TimeRange),
    wait_ms: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: 60_000,
        default: 10_000,
        description: 'How long to wait for the result before answering 202 with the run to poll',
      }),
    ),
  },
  { additionalProperties: false },
);

const RunState = Type.Union([
  Type.Literal('queued'),
  Type.Literal('running'),
  Type.Literal('completed'),
  Type.Literal('failed'),
  Type.Literal('cancelled'),
]);

export const Run = Type.Object(
  {
    id: Type.String(),
    organization_id: Type.Integer(),
    kind: Type.Union([Type.Literal('interactive'), Type.Literal('scheduled')]),
    query_id: Nullable(Type.String()),
    schedule_id: Nullable(Type.String()),
    query: Type.Unknown({ description: 'The query as run, its time range made absolute' }),
    state: RunState,
    progress: Type.Number({ description: '0 to 1' }),
    matched: Nullable(Type.Integer({ description: 'Events that matched (all of them, not only the rows kept)' })),
    returned: Nullable(Type.Integer({ description: 'Rows the result keeps' })),
    cap: Type.Integer({ description: "Most rows the result keeps (the query's limit)" }),
    capped: Nullable(Type.Boolean({ description: 'More events matched than the result keeps' })),
    took_ms: Nullable(Type.Integer()),
    error: Nullable(Type.String()),
    notified: Type.Unknown({
      description: 'Scheduled runs: whether the e-mail went ({sent, reason?, deliveries?}); null otherwise',
    }),
    run_by: Type.String({ description: 'user:<id>, service_account:<id> or schedule:<id>' }),
    created_at: Timestamp(),
    started_at: Nullable(Timestamp()),
    finished_at: Nullable(Timestamp()),
    result_expires_at: Nullable(Timestamp()),
    csv_expires_at: Nullable(Timestamp({ description: 'The CSV expires before the result' })),
    result_available: Type.Boolean(),
    csv_available: Type.Boolean(),
  },
  { $id: 'SearchRun' },
);

const Row = Type.Object({
  event_id: Type.String(),
  time: Timestamp(),
  organization_id: Type.Integer(),
  integration_id: Type.Integer(),
  stream: Type.String(),
  event: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  fields: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
});

export const Result = Type.Intersect([
  Run,
  Type.Object({
    rows: Type.Array(Row, { description: 'A page of the rows kept (limit, offset)' }),
    aggregations: Type.Array(Type.Unknown(), {
      description:
        '{type: count, value} | {type: count_by, fields, buckets: [{key, count}]} | {type: top, field, values: [{value, count}]} | {type: histogram, interval, buckets: [{start, count}]}',
    }),
    total: Type.Integer({ description: 'Rows kept' }),
    limit: Type.Integer(),
    offset: Type.Integer(),
    live: Type.Optional(
      Type.Record(Type.String(), Type.Unknown(), {
        description:
          'Live queries: {platform, stream, pushed_down (the vendor filter sent, null: none), pages, page_cap, complete (false: the page cap stopped reading), fetched, unmapped, requests, rate_limited}',
      }),
    ),
  }),
]);

export const SearchParams = Type.Object({ search_id: Uuid() });
export const ResultQuery = Type.Object({ ...OffsetQuery });
export const HistoryQuery = Type.Object({
  ...OffsetQuery,
  scope: Type.Optional(
    Type.Union([Type.Literal('mine'), Type.Literal('organization')], {
      default: 'mine',
      description: 'mine: your runs; organization: every run of your organizations (needs user.manage)',
    }),
  ),
  organization_id: Type.Optional(Id()),
});
export const RunList = OffsetEnvelope(Run);

export const SavedQuery = Type.Object({
  id: Type.String(),
  organization_id: Type.Integer(),
  name: Type.String(),
  description: Type.String(),
  query: Type.Unknown({ description: 'The query definition (without organization_id)' }),
  created_by: Nullable(Type.Integer()),
  updated_by: Nullable(Type.Integer()),
  created_at: Timestamp(),
  updated_at: Timestamp(),
});
export const SavedQueryList = OffsetEnvelope(SavedQuery);
export const QueryParams = Type.Object({ query_id: Uuid() });
export const ListQuery = Type.Object({ ...OffsetQuery, organization_id: Type.Optional(Id()) });
const Name = Type.String({ minLength: 1, maxLength: 200 });
export const CreateQueryBody = Type.Object(
  {
    name: Name,
    description: Type.Optional(Type.String({ maxLength: 2000 })),
    organization_id: Type.Optional(Id()),
    query: QueryDefinition,
  },
  { additionalProperties: false },
);
export const UpdateQueryBody = Type.Object(
  {
    name: Type.Optional(Name),
    description: Type.Optional(Type.String({ maxLength: 2000 })),
    query: Type.Optional(QueryDefinition),
  },
  { additionalProperties: false },
);

const Notify = Type.Object(
  {
    email: Type.Optional(
      Type.Boolean({ default: true, description: "E-mail the result to the organization's recipients (only them)" }),
    ),
    attach_csv: Type.Optional(
      Type.Boolean({ default: true, description: 'Attach the CSV (linked instead when over 5 MB)' }),
    ),
    alert: Type.Optional(
      Nullable(
        Type.Object(
          {
            severity_id: Type.Integer({ minimum: 1, maximum: 6, description: 'OCSF severity_id of the detection' }),
            title: Type.Optional(Type.String({ maxLength: 300 })),
            description: Type.Optional(Type.String({ maxLength: 10_000 })),
            mitre: Type.Optional(
              Type.Object(
                {
                  tactics: Type.Optional(Type.Array(Type.String({ maxLength: 20 }), { maxItems: 50 })),
                  techniques: Type.Optional(Type.Array(Type.String({ maxLength: 20 }), { maxItems: 50 })),
                },
                { additionalProperties: false },
              ),
            ),
          },
          {
            additionalProperties: false,
            description:
              "Raise a detection (GET /api/detections) when the condition holds, with the run's result attached",
          },
        ),
      ),
    ),
    condition: Type.Optional(
      Nullable(
        Type.Object(
          { op: Type.Union(['gt', 'gte', 'lt', 'lte', 'eq', 'ne'].map((o) => Type.Literal(o))), value: Type.Number() },
          {
            additionalProperties: false,
            description: 'On the number of matching events: send only when it holds, e.g. {op: gt, value: 0}',
          },
        ),
      ),
    ),
  },
  { additionalProperties: false },
);
export const Schedule = Type.Object({
  id: Type.String(),
  organization_id: Type.Integer(),
  name: Type.String(),
  query_id: Type.String(),
  cron: Nullable(Type.String()),
  timezone: Type.String(),
  interval_seconds: Nullable(Type.Integer()),
  notify: Type.Unknown(),
  enabled: Type.Boolean(),
  next_run_at: Timestamp(),
  last_slot: Nullable(Timestamp()),
  created_by: Nullable(Type.Integer()),
  created_at: Timestamp(),
});
export const ScheduleList = OffsetEnvelope(Schedule);
export const ScheduleParams = Type.Object({ sched_id: Uuid() });
export const CreateScheduleBody = Type.Object(
  {
    name: Name,
    query_id: Uuid('The saved query it runs; the schedule belongs to its organization'),
    cron: Type.Optional(
      Type.String({
        maxLength: 100,
        description: 'Five or six fields (seconds first), e.g. "0 8 * * 1-5"; runs at most every minute',
      }),
    ),
    timezone: Type.Optional(
      Type.String({ maxLength: 64, description: 'IANA time zone of the cron expression (default UTC)' }),
    ),
    interval_seconds: Type.Optional(
      Type.Integer({ minimum: 60, maximum: 31_536_000, description: 'Instead of cron: every this many seconds' }),
    ),
    notify: Type.Optional(Notify),
    enabled: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

export const ReplayBody = Type.Object(
  {
    organization_id: Type.Optional(Id()),
    destination_id: Uuid('Where the events go again: a destination of the organization, or a global one'),
    time: TimeRange,
    where: Type.Optional(Condition),
    query: Type.Optional(Type.String({ maxLength: 16_384 })),
  },
  { additionalProperties: false },
);
export const Replay = Type.Object({
  id: Type.String(),
  organization_id: Type.Integer(),
  destination_id: Type.String(),
  query: Type.Unknown(),
  state: RunState,
  total: Nullable(Type.Integer({ description: 'Events to replay, counted when it starts' })),
  replayed: Type.Integer({
    description: "Events put in the destination's outbox so far (the ledger counts them replayed)",
  }),
  progress: Type.Number(),
  error: Nullable(Type.String()),
  run_by: Type.String(),
  created_at: Timestamp(),
  finished_at: Nullable(Timestamp()),
});
export const ReplayParams = Type.Object({ replay_id: Uuid() });

export const ExportBody = Type.Object(
  {
    organization_id: Type.Optional(Id()),
    time: TimeRange,
    region: Type.Optional(
      Type.String({
        pattern: '^[a-z0-9-]{1,32}$',
        errorMessage: 'must be 1 to 32 lower-case letters, digits or hyphens (us-east-1)',
        description: "The `region=` partition (your Security Lake custom source's region; default us-east-1)",
      }),
    ),
    account_id: Type.Optional(
      Type.String({
        pattern: '^[A-Za-z0-9-]{1,64}$',
        errorMessage: 'must be 1 to 64 letters, digits or hyphens (123456789012)',
        description:
          'The `accountId=` partition (the account or external id of the custom source; default 000000000000)',
      }),
    ),
  },
  { additionalProperties: false },
);
export const ExportResult = Type.Object({
  id: Type.String(),
  organization_id: Type.Integer(),
  from: Timestamp(),
  to: Timestamp(),
  region: Type.String(),
  account_id: Type.String(),
  directory: Type.String({ description: "The export's directory on the Weir host (under WEIR_EXPORT_ROOT)" }),
  rows: Type.Integer({ description: 'Events written' }),
  files: Type.Array(Type.String(), {
    description:
      'Parquet files, relative to directory: ext/<source>/region=<region>/accountId=<account>/eventDay=<YYYYMMDD>/<name>.parquet, one source per OCSF class',
  }),
  took_ms: Type.Integer(),
});
