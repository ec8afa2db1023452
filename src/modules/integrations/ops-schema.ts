// Schemas of the integration operations around collection: filters, auto-approve policy,
// tenants, connection tests, health, overview and sync-status.
import { Type, type TSchema } from 'typebox';
import {
  MAX_BULK_IDS,
  OffsetEnvelope,
  OffsetQuery,
  PageBodySchema,
  PageQuery,
  Timestamp,
} from '../../platform/http/schemas.js';
import { Integration } from './schema.js';

const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);
const NullableTime = (description?: string) => Nullable(Timestamp(description ? { description } : {}));
const Count = (description?: string) => Type.Integer({ minimum: 0, ...(description ? { description } : {}) });

const Condition = Type.Unknown({
  description:
    'A route condition ({field, op, value}, {all: [...]}, {any: [...]}, {not: {...}}; ops eq, ne, in, not_in, prefix, suffix, contains, ' +
    'regex (RE2), exists, not_exists, cidr, gt, gte, lt, lte) evaluated against the RAW vendor event: field paths address the ' +
    "vendor's own fields (eventType, actor.alternateId). envelope.* fields are not available. In a request, also its text " +
    'form (`eventType startswith "system."`, docs/conditions.md); the tree is stored.',
});

export const FiltersBody = Type.Object(
  {
    streams: Type.Optional(
      Nullable(
        Type.Array(Type.String({ minLength: 1, maxLength: 100 }), {
          maxItems: 100,
          description: "Streams to collect (each one of the platform's); null or absent: every stream",
        }),
      ),
    ),
    exclude: Type.Optional(
      Nullable(
        Type.Array(Condition, {
          maxItems: 50,
          description: 'An event matching ANY condition is dropped at the source (counted in collector_usage.filtered)',
        }),
      ),
    ),
  },
  { additionalProperties: false, description: 'Replaces the stored filters; 422 with the location of every problem' },
);

export const Filters = Type.Object({
  streams: Nullable(Type.Array(Type.String())),
  exclude: Type.Array(Condition),
  available_streams: Type.Array(Type.String(), {
    description: "The streams of the platform's connector (empty for push-only platforms)",
  }),
});

export const PolicyBody = Type.Object(
  {
    enabled: Type.Boolean({ description: 'Select newly discovered tenants automatically at sync-tenants' }),
    name_pattern: Type.Optional(
      Nullable(
        Type.String({
          minLength: 1,
          maxLength: 512,
          description:
            'RE2 regular expression tested against the tenant name (unanchored; use ^ and $). null: every name. Absent: unchanged',
        }),
      ),
    ),
    max_tenants: Type.Optional(
      Nullable(
        Type.Integer({
          minimum: 1,
          maximum: 100_000,
          description:
            'Auto-approval stops once the parent has this many selected tenants. null: no ceiling. Absent: unchanged',
        }),
      ),
    ),
  },
  { additionalProperties: false },
);

export const Policy = Type.Object({
  enabled: Type.Boolean(),
  name_pattern: Nullable(Type.String()),
  max_tenants: Nullable(Type.Integer()),
  updated_at: NullableTime(),
});

const VendorFailure = Type.Object(
  {
    kind: Type.String({
      description:
        'auth, rate_limited, unavailable, bad_request, invalid_response, blocked_address, config, timeout, connector_error',
    }),
    message: Type.String({ description: 'What went wrong; never carries a secret' }),
    status: Nullable(Type.Integer({ description: "The vendor's HTTP status, when it answered" })),
  },
  { description: 'Why the vendor call failed' },
);

export const PartnerTenants = Type.Object(
  {
    ok: Type.Boolean(),
    error: Nullable(VendorFailure),
    fetched_at: Timestamp(),
    latency_ms: Count(),
    total: Count(),
    tenants: Type.Array(
      Type.Object({
        external_id: Type.String(),
        name: Type.String(),
        domain: Nullable(Type.String()),
        details: Type.Record(Type.String(), Type.Unknown()),
        stored: Type.Boolean({ description: 'Already recorded by a sync' }),
        selected: Type.Boolean(),
        child_integration_id: Nullable(Type.Integer()),
      }),
    ),
  },
  {
    description:
      'A live answer of the vendor, stored nowhere. A vendor failure is 200 with ok false and error (never 5xx): the call succeeded in finding out that the vendor refuses or is down.',
  },
);

