import { Type, type TSchema } from 'typebox';
import { DeliverySettingsSchema } from '../../pipeline/delivery/settings.js';
import { OffsetEnvelope, OffsetQuery, Timestamp } from '../../platform/http/schemas.js';

const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);
const Json = (description: string) => Type.Record(Type.String(), Type.Unknown(), { description });

/** Most fields one credential may hold, and the longest value (PEM keys fit). */
const MAX_CREDENTIAL_FIELDS = 32;
const MAX_CREDENTIAL_VALUE = 16_384;

// Destination ids are UUIDv7 text; the parameter is a plain string so that anything
// unknown is a 404 like any other destination outside the caller's scope.
export const DestinationParams = Type.Object({ destination_id: Type.String({ minLength: 1, maxLength: 64 }) });

const Name = Type.String({ minLength: 1, maxLength: 200 });
const Description = Type.String({ maxLength: 2000 });
const Config = Json(
  "Non-secret settings, validated against the type's config_schema (GET destination-types); defaults are filled in",
);

// A field is a string, or a flat map of names to strings (the http type's secret_headers);
// the type's credential_schema says which.
const CredentialValue = Type.Union([
  Type.String({ maxLength: MAX_CREDENTIAL_VALUE }),
  Type.Record(Type.String({ maxLength: 128 }), Type.String({ maxLength: MAX_CREDENTIAL_VALUE }), {
    maxProperties: MAX_CREDENTIAL_FIELDS,
  }),
]);

export const Credential = Type.Record(Type.String({ maxLength: 128 }), CredentialValue, {
  maxProperties: MAX_CREDENTIAL_FIELDS,
  description:
    "Secret fields, validated against the type's credential_schema; encrypted at rest (AES-256-GCM) and never returned",
});

const EffectiveDelivery = Type.Required(DeliverySettingsSchema, {
  $id: 'EffectiveDelivery',
  description: 'Effective delivery settings: the stored overrides over the defaults',
});

export const Destination = Type.Object(
  {
    id: Type.String(),
    organization_id: Nullable(
      Type.Integer({ description: "null: a global destination, usable by every organization's routes" }),
    ),
    name: Type.String(),
    description: Type.String(),
    type: Type.String({ description: 'One of GET destination-types' }),
    config: Json('Non-secret settings of the type'),
    delivery: EffectiveDelivery,
    enabled: Type.Boolean(),
    disabled_reason: Nullable(
      Type.String({ description: 'credential_revoked when a revoke stopped delivery; null otherwise' }),
    ),
    has_credential: Type.Boolean({ description: 'The credential itself is never returned' }),
    credential_updated_at: Nullable(Timestamp()),
    shadow_destination_id: Nullable(
      Type.String({ description: 'Every primary copy for this destination is mirrored there' }),
    ),
    version: Type.Integer({ description: 'Moves on every change (edit, rotate, revoke, shadow)' }),
    created_at: Timestamp(),
    updated_at: Timestamp(),
  },
  { $id: 'Destination', description: 'A destination: where routes deliver events. Never carries its credential.' },
);

export const DestinationWarning = Type.Object({
  code: Type.Literal('outbound_address_refused', {
    description: 'A host of the config is one deliveries refuse (SSRF guard)',
  }),
  field: Type.String({ description: 'The config field, as config/url' }),
  message: Type.String({ description: 'What will happen and the setting that allows it (WEIR_OUTBOUND_ALLOW_CIDRS)' }),
});

/** A destination as created or changed: the destination, and what the caller should know about it. */
export const DestinationWritten = Type.Object(
  {
    ...Destination.properties,
    warnings: Type.Array(DestinationWarning, {
      description: 'Empty when there is nothing to say; the destination is saved either way',
    }),
  },
  { description: 'A destination as created or changed, with warnings. Never carries its credential.' },
);

export const DestinationPage = OffsetEnvelope(Destination);

export const ListQuery = Type.Object({
  ...OffsetQuery,
  organization_id: Type.Optional(
    Type.Integer({ minimum: 1, description: "Only this organization's own destinations (alias: org_id)" }),
  ),
  type: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  enabled: Type.Optional(Type.Boolean()),
  global: Type.Optional(
    Type.Boolean({ description: "true: only global destinations; false: only organizations' own" }),
  ),
});

export const CreateBody = Type.Object(
  {
    name: Name,
    type: Type.String({ minLength: 1, maxLength: 64 }),
    organization_id: Type.Optional(
      Nullable(
        Type.Integer({
          minimum: 1,
          description: 'Owner; omitted: your only organization, or (platform scope) a global destination; null: global',
        }),
      ),
    ),
    description: Type.Optional(Description),
    config: Config,
    credential: Type.Optional(Credential),
    delivery: Type.Optional(DeliverySettingsSchema),
    enabled: Type.Optional(Type.Boolean({ default: true })),
  },
  { additionalProperties: false },
);

export const UpdateBody = Type.Object(
  {
    name: Type.Optional(Name),
    description: Type.Optional(Description),
    config: Type.Optional(Config),
    delivery: Type.Optional(DeliverySettingsSchema),
    enabled: Type.Optional(Type.Boolean()),
    credential: Type.Optional(Type.Unknown({ description: 'Not accepted here (422): use POST .../credential/rotate' })),
  },
  { additionalProperties: false, description: 'Any of the fields; the others stay' },
);

export const RotateBody = Type.Object({ credential: Credential }, { additionalProperties: false });

export const ShadowBody = Type.Object(
  {
    target_destination_id: Nullable(
      Type.String({ minLength: 1, maxLength: 64, description: 'null clears the shadow' }),
    ),
  },
  { additionalProperties: false },
);

export const TestResultSchema = Type.Object(
  {
    ok: Type.Boolean(),
    detail: Type.String({ description: 'What was checked, or why it failed (never a credential)' }),
    latency_ms: Type.Integer({ minimum: 0 }),
    error_kind: Type.Optional(
      Type.String({
        description: 'timeout, connection, dns, tls, blocked_address, http_4xx, http_5xx, auth, config, ...',
      }),
    ),
  },
  { description: 'A real connection to the destination with its decrypted credential; no event is delivered' },
);

export const DestinationType = Type.Object({
  type: Type.String(),
  title: Type.String(),
  description: Type.String(),
  config_schema: Json('JSON Schema of config'),
  credential_schema: Nullable(Json('JSON Schema of the credential; null when the type takes none')),
  credential_required: Type.Boolean(),
  delivery_schema: Json('JSON Schema of delivery (the same for every type)'),
  delivery_defaults: EffectiveDelivery,
});

export const DestinationTypeList = Type.Array(DestinationType);

export const AuditQuery = Type.Object({
  ...OffsetQuery,
  outcome: Type.Optional(
    Type.Union([Type.Literal('success'), Type.Literal('failed'), Type.Literal('denied'), Type.Literal('error')]),
  ),
});

export const CredentialAuditQuery = Type.Object({ ...OffsetQuery });
