import { Type, type TSchema } from 'typebox';
import { OffsetQuery, Timestamp } from '../../platform/http/schemas.js';

const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);
const Id = (description?: string) =>
  Type.Integer({ minimum: 1, maximum: 2_147_483_647, ...(description ? { description } : {}) });

export const MAX_DESTINATIONS_PER_ROUTE = 50;
export const MAX_DRY_RUN_EVENTS = 1000;
export const MAX_DRY_RUN_ROUTES = 100;
export const DEFAULT_WINDOW_HOURS = 24;
export const MAX_WINDOW_HOURS = 168;

// Route ids are UUIDv7 text; the parameter is a plain string so that anything unknown is
// a 404 like any route outside the caller's scope.
export const RouteParams = Type.Object({ route_id: Type.String({ minLength: 1, maxLength: 64 }) });

// Conditions and transforms are checked by the service, not by the request schema: a 422
// route.invalid_definition then names where in the tree each problem is.
const Condition = Type.Unknown({
  description:
    'null (every event) or a condition in the one condition language shared with mappings (docs/conditions.md), as text ' +
    '(`class_uid = 3002 and src_endpoint.ip cidr 10.0.0.0/8`, the language of searches; a syntax error is a 422 naming the ' +
    'line and column; an empty text is null) or as the JSON tree: {field, op, value}, {all: [...]}, {any: [...]}, {not: {...}}. Ops: eq, ne, in, ' +
    'not_in, prefix, suffix, contains, regex (RE2), exists, not_exists, cidr, gt, gte, lt, lte. Fields: OCSF paths ' +
    '(actor.user.name, observables[*].value) or envelope.organization_id / integration_id / stream / valid. A path no ' +
    'supported OCSF class has is refused (422, with the closest known field); anything under unmapped is allowed.',
});
const Transforms = Type.Unknown({
  description:
    'A list of {type: drop_fields|keep_fields, fields: [paths]}, {type: sample, rate: (0,1]}, {type: mask, fields?: [paths]}. docs/routing.md',
});
const DestinationIds = Type.Array(Type.String({ minLength: 1, maxLength: 64 }), {
  maxItems: MAX_DESTINATIONS_PER_ROUTE,
  description:
    "Destinations of the route's organization, or global ones. Empty: matching events are dropped on purpose.",
});
const Name = Type.String({ minLength: 1, maxLength: 200 });
const Description = Type.String({ maxLength: 2000 });
const Comment = Type.String({ maxLength: 1000, description: 'Kept with the version this change writes' });

const RouteWarning = Type.Object({
  code: Type.Union([Type.Literal('route.unreachable'), Type.Literal('route.shadows')]),
  message: Type.String(),
  route_id: Type.String({ description: 'The other route: the final one that shadows this, or the one this shadows' }),
  route_name: Type.String(),
  position: Type.Integer(),
});

export const Route = Type.Object(
  {
    id: Type.String(),
    organization_id: Type.Integer(),
    name: Type.String(),
    description: Type.String(),
    position: Type.Integer({ description: 'Evaluation order within the organization, 1-based, dense' }),
    enabled: Type.Boolean(),
    condition: Type.Unknown({ description: 'The condition tree; null matches every event' }),
    condition_text: Nullable(
      Type.String({
        description:
          'The condition in the text form (docs/conditions.md); null for no condition or a tree the text cannot say exactly',
      }),
    ),
    transforms: Type.Array(Type.Unknown()),
    destination_ids: Type.Array(Type.String()),
    final: Type.Boolean({ description: 'true: a match stops evaluation; false: later routes may match too (fan-out)' }),
    version: Type.Integer({ description: 'Moves on every change of the definition (not on a reorder)' }),
    warnings: Type.Optional(
      Type.Array(RouteWarning, {
        description:
          'Present when the order makes a route useless: route.unreachable (an earlier final route matches every event ' +
          'this one would, so it never matches) or route.shadows (later routes never match because of this one)',
      }),
    ),
    created_at: Timestamp(),
    updated_at: Timestamp({
      description: 'Moves on every change, reorders included; dispatchers reload at their next cycle',
    }),
  },
  { $id: 'Route', description: 'A route: which events (condition) go where (destinations), after which transforms' },
);