export const SyncResult = Type.Object(
  {
    ok: Type.Boolean(),
    error: Nullable(VendorFailure),
    edition: Type.String({ description: 'community or enterprise' }),
    synced_at: Timestamp(),
    latency_ms: Count(),
    discovered: Count('Tenants the vendor listed'),
    added: Count('Tenants seen for the first time'),
    gone: Count('Stored tenants the vendor no longer lists (present false)'),
    auto_selected: Count('New tenants the auto-approve policy selected'),
    selected: Count('Selected tenants of the parent after the sync'),
    materialized: Count('Child integrations created (Enterprise)'),
    warning: Nullable(Type.String({ description: 'Community: nothing is materialized' })),
  },
  { description: 'ok false (with error) when the vendor call failed; the failure is recorded as the last tenant sync' },
);

export const Tenant = Type.Object({
  external_id: Type.String(),
  name: Type.String(),
  domain: Nullable(Type.String()),
  details: Type.Record(Type.String(), Type.Unknown()),
  selected: Type.Boolean(),
  selected_at: NullableTime(),
  child_integration_id: Nullable(Type.Integer({ description: 'The child integration collecting it (Enterprise)' })),
  present: Type.Boolean({ description: 'false when the last sync no longer listed it' }),
  first_seen_at: Timestamp(),
  last_seen_at: Timestamp(),
});

export const TenantQuery = Type.Object({
  ...PageQuery,
  selected: Type.Optional(Type.Boolean()),
  present: Type.Optional(Type.Boolean()),
});

export const TenantPage = PageBodySchema(Tenant);

export const SelectBody = Type.Object(
  {
    external_ids: Type.Array(Type.String({ minLength: 1, maxLength: 200 }), {
      minItems: 1,
      maxItems: MAX_BULK_IDS,
      description: `Vendor tenant ids, 1 to ${MAX_BULK_IDS}`,
    }),
    selected: Type.Optional(
      Type.Boolean({
        default: true,
        description: 'false deselects (Enterprise: the child integration is deactivated, not removed)',
      }),
    ),
  },
  { additionalProperties: false },
);

export const SelectResult = Type.Object({
  requested: Count('Distinct ids in the request'),
  selected: Type.Boolean(),
  updated: Count('Tenants whose selection changed'),
  unchanged: Count('Tenants already in the requested state'),
  not_found: Count(),
  materialized: Count('Child integrations created (Enterprise)'),
  reactivated: Count('Inactive child integrations switched back on (Enterprise)'),
  deactivated: Count('Child integrations switched off by a deselection (Enterprise)'),
  not_present: Count('Tenants the last sync no longer listed: selectable, not materialized'),
  warning: Nullable(Type.String({ description: 'Community: the choice is stored, nothing is materialized' })),
  errors: Type.Array(
    Type.Object({
      external_id: Type.String(),
      code: Type.String({ description: 'integration.unknown_tenant' }),
      detail: Type.String(),
    }),
    {
      description: 'Ids not acted on: never discovered for this integration',
    },
  ),
});

export const TestResult = Type.Object({
  id: Type.String({ description: 'The recorded check' }),
  ok: Type.Boolean(),
  kind: Type.String({
    description:
      'vendor: a real call to the vendor API; push: a push-only integration, checked for an ingestion token and recent events; ' +
      'listener: a syslog integration, checked on its listeners (see listeners); ' +
      'broker: a rabbitmq or nats integration, checked by connecting to its broker with the stored config and secrets (see broker)',
  }),
  detail: Type.String({ description: 'What was checked, or why it failed; never carries a secret' }),
  status: Nullable(Type.Integer({ description: "The vendor's HTTP status on failure, when it answered" })),
  error_kind: Nullable(
    Type.String({
      description:
        'Why it failed. vendor: the connector error kind; broker: auth (credentials, vhost or permissions refused), not_found (queue, stream, JetStream), unreachable, blocked_address (refused by the outbound guard, WEIR_OUTBOUND_ALLOW_CIDRS), config (e.g. a consumer Weir cannot use)',
    }),
  ),
  latency_ms: Count(),
  checked_at: Timestamp(),
  broker: Type.Optional(
    Type.Object(
      {
        platform: Type.String({ description: 'rabbitmq or nats' }),
        source: Type.String({ description: 'The RabbitMQ queue, or the JetStream stream/consumer' }),
        queue_messages: Nullable(Type.Integer({ description: 'RabbitMQ: messages ready in the queue' })),
        queue_consumers: Nullable(Type.Integer({ description: "RabbitMQ: consumers on the queue (Weir's included)" })),
        stream_messages: Nullable(Type.Integer({ description: 'NATS: messages held by the JetStream stream' })),
        consumer_exists: Nullable(
          Type.Boolean({ description: 'NATS: whether the durable consumer exists (Weir creates it otherwise)' }),
        ),
        consumer_pending: Nullable(
          Type.Integer({ description: 'NATS: messages not yet delivered to the durable consumer' }),
        ),
        consumer_ack_pending: Nullable(
          Type.Integer({ description: 'NATS: messages delivered to the consumer and not yet acknowledged' }),
        ),
      },
      { description: 'kind broker only: what was read from the broker; null where not reached or not applicable' },
    ),
  ),
  listeners: Type.Optional(
    Type.Array(
      Type.Object({
        protocol: Type.String(),
        port: Type.Integer(),
        ok: Type.Boolean(),
        state: Type.String({ description: 'listening, error, stopped, or missing (no receiver process reported it)' }),
        detail: Type.String({
          description:
            'TCP, TLS, RELP on this host: the result of a real connection; UDP: the receiver process report (a probe would be a message)',
        }),
      }),
      { description: 'kind listener only: one per listener the config declares' },
    ),
  ),
});

