import type { Readable } from 'node:stream';
import { Type } from 'typebox';
import {
  DateParam,
  MAX_BULK_IDS,
  MAX_LIMIT,
  OffsetEnvelope,
  OffsetQuery,
  Timestamp,
} from '../../platform/http/schemas.js';

export const DEFAULT_METRICS_HOURS = 24;
export const MAX_METRICS_HOURS = 168;
export const DEFAULT_TAP_SECONDS = 10;
export const MAX_TAP_SECONDS = 60;
export const DEFAULT_TAP_LIMIT = 100;
export const MAX_TAP_LIMIT = 1000;
/** Most dead letters one `all` reprocess call sends back; `remaining` says how many are left. */
export const MAX_REPROCESS_ALL = 10_000;

const Id = (description?: string) =>
  Type.Integer({ minimum: 1, maximum: 2_147_483_647, ...(description ? { description } : {}) });
const Count = (description?: string) => Type.Integer({ minimum: 0, ...(description ? { description } : {}) });
const NullableTime = (description?: string) =>
  Type.Union([Timestamp(), Type.Null()], description ? { description } : {});
const ByReason = (description: string) => Type.Record(Type.String(), Type.Integer(), { description });

// Any text: an id that names no destination is simply not found (404), never a 422.
export const DestinationParams = Type.Object({
  destination_id: Type.String({ minLength: 1, maxLength: 200, description: 'The destination id' }),
});
export const EventParams = Type.Object({
  event_id: Type.String({ minLength: 1, maxLength: 200, description: 'The envelope id of the event (UUID)' }),
});

// ---------------------------------------------------------------------------- DLQ

export const DlqStatusFilter = Type.Union([Type.Literal('dead'), Type.Literal('reprocessed'), Type.Literal('all')], {
  default: 'dead',
  description: 'dead (default): waiting in the dead-letter queue; reprocessed: sent back to the outbox; all',
});

export const DlqQuery = Type.Object({
  ...OffsetQuery,
  status: Type.Optional(DlqStatusFilter),
  error_kind: Type.Optional(
    Type.String({ minLength: 1, maxLength: 100, description: 'rejected, retries_exhausted, credential_revoked, ...' }),
  ),
  organization_id: Type.Optional(Id('Only this organization (alias: org_id); useful on a global destination')),
  integration_id: Type.Optional(Id()),
  stream: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  since: Type.Optional(DateParam('Dead-lettered at or after')),
  until: Type.Optional(DateParam('Dead-lettered before')),
});

export const DlqItem = Type.Object({
  id: Type.String(),
  event_id: Type.String({ description: 'The envelope id of the event' }),
  organization_id: Type.Integer(),
  integration_id: Type.Integer(),
  stream: Type.String(),
  error_kind: Type.String({
    description: 'rejected (refused for good), retries_exhausted, credential_revoked, or the delivery error kind',
  }),
  reason: Type.String({ description: 'Why, as the destination or the engine said it (redacted)' }),
  status_code: Type.Union([Type.Integer(), Type.Null()]),
  attempts: Type.Integer({ description: 'Delivery attempts made before it was dead-lettered' }),
  status: Type.Union([Type.Literal('dead'), Type.Literal('reprocessed')]),
  created_at: Timestamp({ description: 'When it was dead-lettered' }),
  reprocessed_at: NullableTime(),
  event: Type.Unknown({
    description: 'The OCSF event as it would have been delivered; personal data masked unless you hold user.manage',
  }),
  event_masked: Type.Boolean({ description: 'true when personal data in event is masked' }),
});
export const DlqPage = OffsetEnvelope(DlqItem);