export const RouteList = Type.Array(Route);

export const ListQuery = Type.Object({
  organization_id: Type.Optional(Id("Only this organization's routes (alias: org_id)")),
});

export const CreateBody = Type.Object(
  {
    name: Name,
    organization_id: Type.Optional(
      Id('Required when you can see several organizations; default: your only organization'),
    ),
    description: Type.Optional(Description),
    enabled: Type.Optional(Type.Boolean({ default: true })),
    condition: Type.Optional(Condition),
    transforms: Type.Optional(Transforms),
    destination_ids: DestinationIds,
    final: Type.Optional(Type.Boolean({ default: true })),
    position: Type.Optional(
      Type.Integer({
        minimum: 1,
        description: 'Where to insert (later routes move down); default and beyond the end: last',
      }),
    ),
    comment: Type.Optional(Comment),
  },
  { additionalProperties: false },
);

export const UpdateBody = Type.Object(
  {
    name: Type.Optional(Name),
    description: Type.Optional(Description),
    enabled: Type.Optional(Type.Boolean()),
    condition: Type.Optional(Condition),
    transforms: Type.Optional(Transforms),
    destination_ids: Type.Optional(DestinationIds),
    final: Type.Optional(Type.Boolean()),
    position: Type.Optional(
      Type.Integer({ minimum: 1, description: 'Move the route there (others shift); beyond the end: last' }),
    ),
    comment: Type.Optional(Comment),
  },
  { additionalProperties: false, description: 'Any subset of the editable fields' },
);

export const ReorderBody = Type.Object(
  {
    organization_id: Type.Optional(Id("The organization whose routes these are (default: the routes' own)")),
    route_ids: Type.Array(Type.String({ minLength: 1, maxLength: 64 }), {
      minItems: 1,
      maxItems: 1000,
      description: 'Every route id of the organization, each once, in the new evaluation order',
    }),
  },
  { additionalProperties: false },
);

export const RollbackBody = Type.Object(
  {
    version: Type.Integer({
      minimum: 1,
      description: "The version whose definition becomes the route's again, as a new version",
    }),
    comment: Type.Optional(Comment),
  },
  { additionalProperties: false },
);

export const AuditQuery = Type.Object({
  ...OffsetQuery,
  outcome: Type.Optional(
    Type.Union([Type.Literal('success'), Type.Literal('failed'), Type.Literal('denied'), Type.Literal('error')]),
  ),
});

export const WindowQuery = Type.Object({
  hours: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: MAX_WINDOW_HOURS,
      default: DEFAULT_WINDOW_HOURS,
      description: `Window in hours, up to ${MAX_WINDOW_HOURS}`,
    }),
  ),
});

export const FlowQuery = Type.Object({
  ...WindowQuery.properties,
  organization_id: Type.Optional(Id('Only this organization (alias: org_id)')),
});

export const TopologyQuery = Type.Object({
  organization_id: Type.Optional(Id('Only this organization (alias: org_id)')),
});

// ---- dry run ----

const DraftRoute = Type.Object(
  {
    id: Type.Optional(
      Type.String({ minLength: 1, maxLength: 64, description: 'Echoed in the results (default: draft-1, draft-2...)' }),
    ),
    name: Type.Optional(Name),
    enabled: Type.Optional(Type.Boolean({ default: true })),
    condition: Type.Optional(Condition),
    transforms: Type.Optional(Transforms),
    destination_ids: Type.Optional(DestinationIds),
    final: Type.Optional(Type.Boolean({ default: true })),
  },
  { additionalProperties: false },
);

