import { Type } from 'typebox';
import { Timestamp } from '../../platform/http/schemas.js';

export const ProviderPlatform = Type.Object({
  platform: Type.String(),
  display_name: Type.String(),
  vendor: Type.String(),
  description: Type.String(),
  auth: Type.String({
    description: 'api_token, oauth2_client_credentials, service_account_jwt, aws_sigv4 or bearer_token',
  }),
  streams: Type.Array(
    Type.Object({
      name: Type.String(),
      display_name: Type.String(),
      description: Type.String(),
      cursor_kind: Type.String({ description: 'date or opaque' }),
    }),
  ),
  config_schema: Type.Record(Type.String(), Type.Unknown(), {
    description: "JSON Schema of an integration's config; secret fields carry writeOnly: true",
  }),
  secret_fields: Type.Array(Type.String()),
  tenant_discovery: Type.Boolean({
    description: 'A partner account (config.partner true) can list its customer tenants (managed provider)',
  }),
});

export const ProviderPlatformList = Type.Array(ProviderPlatform, { description: 'Platforms with a pull connector' });

export const Capabilities = Type.Array(
  Type.Object({
    platform: Type.String(),
    tenant_discovery: Type.Boolean(),
    rate_limit: Type.Object({
      handling: Type.String(),
      max_wait_in_call_seconds: Type.Integer(),
      headers: Type.Array(Type.String(), { description: 'Vendor headers read to wait out a quota' }),
    }),
    streams: Type.Array(
      Type.Object({
        stream: Type.String(),
        cursor_kind: Type.String({ description: 'date: windows with a watermark; opaque: a vendor resume token' }),
        page_size: Type.Integer(),
        interval_seconds: Type.Integer({ description: 'Default time between collection cycles' }),
        default_window_seconds: Type.Integer({ description: 'How far back a first run or a cursor reset starts' }),
        max_window_seconds: Type.Integer(),
        settle_seconds: Type.Integer({ description: 'Vendor delay before events are queryable' }),
        retention_days: Type.Integer({ description: 'How long the vendor keeps the data' }),
        backfill: Type.Object({
          supported: Type.Boolean(),
          max_lookback_days: Type.Integer({ description: 'min(90, retention_days)' }),
          chunk_seconds: Type.Integer(),
        }),
        filterable_fields: Type.Array(Type.String(), {
          description:
            'Vendor fields the built-in mapping reads, usable in collection filters (any raw field path is accepted)',
        }),
        live_query: Type.Object(
          {
            supported: Type.Boolean({
              description: 'The stream can be queried live (Enterprise; docs/live-queries.md)',
            }),
            parameter: Type.Union([Type.String({ description: 'How the vendor filter is sent' }), Type.Null()]),
            or: Type.Boolean({ description: 'The vendor filter has OR' }),
            fields: Type.Array(
              Type.Object({
                field: Type.String({ description: 'The OCSF field a query names' }),
                vendor_field: Type.String({
                  description: 'The vendor field the built-in mapping copies it from, filtered by the vendor',
                }),
                ops: Type.Array(Type.String(), {
                  description:
                    'Query operators pushed down: eq (and in), prefix, contains (contains also carries suffix)',
                }),
              }),
              {
                description:
                  'Conditions on these fields are pushed down with the built-in mapping; every other condition is applied by Weir to the normalized rows',
              },
            ),
          },
          {
            description:
              'Live queries: what the vendor filters itself; the whole condition is applied again to the normalized rows',
          },
        ),
      }),
    ),
  }),
);

export const ProviderParams = Type.Object({ platform: Type.String({ minLength: 1, maxLength: 64 }) });

export const ProviderTestBody = Type.Object(
  {
    config: Type.Record(Type.String(), Type.Unknown(), {
      description: 'An integration config of the platform, secrets in clear; validated against its config_schema',
    }),
  },
  { additionalProperties: false },
);

export const ProviderTestResult = Type.Object({
  ok: Type.Boolean(),
  platform: Type.String(),
  detail: Type.String({ description: 'What was checked, or why it failed; never carries a secret' }),
  error_kind: Type.Union([Type.String(), Type.Null()]),
  status: Type.Union([Type.Integer(), Type.Null()], {
    description: "The vendor's HTTP status on failure, when it answered",
  }),
  latency_ms: Type.Integer({ minimum: 0 }),
  checked_at: Timestamp(),
});
