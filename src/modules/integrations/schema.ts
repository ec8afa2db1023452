import { Type } from 'typebox';
import { OffsetEnvelope, OffsetQuery, Timestamp, MAX_BULK_IDS } from '../../platform/http/schemas.js';

/** Integer ids of the database (int4): larger values are not ids, not a 500. */
const Id = (description?: string) =>
  Type.Integer({ minimum: 1, maximum: 2_147_483_647, ...(description ? { description } : {}) });

const Name = Type.String({ minLength: 1, maxLength: 200, description: 'Unique per organization, case-insensitive' });
const Config = Type.Record(Type.String(), Type.Unknown(), {
  description:
    "Platform configuration, validated against the platform's config_schema. Secret fields (writeOnly in the " +
    'schema) are never returned: they read as {"configured": true}; send that value back to keep the stored secret.',
});

export const IntegrationParams = Type.Object({ integration_id: Id() });

export const IntegrationListEntry = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  platform: Type.String(),
  is_active: Type.Boolean(),
  organization_id: Type.Integer(),
  parent_id: Type.Union([Type.Integer(), Type.Null()]),
  created_at: Timestamp(),
  updated_at: Timestamp(),
});

export const Integration = Type.Object(
  {
    id: Type.Integer(),
    name: Type.String(),
    platform: Type.String(),
    is_active: Type.Boolean(),
    organization_id: Type.Integer(),
    parent_id: Type.Union([Type.Integer(), Type.Null()]),
    config: Config,
    created_at: Timestamp(),
    updated_at: Timestamp(),
  },
  { $id: 'Integration' },
);

export const ListQuery = Type.Object({
  ...OffsetQuery,
  organization_id: Type.Optional(Id('Only this organization (alias: org_id)')),
  platform: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  is_active: Type.Optional(Type.Boolean()),
  parent_id: Type.Optional(Id('Only the children of this integration')),
});

export const IntegrationPage = OffsetEnvelope(IntegrationListEntry);

export const CreateBody = Type.Object(
  {
    name: Name,
    platform: Type.String({ minLength: 1, maxLength: 64, description: 'One of GET /api/integrations/platforms' }),
    organization_id: Type.Optional(
      Id('Owner; omitted: your only organization (for a platform administrator, the only one that exists)'),
    ),
    config: Type.Optional(Config),
    parent_id: Type.Optional(
      Type.Union([Id('An integration of the same organization that has no parent itself'), Type.Null()]),
    ),
    is_active: Type.Optional(Type.Boolean({ default: true })),
  },
  { additionalProperties: false },
);

export const UpdateBody = Type.Object(
  {
    name: Type.Optional(Name),
    config: Type.Optional(Config),
    is_active: Type.Optional(Type.Boolean()),
    parent_id: Type.Optional(
      Type.Union([Id(), Type.Null()], { description: 'null detaches the integration from its parent' }),
    ),
  },
  {
    additionalProperties: false,
    description: 'Fields absent are unchanged; config, when given, replaces the stored config',
  },
);

export const DeleteQuery = Type.Object({
  cascade: Type.Optional(Type.Boolean({ default: false, description: 'Also remove active child integrations' })),
});

export const BulkDeactivateBody = Type.Object(
  { ids: Type.Array(Id(), { minItems: 1, maxItems: MAX_BULK_IDS }) },
  { additionalProperties: false },
);

export const BulkResult = Type.Object({
  requested: Type.Integer({ description: 'Distinct ids in the request' }),
  deactivated: Type.Integer({ description: 'Integrations switched from active to inactive' }),
  unchanged: Type.Integer({ description: 'Integrations that were already inactive' }),
  not_found: Type.Integer(),
  errors: Type.Array(Type.Object({ id: Type.Integer(), code: Type.String(), detail: Type.String() }), {
    description: 'Ids that do not exist or are outside your scope: reported as not found, never 403',
  }),
});

export const PlatformEntry = Type.Object({
  name: Type.String(),
  display_name: Type.String(),
  kind: Type.Union([Type.Literal('push'), Type.Literal('pull')], {
    description: 'push: events are sent to Weir; pull: Weir collects them',
  }),
  description: Type.String(),
  config_schema: Type.Record(Type.String(), Type.Unknown(), {
    description: 'JSON Schema of config; secret fields carry writeOnly: true',
  }),
  secret_fields: Type.Array(Type.String(), { description: 'Paths of the secret fields (dotted for nested objects)' }),
});

export const PlatformList = Type.Array(PlatformEntry);