export const ReprocessBody = Type.Object(
  {
    ids: Type.Optional(
      Type.Array(Type.String({ format: 'uuid' }), {
        minItems: 1,
        maxItems: MAX_BULK_IDS,
        description: `Dead-letter ids (UUID), 1 to ${MAX_BULK_IDS}`,
      }),
    ),
    all: Type.Optional(
      Type.Boolean({
        description: `true: every dead letter of the destination in your scope, at most ${MAX_REPROCESS_ALL} per call`,
      }),
    ),
    error_kind: Type.Optional(
      Type.String({ minLength: 1, maxLength: 100, description: 'With all: only dead letters of this kind' }),
    ),
  },
  { additionalProperties: false, description: 'Exactly one of ids and all: true' },
);

export const ReprocessResult = Type.Object({
  reprocessed: Count('Events written back to the outbox'),
  batches: Count('Delivery batches written (kind reprocess)'),
  errors: Type.Array(
    Type.Object({
      id: Type.String(),
      reason: Type.Union([Type.Literal('not_found'), Type.Literal('already_reprocessed')]),
    }),
    { description: 'Ids not acted on: unknown or outside your scope (not_found, never 403), or already reprocessed' },
  ),
  remaining: Count('Dead letters still matching (all: call again while it is above 0; ids: 0)'),
  destination_enabled: Type.Boolean({
    description: 'false: the destination is disabled; the events wait in the outbox until it is enabled again',
  }),
});

// ---------------------------------------------------------------------------- ledger

const ledgerCounts = {
  events_in: Count(
    'Events accepted: those normalized (counted by the normalization stage) and those still waiting for it',
  ),
  quarantined: Count(),
  filtered: Count('Events routed nowhere'),
  filtered_by_reason: ByReason('no_route, sampled_out, dropped_by_route, destination_disabled'),
  routed: Count('Events that got at least one copy'),
  copies_added: Type.Integer({ description: 'Copies beyond the first (fan-out): copies − routed' }),
  replayed: Count(
    'Copies of stored events a replay sent to a destination again (they enter the equation like copies_added)',
  ),
  delivered: Count(),
  dead_lettered: Type.Integer({ description: 'Net: dead-lettered − reprocessed out of the DLQ' }),
  dead_lettered_by_reason: ByReason('Net per error kind'),
  dlq_reprocessed: Count(),
  dropped: Count('Copies a destination over its backlog budget with when_full drop_newest did not take'),
  dropped_by_reason: ByReason('backlog_full'),
  pending: Count(
    'Measured: events accepted and waiting for normalization + waiting for routing + in the outbox (primary, reprocess and replay)',
  ),
  pending_normalization: Count(
    'Of pending: events accepted and not yet normalized (ingest batches in the queue, including those of a worker that died)',
  ),
  unaccounted: Type.Integer({
    description:
      'events_in + copies_added + replayed − (delivered + filtered + quarantined + dead_lettered + dropped + pending); 0 when every event is accounted for',
  }),
  shadow_delivered: Count('Shadow copies delivered (outside the equation)'),
  shadow_dropped: Count('Shadow copies dropped (outside the equation)'),
};
export const LedgerCounts = Type.Object(ledgerCounts);
export const LedgerRow = Type.Object({
  organization_id: Type.Integer(),
  integration_id: Type.Integer(),
  stream: Type.String(),
  ...ledgerCounts,
});
export const Ledger = Type.Object(
  { totals: LedgerCounts, rows: Type.Array(LedgerRow, { description: 'Per organization, integration and stream' }) },
  { description: 'The accounting ledger of your scope (docs/delivery.md, The ledger), over the days it keeps' },
);

export const DestinationLedgerRow = Type.Object({
  organization_id: Type.Integer(),
  integration_id: Type.Integer(),
  stream: Type.String(),
  copies: Count('Copies routed to this destination'),
  delivered: Count(),
  dead_lettered: Type.Integer({ description: 'Net: dead-lettered − reprocessed' }),
  dead_lettered_by_reason: ByReason('Net per error kind'),
  dlq_reprocessed: Count(),
  dropped: Count('Copies this destination did not take while over its backlog budget (when_full drop_newest)'),
  dropped_by_reason: ByReason('backlog_full'),
  pending: Count('Events of this destination in the outbox (primary and reprocess)'),
  shadow_delivered: Count(),
  shadow_dropped: Count(),
});

