import { Type } from 'typebox';
import { Timestamp } from '../../platform/http/schemas.js';

const Count = (description?: string) => Type.Integer({ minimum: 0, ...(description ? { description } : {}) });

export const SummaryQuery = Type.Object({
  organization_id: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: 2_147_483_647,
      description: 'Only this organization (alias: org_id); another organization answers 404',
    }),
  ),
});

const Terms = {
  delivered: Count('Copies delivered (ledger outcome delivered)'),
  filtered: Count('Events filtered: no route, sampled out, dropped by a route, destination disabled'),
  quarantined: Type.Integer({
    description:
      'Events quarantined by normalization, net of those a reprocess released in the same window (negative when a reprocess released more than were quarantined in it)',
  }),
  dead_lettered: Count('Copies dead-lettered in the window (before any DLQ reprocess)'),
  dlq_reprocessed: Count('Dead letters sent back to delivery in the window'),
};

const hourWindow = (description: string) =>
  Type.Object(
    {
      resolution: Type.Literal('hour', { description: 'Summed from hourly buckets (UTC hours)' }),
      from: Timestamp({ description: 'The start of the first hourly bucket summed (always the start of a UTC hour)' }),
      to: Timestamp({ description: 'Now (generated_at): the current hour counts so far' }),
      events_in: Count(
        'Events accepted in the buckets (by the hour the batch was received), plus events accepted since from and not yet normalized',
      ),
      ...Terms,
    },
    {
      description: `${description}. Whole hourly buckets: events in and quarantined count in the hour a batch was received, the other terms in the hour the outcome was written`,
    },
  );

const HourPoint = Type.Object({
  hour: Timestamp({ description: 'Start of the UTC hour' }),
  events_in: Count(
    'Events accepted in batches received in the hour and normalized (the not yet normalized count in the windows, not here)',
  ),
  ...Terms,
});

const DayWindow = Type.Object({
  resolution: Type.Literal('utc_day', { description: 'Summed from the UTC day counters' }),
  day: Type.String({ description: 'The UTC day (YYYY-MM-DD)' }),
  from: Timestamp(),
  to: Timestamp(),
  events_in: Count(
    'Events accepted (stream_counters.events_in; today also the events accepted and not yet normalized)',
  ),
  ...Terms,
});

export const DashboardSummary = Type.Object({
  generated_at: Timestamp(),
  organization_id: Type.Union([Type.Integer(), Type.Null()], {
    description: 'The organization the summary is narrowed to; null: every organization in your scope',
  }),
  organizations: Count('Organizations the summary covers'),
  traffic: Type.Object(
    {
      last_hour: hourWindow(
        'The current UTC hour so far plus the whole hour before it: 60 to 120 minutes, from the start of the previous hour to now',
      ),
      last_24_hours: hourWindow(
        'The current UTC hour so far plus the 24 whole hours before it: 24 to 25 hours, from the start of the hour 24 hours before the current one to now',
      ),
      today: DayWindow,
      yesterday: DayWindow,
      pending: Type.Object(
        {
          total: Count(),
          normalization: Count('Accepted, not normalized yet'),
          routing: Count('Normalized, not routed yet'),
          outbox: Count('Copies waiting for delivery'),
        },
        { description: 'Measured now, not per day' },
      ),
      hourly: Type.Array(HourPoint, {
        description:
          "The ledger's terms per UTC hour over the last_24_hours window (25 points, oldest first, zeros included): the terms over time",
      }),
    },
    { description: "The ledger's terms (docs/delivery.md, The ledger)" },
  ),
  destinations: Type.Object({
    total: Count(),
    by_health: Type.Object(
      { healthy: Count(), degraded: Count(), unhealthy: Count(), idle: Count() },
      { description: 'The same health word as GET /api/collectors/destinations/health' },
    ),
  }),
  integrations: Type.Object({
    total: Count(),
    by_collection_state: Type.Object(
      {
        collecting: Count(),
        failing: Count(),
        never_run: Count(),
        push: Count(),
        not_collecting: Count(),
        inactive: Count(),
      },
      {
        description:
          "collecting: pull, no stream failing; failing: a stream's last cycles failed; never_run: no successful cycle yet; push: the source pushes; not_collecting: pull with config.collect off; inactive: deactivated",
      },
    ),
  }),
  drift: Type.Object({ open: Count('New fields not mapped or ignored yet') }),
  quarantine: Type.Object({ open: Count('Events still quarantined') }),
  detections: Type.Object({
    open: Count('Detections new or in progress'),
    available: Type.Boolean({
      description: 'Always true since detections exist (kept for clients of earlier versions)',
    }),
  }),
  license: Type.Object({
    edition: Type.Union([Type.Literal('community'), Type.Literal('enterprise')]),
    status: Type.Union([Type.Literal('active'), Type.Literal('expired_in_grace'), Type.Literal('community')]),
    expires_at: Type.Union([Timestamp(), Type.Null()]),
    expired_in_grace: Type.Boolean(),
    org_limit: Type.Integer(),
    features: Type.Array(Type.String()),
  }),
});