export const DryRunBody = Type.Object(
  {
    organization_id: Type.Optional(Id('Required when you can see several organizations')),
    events: Type.Array(
      Type.Record(Type.String(), Type.Unknown(), {
        description:
          'An OCSF event, or {ocsf: {...}, id?, integration_id?, stream?, valid?} to set the envelope fields conditions may test ' +
          '(an object with an `ocsf` object member is read as the second form)',
      }),
      { minItems: 1, maxItems: MAX_DRY_RUN_EVENTS },
    ),
    routes: Type.Optional(
      Type.Array(DraftRoute, {
        maxItems: MAX_DRY_RUN_ROUTES,
        description: "Draft routes, in evaluation order, tried instead of the organization's saved enabled routes",
      }),
    ),
  },
  { additionalProperties: false },
);

const FilterReason = Type.Union([
  Type.Literal('no_route'),
  Type.Literal('sampled_out'),
  Type.Literal('dropped_by_route'),
  Type.Literal('destination_disabled'),
]);

export const DryRunResult = Type.Object({
  organization_id: Type.Integer(),
  source: Type.Union([Type.Literal('saved'), Type.Literal('draft')], {
    description: "saved: the organization's enabled routes; draft: the routes given",
  }),
  routes: Type.Array(Type.Object({ id: Type.String(), name: Type.String(), position: Type.Integer() })),
  destinations: Type.Array(
    Type.Object({
      id: Type.String(),
      name: Nullable(Type.String()),
      known: Type.Boolean({ description: 'false: unknown, deleted or not usable by the organization' }),
      enabled: Type.Boolean(),
      would_receive: Type.Boolean({
        description:
          'The dispatcher would write copies for it now (known and enabled, or stopped by a revoked credential)',
      }),
    }),
  ),
  results: Type.Array(
    Type.Object({
      index: Type.Integer(),
      id: Type.String({ description: 'The envelope id used (sampling is decided by its hash)' }),
      routes: Type.Array(Type.String(), { description: 'Ids of the routes that matched, in order' }),
      filtered: Type.Optional(FilterReason),
      copies: Type.Array(
        Type.Object({
          destination_id: Type.String(),
          route_id: Type.String(),
          event: Type.Unknown({
            description: "The OCSF event the destination would receive, after the route's transforms",
          }),
        }),
      ),
    }),
  ),
  totals: Type.Object({
    events: Type.Integer(),
    routed: Type.Integer({ description: 'Events with at least one copy for a destination that would receive it' }),
    copies: Type.Integer(),
    filtered: Type.Record(Type.String(), Type.Integer(), {
      description: 'no_route, sampled_out, dropped_by_route, destination_disabled',
    }),
    matched: Type.Record(Type.String(), Type.Integer(), { description: 'Per route id' }),
    sampled_out: Type.Record(Type.String(), Type.Integer(), { description: 'Per route id' }),
    per_destination: Type.Record(Type.String(), Type.Integer(), { description: 'Copies per destination id' }),
  }),
});

// ---- topology, flow, health, metrics ----

const Node = Type.Object({
  id: Type.String({
    description:
      'kind:ref (mapping nodes are per organization: mapping:<org>:<definition id or unmapped:platform:stream>; ' +
      "detections:<org>, the organization's rule findings, a stream of their own)",
  }),
  kind: Type.Union([
    Type.Literal('integration'),
    Type.Literal('mapping'),
    Type.Literal('detections'),
    Type.Literal('route'),
    Type.Literal('destination'),
  ]),
  label: Type.String(),
  status: Type.String({
    description:
      'integration: active|inactive; mapping: live|no_live_version|missing; detections: active; route: enabled|disabled; ' +
      'destination: enabled|disabled|breaker_open|breaker_half_open|missing',
  }),
  ref_id: Nullable(Type.String({ description: 'The id of the integration, mapping definition, route or destination' })),
  organization_id: Nullable(Type.Integer({ description: 'null for a global destination' })),
});
const Edge = Type.Object({ from: Type.String(), to: Type.String() });
const FlowEdge = Type.Object({
  from: Type.String(),
  to: Type.String(),
  count: Type.Optional(
    Type.Integer({
      description:
        'Events the edge carried in the window, where the counters say it exactly: integration → mapping, the ' +
        "stream's events in; mapping → route, what the mapping normalized; detections → route, the findings (a route " +
        'is offered every event of its organization that reaches routing)',
    }),
  ),
});