const Check = Type.Object({
  id: Type.String(),
  ok: Type.Boolean(),
  status: Nullable(Type.Integer()),
  latency_ms: Count(),
  detail: Type.String(),
  checked_at: Timestamp(),
});

const StreamStateFields = {
  stream: Type.String(),
  cursor_kind: Type.String({ description: 'date or opaque' }),
  enabled: Type.Boolean({
    description: 'Collected: collection on, integration active, not excluded by the collection filters',
  }),
  status: Type.String({ description: 'healthy, failing, pending (never run), disabled' }),
  last_success_at: NullableTime(),
  watermark_at: NullableTime('Date cursors: everything before it was accepted; null for opaque cursors'),
  lag_seconds: Nullable(Type.Integer({ description: 'now - watermark_at (the lag signal); null for opaque cursors' })),
  last_error: Nullable(Type.String()),
  last_error_at: NullableTime(),
  consecutive_failures: Count(),
  last_run_capped: Type.Boolean(),
  next_run_at: NullableTime(),
};

const StreamState = Type.Object({
  ...StreamStateFields,
  last_run_at: NullableTime(),
  gap: Nullable(
    Type.Object(
      { from: Timestamp(), to: Timestamp() },
      { description: 'A window the vendor no longer held when collection resumed' },
    ),
  ),
});

export const HealthQuery = Type.Object({ ...OffsetQuery });

export const Health = Type.Object({
  integration_id: Type.Integer(),
  check_kind: Type.String({
    description:
      'What test-connection checks for this integration: vendor, push, listener (syslog) or broker (rabbitmq, nats)',
  }),
  last_check: Nullable(Check),
  checks: OffsetEnvelope(Check),
  streams: Type.Array(StreamState, {
    description: "Current collection state of each stream of the platform's connector",
  }),
});

const TenantSync = Type.Object({
  status: Type.String({ description: 'succeeded or failed' }),
  discovered: Count(),
  materialized: Count(),
  error: Nullable(Type.String()),
  warning: Nullable(Type.String()),
  synced_at: Timestamp(),
});

const TrafficSchema = Type.Object({ events: Count(), bytes: Count() });

export const Overview = Type.Object({
  integration: Integration,
  collection: Type.Object({
    mode: Type.String({ description: 'pull, push or managed_provider' }),
    connector: Nullable(Type.Object({ platform: Type.String(), display_name: Type.String(), auth: Type.String() })),
    streams: Type.Array(
      Type.Object({
        ...StreamState.properties,
        events_24h: Count(),
        bytes_24h: Count(),
        events_7d: Count(),
        bytes_7d: Count(),
      }),
    ),
  }),
  traffic: Type.Object(
    {
      last_24h: TrafficSchema,
      last_7d: TrafficSchema,
      last_event_at: NullableTime(),
      by_stream: Type.Record(Type.String(), Type.Object({ last_24h: TrafficSchema, last_7d: TrafficSchema })),
    },
    { description: 'Events and bytes received; counters are per UTC day, so a period counts the UTC days it overlaps' },
  ),
  quarantine: Type.Object({ count: Count('Events still quarantined') }),
  drift: Type.Object({ new_fields: Count('Drift fields in state new') }),
  ingestion_token_configured: Type.Boolean(),
  children: Type.Object({ total: Count(), active: Count() }),
  backfill: Type.Object({ queued: Count(), running: Count() }),
  last_check: Nullable(Check),
  tenants: Nullable(
    Type.Object(
      { auto_approve: Policy, last_sync: Nullable(TenantSync) },
      { description: 'Managed-provider parents only' },
    ),
  ),
});

export const SyncStatus = Type.Object({
  integration_id: Type.Integer(),
  mode: Type.String({ description: 'pull, push or managed_provider' }),
  checked_at: Timestamp(),
  streams: Type.Array(
    Type.Object({ ...StreamStateFields, running: Type.Boolean(), queued: Count('Collection tasks waiting') }),
  ),
  tenant_sync: Nullable(TenantSync),
});
