import { Type, type TSchema } from 'typebox';
import { Timestamp } from '../../platform/http/schemas.js';

const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);

export const IntegrationParams = Type.Object({ integration_id: Type.Integer({ minimum: 1, maximum: 2_147_483_647 }) });

const StreamHealth = Type.Object({
  stream: Type.String(),
  status: Type.Union(
    [
      Type.Literal('ok'),
      Type.Literal('lagging'),
      Type.Literal('failing'),
      Type.Literal('capped'),
      Type.Literal('idle'),
      Type.Literal('never_run'),
    ],
    {
      description:
        'failing: the last cycles failed; lagging: the watermark (or, for opaque cursors, the last success) is more than 30 min and three intervals behind, ' +
        "or data is falling out of the vendor's retention; capped: the last cycle stopped at its ceiling with backlog left; idle: collection is off " +
        '(inactive integration or config.collect not true); never_run: no cycle has run yet',
    },
  ),
  cursor: Nullable(
    Type.Union([Type.Literal('date'), Type.Literal('opaque')], {
      description: "The connector's cursor kind; null for a stream no connector describes",
    }),
  ),
  watermark_at: Nullable(Timestamp({ description: 'Date cursors: everything before it was accepted' })),
  lag_seconds: Nullable(Type.Integer({ description: 'now - watermark_at; null for opaque cursors' })),
  last_run_at: Nullable(Timestamp()),
  last_success_at: Nullable(Timestamp()),
  consecutive_failures: Type.Integer(),
  last_run_capped: Type.Boolean(),
  last_error: Nullable(Type.String()),
  last_error_at: Nullable(Timestamp()),
  gap: Nullable(
    Type.Object(
      {
        from: Timestamp(),
        to: Nullable(Timestamp()),
        recorded: Type.Boolean({
          description:
            "true: the collector recorded it (gap_from/gap_to); false: the watermark is older than the vendor's retention now",
        }),
        detected_at: Nullable(Timestamp()),
      },
      { description: 'A window the vendor no longer holds, so its events were (or will be) skipped' },
    ),
  ),
});

const HEALTH = {
  integration_id: Type.Integer(),
  name: Type.String(),
  platform: Type.String(),
  organization_id: Type.Integer(),
  is_active: Type.Boolean(),
  status: Type.Union(
    [
      Type.Literal('healthy'),
      Type.Literal('degraded'),
      Type.Literal('failing'),
      Type.Literal('idle'),
      Type.Literal('inactive'),
    ],
    {
      description:
        'failing: a stream fails; degraded: a stream lags, is capped or has a gap, or events were quarantined in the last 24 h; ' +
        'idle: nothing arrived and nothing collects; inactive: the integration is deactivated',
    },
  ),
  issues: Type.Array(Type.String(), { description: 'Why the status is what it is, in words' }),
  collection: Type.Object({
    mode: Type.Union([Type.Literal('pull'), Type.Literal('push')], {
      description: 'pull: the platform has a vendor connector',
    }),
    collecting: Type.Boolean({ description: 'Active, config.collect true and not a managed-provider parent' }),
    streams: Type.Array(StreamHealth, { description: 'The streams it collects and any stream with collector state' }),
  }),
  quarantine: Type.Object({
    open: Type.Integer({ description: 'Events still in quarantine' }),
    last_24h: Type.Integer({ description: 'Events quarantined in the last 24 hours' }),
    by_error_kind: Type.Record(Type.String(), Type.Integer(), { description: 'Open events per error kind' }),
  }),
  new_fields: Type.Object({
    count: Type.Integer({ description: 'Drift fields with status new' }),
    paths: Type.Array(Type.Object({ stream: Type.String(), path: Type.String() }), {
      description: 'The 5 most recently seen',
    }),
  }),
  events_in: Type.Object({
    since_day: Type.String({
      description: 'UTC day (YYYY-MM-DD) 24 h ago: counters are per UTC day, so this covers the last 24 to 48 hours',
    }),
    total: Type.Integer(),
    by_stream: Type.Record(Type.String(), Type.Integer()),
    last_event_at: Nullable(Timestamp()),
  }),
};

export const IntegrationHealth = Type.Object(HEALTH);

const CachedAt = Timestamp({ description: 'When this answer was computed (answers are cached 60 s)' });

export const HealthList = Type.Object({ cached_at: CachedAt, items: Type.Array(IntegrationHealth) });

export const SingleHealth = Type.Object({ ...HEALTH, cached_at: CachedAt });