export const Topology = Type.Object({ nodes: Type.Array(Node), edges: Type.Array(Edge) });

export const Flow = Type.Object({
  window_hours: Type.Integer(),
  from: Timestamp({
    description:
      'Start of the window (hourly counters); daily counters (integrations, mappings, filtered) cover the UTC days it touches',
  }),
  nodes: Type.Array(
    Type.Object({
      ...Node.properties,
      counters: Type.Record(Type.String(), Type.Integer(), {
        description:
          'integration and mapping: events_in, normalized, quarantined (still in quarantine, net of reprocessing: ' +
          'events_in = normalized + quarantined), reprocessed (quarantined events a reprocess normalized); detections: ' +
          'findings; route: matched, sampled_out; destination: copies (handed to it, replays included), delivered, ' +
          'dead_lettered (net of DLQ reprocess), dropped (copies = delivered + dead_lettered + dropped + in flight), ' +
          'failed_requests',
      }),
    }),
  ),
  edges: Type.Array(FlowEdge),
  totals: Type.Object(
    {
      events_in: Type.Integer({ description: 'Events received from integrations' }),
      findings: Type.Integer({ description: 'Findings the detection rules made (routed like events)' }),
      quarantined: Type.Integer({ description: 'Still in quarantine (net of reprocessing)' }),
      reprocessed: Type.Integer({ description: 'Quarantined events a reprocess normalized' }),
      filtered: Type.Record(Type.String(), Type.Integer(), { description: 'By reason (ledger)' }),
      routed: Type.Integer({ description: 'Events sent to at least one destination' }),
      copies: Type.Integer({ description: 'Copies handed to destinations (fan-out and replays included)' }),
      delivered: Type.Integer(),
      dead_lettered: Type.Integer({ description: 'Net of DLQ reprocess' }),
      dlq_reprocessed: Type.Integer(),
      dropped: Type.Integer({ description: 'Copies a full destination did not take' }),
    },
    {
      description:
        'The ledger over the window (docs/delivery.md): events_in + findings − quarantined = routed + filtered + ' +
        'waiting for routing; copies = delivered + dead_lettered + dropped + in flight',
    },
  ),
});

export const Health = Type.Object({
  route_id: Type.String(),
  status: Type.Union(
    [
      Type.Literal('disabled'),
      Type.Literal('idle'),
      Type.Literal('unhealthy'),
      Type.Literal('degraded'),
      Type.Literal('healthy'),
    ],
    {
      description:
        'disabled: the route is off; idle: nothing matched in the window (not a fault); unhealthy: a destination is missing, ' +
        'disabled or its breaker open; degraded: a destination dead-lettered events of the organization in the window',
    },
  ),
  matched: Type.Integer(),
  sampled_out: Type.Integer(),
  window_hours: Type.Integer(),
  destinations: Type.Array(
    Type.Object({
      id: Type.String(),
      name: Nullable(Type.String({ description: 'null when the destination no longer exists' })),
      enabled: Type.Boolean(),
      breaker_state: Type.String({ description: 'closed, open, half_open' }),
      dlq_count: Type.Integer({ description: "Events of the route's organization dead-lettered in the window" }),
    }),
  ),
});

export const MetricsSeries = Type.Array(
  Type.Object({
    hour: Timestamp({ description: 'Start of the hour (UTC)' }),
    matched: Type.Integer(),
    sampled_out: Type.Integer(),
    copies: Type.Integer(),
  }),
  { description: 'One point per hour of the window, oldest first, zeros included' },
);