// ---------------------------------------------------------------------------- health

export const HealthStatus = Type.Union(
  [Type.Literal('healthy'), Type.Literal('degraded'), Type.Literal('unhealthy'), Type.Literal('idle')],
  {
    description:
      'unhealthy: disabled or breaker open; degraded: the latest outcome (delivery or test) was a failure (current_error); ' +
      'idle: nothing delivered or pending in the last hour; healthy otherwise. A successful delivery or test after failures makes it healthy at once',
  },
);

const healthFields = {
  destination_id: Type.String(),
  name: Type.String(),
  type: Type.String(),
  organization_id: Type.Union([Type.Integer(), Type.Null()], { description: 'null: a global destination' }),
  enabled: Type.Boolean(),
  disabled_reason: Type.Union([Type.String(), Type.Null()]),
  breaker_state: Type.Union([Type.Literal('closed'), Type.Literal('open'), Type.Literal('half_open')]),
  consecutive_failures: Count(),
  dlq_count: Count('Dead letters waiting (status dead) in your scope'),
  pending_events: Count('Events in the outbox (primary and reprocess) in your scope'),
  oldest_pending_at: NullableTime(),
  lag_seconds: Count('Age of the oldest pending event; 0 when none'),
  last_success_at: NullableTime(),
  current_error: Type.Union([Type.String(), Type.Null()], {
    description:
      'The error of the latest outcome while it is a failure; null once a delivery or a test succeeded after it',
  }),
  last_error: Type.Union([Type.String(), Type.Null()], {
    description: 'The most recent error, kept as history (see last_error_at and current_error)',
  }),
  last_error_at: NullableTime(),
  last_test_at: NullableTime('The last connection test (POST .../test)'),
  last_test_ok: Type.Union([Type.Boolean(), Type.Null()], {
    description: 'Whether that test succeeded; null when never tested',
  }),
  delivered_last_hour: Type.Union([Count(), Type.Null()], {
    description:
      'Events delivered in the current and previous clock hour; null on a global destination without platform scope (its statistics are not kept per organization)',
  }),
  status: HealthStatus,
  backlog: Type.Object(
    {
      events: Type.Union([Count(), Type.Null()], {
        description:
          'Events waiting for this destination (every organization, shadow copies included); null on a global destination without platform scope',
      }),
      bytes: Type.Union([Count(), Type.Null()], { description: 'Their bytes before compression; null as events' }),
      max_events: Count('The budget (delivery.backlog_max_events)'),
      max_bytes: Count('The budget (delivery.backlog_max_bytes)'),
      when_full: Type.Union([Type.Literal('block'), Type.Literal('drop_newest')]),
      state: Type.Union([Type.Literal('ok'), Type.Literal('blocking'), Type.Literal('dropping')], {
        description:
          'ok: within budget; blocking: over it, new events of the integrations that feed it are refused; dropping: over it, its new copies are dropped and counted',
      }),
    },
    { description: 'The backlog budget (docs/delivery.md, Backlog budgets)' },
  ),
};
export const HealthItem = Type.Object(healthFields);
export const HealthBatch = Type.Object({
  items: Type.Array(HealthItem, {
    description: "Every destination you can see: your organizations' and the global ones",
  }),
  ledger: Ledger,
  generated_at: Timestamp(),
});
export const HealthDetail = Type.Object({
  ...healthFields,
  ledger: Type.Array(DestinationLedgerRow, {
    description: "This destination's ledger per organization, integration and stream, in your scope",
  }),
  generated_at: Timestamp(),
});

// ---------------------------------------------------------------------------- metrics

export const MetricsQuery = Type.Object({
  hours: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: MAX_METRICS_HOURS,
      default: DEFAULT_METRICS_HOURS,
      description: `Window in hours, up to ${MAX_METRICS_HOURS}`,
    }),
  ),
});

