import { Type, type TSchema } from 'typebox';
import { Timestamp } from '../../platform/http/schemas.js';
import { COST_DAYS_MAX, LAGGING_AFTER_SECONDS } from './service.js';

const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);
const Id = (description?: string) =>
  Type.Integer({ minimum: 1, maximum: 2_147_483_647, ...(description ? { description } : {}) });
const CursorKind = Type.Union([Type.Literal('date'), Type.Literal('opaque')]);

export const StateQuery = Type.Object({
  organization_id: Type.Optional(Id("Only this organization's streams (alias: org_id)")),
  integration_id: Type.Optional(Id("Only this integration's streams")),
  platform: Type.Optional(
    Type.String({ minLength: 1, maxLength: 100, description: 'Only integrations of this platform' }),
  ),
});

export const StreamParams = Type.Object({
  integration_id: Id(),
  stream: Type.String({
    minLength: 1,
    maxLength: 100,
    description: "A stream of the integration's platform (GET /api/collectors/platforms-streams)",
  }),
});

const Gap = Type.Object(
  {
    from: Timestamp(),
    to: Timestamp(),
    detected_at: Nullable(Timestamp()),
  },
  {
    description:
      'A window the vendor no longer held when collection reached it (the watermark had fallen behind its retention): those events are lost',
  },
);

export const CollectorState = Type.Object(
  {
    integration_id: Type.Integer(),
    integration_name: Type.String(),
    organization_id: Type.Integer(),
    platform: Type.String(),
    stream: Type.String(),
    cursor_kind: Nullable(CursorKind),
    watermark_at: Nullable(
      Timestamp({
        description:
          'Date cursors: every event before it has been durably accepted. Null for opaque cursors and before the first window completes. Judge lag from this.',
      }),
    ),
    last_success_at: Nullable(
      Timestamp({ description: 'Last error-free cycle, even one far behind: it only says the collector ran' }),
    ),
    consecutive_failures: Type.Integer({ minimum: 0 }),
    last_run_capped: Type.Boolean({
      description: 'The last cycle stopped at its ceiling (pages or time) with backlog left; the next one continues',
    }),
    last_error: Nullable(
      Type.String({ description: 'Message of the last failure (never secrets); cleared by a success' }),
    ),
    paused_reason: Nullable(
      Type.String({
        description:
          'Why collection waits with its cursor where it is: the disk under its floor, or a destination these events feed over its backlog budget. Null when it does not wait',
      }),
    ),
    lag_seconds: Nullable(Type.Integer({ description: 'now - watermark_at (date cursors only)' })),
    next_run_at: Nullable(
      Timestamp({ description: 'When the scheduler next enqueues a cycle (failures and Retry-After move it later)' }),
    ),
    cycles_skipped_locked: Type.Integer({
      minimum: 0,
      description: 'Cycles skipped because the previous cycle of the stream still ran',
    }),
    gap: Nullable(Gap),
  },
  { description: 'Collector state of one integration and stream' },
);

export const StateList = Type.Array(CollectorState);

export const Summary = Type.Object({
  generated_at: Timestamp(),
  integrations: Type.Integer(),
  streams: Type.Integer(),
  healthy: Type.Integer({ description: 'Streams whose last cycle succeeded and that do not lag' }),
  failing: Type.Integer({ description: 'Streams with consecutive_failures > 0' }),
  lagging: Type.Integer({ description: `Date streams whose watermark is more than ${LAGGING_AFTER_SECONDS} s behind` }),
  capped: Type.Integer(),
  never_run: Type.Integer(),
  cycles_skipped_locked: Type.Integer(),
  max_watermark_lag_seconds: Nullable(Type.Integer()),
  lagging_after_seconds: Type.Integer(),
  gaps: Type.Array(
    Type.Object({
      integration_id: Type.Integer(),
      integration_name: Type.String(),
      stream: Type.String(),
      from: Timestamp(),
      to: Timestamp(),
      detected_at: Nullable(Timestamp()),
    }),
  ),
  platforms: Type.Array(
    Type.Object({
      platform: Type.String(),
      streams: Type.Integer(),
      failing: Type.Integer(),
      lagging: Type.Integer(),
      capped: Type.Integer(),
    }),
  ),
});

export const CostQuery = Type.Object({
  days: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: COST_DAYS_MAX,
      default: 7,
      description: `UTC days back, today included (at most ${COST_DAYS_MAX})`,
    }),
  ),
  organization_id: Type.Optional(Id('Only this organization (alias: org_id)')),
  integration_id: Type.Optional(Id()),
  platform: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
});

const Count = Type.Integer({ minimum: 0 });

export const CostSummary = Type.Object({
  days: Type.Integer(),
  from_day: Type.String({ description: 'First UTC day counted (YYYY-MM-DD)' }),
  to_day: Type.String(),
  totals: Type.Object({ events: Count, bytes: Count, requests: Count }),
  items: Type.Array(
    Type.Object({
      integration_id: Type.Integer(),
      integration_name: Type.String(),
      organization_id: Type.Integer(),
      platform: Type.String(),
      day: Type.String(),
      events: Type.Integer({ minimum: 0, description: 'Events in (stream_counters.events_in; pushed and collected)' }),
      bytes: Type.Integer({ minimum: 0, description: 'Bytes in (stream_counters.bytes_in)' }),
      requests: Type.Integer({ minimum: 0, description: 'Vendor API requests made by collection' }),
      rate_limited: Count,
      errors: Count,
      pages: Count,
      filtered: Type.Integer({ minimum: 0, description: 'Events dropped at the source by the collection filters' }),
    }),
    { description: 'Per integration and UTC day, newest day first' },
  ),
});

export const PlatformStreams = Type.Array(
  Type.Object({
    platform: Type.String(),
    display_name: Type.String(),
    vendor: Type.String(),
    streams: Type.Array(
      Type.Object({
        name: Type.String(),
        display_name: Type.String(),
        description: Type.String(),
        cursor_kind: CursorKind,
        default_window_seconds: Type.Integer({ description: 'First run and cursor reset start this far back' }),
        interval_seconds: Type.Integer({
          description: 'Default time between cycles (config.interval_seconds overrides it)',
        }),
        retention_days: Type.Integer({ description: 'How long the vendor keeps the data' }),
        page_size: Type.Integer(),
        max_window_seconds: Type.Integer(),
        settle_seconds: Type.Integer({ description: "Windows end this long before now: the vendor's ingestion delay" }),
      }),
    ),
  }),
);

export const Vendors = Type.Array(
  Type.Object({
    vendor: Type.String(),
    platforms: Type.Array(Type.String()),
    auth: Type.Array(Type.String()),
    cursor_kinds: Type.Array(CursorKind),
    tenant_discovery: Type.Boolean({ description: 'Managed-provider parents list their customer tenants' }),
    backfill: Type.Boolean({ description: 'Past windows can be collected again (date-cursor streams)' }),
  }),
);

export const TriggerResult = Type.Object({
  task_id: Type.String({
    description: "The run's id (collector_runs); the answer says the cycle is queued, not its result",
  }),
  integration_id: Type.Integer(),
  stream: Type.String(),
  status: Type.Literal('queued'),
});