const metricFields = {
  delivered: Count(),
  bytes: Count(),
  requests: Count(),
  failed_requests: Count(),
  dead_lettered: Count(),
  latency_ms_avg: Count('Mean request latency'),
  latency_ms_max: Count(),
};
export const MetricsPoint = Type.Object({
  hour: Timestamp({ description: 'Start of the hour (UTC)' }),
  ...metricFields,
});
export const Metrics = Type.Object({
  destination_id: Type.String(),
  hours: Type.Integer(),
  from: Timestamp({ description: 'Start of the first hour of the window' }),
  per_organization: Type.Boolean({
    description:
      "true on a global destination without platform scope: series and totals are withheld (they span every organization); ledger holds your organizations' counts",
  }),
  series: Type.Array(MetricsPoint, { description: 'One point per hour, oldest first, zeros included' }),
  totals: Type.Union([Type.Object(metricFields), Type.Null()]),
  ledger: Type.Array(
    Type.Object({
      day: Type.String({ description: 'UTC day, YYYY-MM-DD' }),
      delivered: Count(),
      dead_lettered: Count(),
      dlq_reprocessed: Count(),
    }),
    { description: 'Per UTC day of the window, in your scope' },
  ),
});

// ---------------------------------------------------------------------------- lineage

export const LineageQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_LIMIT, default: 50 })),
  offset: Type.Optional(Type.Integer({ minimum: 0, default: 0 })),
});

export const LineageRecord = Type.Object({
  event_id: Type.String(),
  organization_id: Type.Integer(),
  integration_id: Type.Integer(),
  stream: Type.String(),
  mapping_version_id: Type.Union([Type.String(), Type.Null()]),
  received_at: Timestamp(),
  routes: Type.Array(Type.String(), { description: 'Route ids that matched, in order' }),
  filtered: Type.Union([Type.String(), Type.Null()], {
    description: 'Why no copy was made (no_route, sampled_out, dropped_by_route)',
  }),
  copies: Type.Array(
    Type.Object({
      destination_id: Type.String(),
      route_id: Type.Union([Type.String(), Type.Null()]),
      kind: Type.String({ description: 'primary, shadow or reprocess' }),
      delivery_batch_id: Type.String(),
      attempts: Type.Array(
        Type.Object({
          attempt: Type.Integer(),
          outcome: Type.String({ description: 'delivered, retry, dead_lettered, partial' }),
          status_code: Type.Union([Type.Integer(), Type.Null()]),
          error: Type.Union([Type.String(), Type.Null()]),
          duration_ms: Type.Union([Type.Integer(), Type.Null()]),
          at: Timestamp(),
        }),
      ),
      dead_lettered: Type.Boolean({
        description: "true while the event waits in this destination's dead-letter queue",
      }),
    }),
  ),
});
export const LineageList = {
  ...Type.Array(LineageRecord, {
    description: 'Newest first; an empty list when lineage is off (WEIR_LINEAGE_ENABLED)',
  }),
  headers: { 'x-total-count': Type.String({ description: 'Events matching (0 when lineage is off)' }) },
};
export const EventLineage = Type.Array(LineageRecord, {
  description:
    "The event's lineage (one record); an empty list when lineage is off. With lineage on, an unknown event or one outside your scope is 404.",
});

// ---------------------------------------------------------------------------- tap

export const TapQuery = Type.Object({
  seconds: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: MAX_TAP_SECONDS,
      default: DEFAULT_TAP_SECONDS,
      description: 'How long to listen',
    }),
  ),
  limit: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: MAX_TAP_LIMIT,
      default: DEFAULT_TAP_LIMIT,
      description: 'Stop after this many events',
    }),
  ),
});

export const NdjsonBody = Type.Unsafe<Readable | string>(
  Type.String({
    description:
      'application/x-ndjson: one line {"at": RFC 3339, "event": masked OCSF event} per event the destination receives',
  }),
);
