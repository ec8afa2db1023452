import { Type } from 'typebox';
import { PAGE_HEADERS, PageQuery, Timestamp, MAX_BULK_IDS } from '../../platform/http/schemas.js';

/** Integer ids of the database (int4): larger values are not ids, not a 500. */
const Id = (description?: string) =>
  Type.Integer({ minimum: 1, maximum: 2_147_483_647, ...(description ? { description } : {}) });

export const MIN_RETENTION_DAYS = 1;
export const MAX_RETENTION_DAYS = 3650;

const Name = Type.String({
  minLength: 1,
  maxLength: 200,
  description: 'Unique across the instance, case-insensitive; surrounding spaces are trimmed',
});

export const OrgParams = Type.Object({ org_id: Id() });

export const Organization = Type.Object(
  {
    id: Type.Integer(),
    name: Type.String(),
    is_active: Type.Boolean(),
    retention_days: Type.Integer({ description: 'Quarantine/data retention in days' }),
    created_at: Timestamp(),
    updated_at: Timestamp(),
  },
  { $id: 'Organization' },
);

export const ListQuery = Type.Object({ ...PageQuery });
/** The list body; X-Total-Count, X-Page and X-Size carry the paging (spec). */
export const OrganizationList = { ...Type.Array(Organization), headers: PAGE_HEADERS };

export const CreateBody = Type.Object({ name: Name }, { additionalProperties: false });

export const UpdateBody = Type.Object(
  { name: Type.Optional(Name), is_active: Type.Optional(Type.Boolean()) },
  { additionalProperties: false, description: 'Fields absent are unchanged' },
);

export const BulkDeactivateBody = Type.Object(
  { ids: Type.Array(Id(), { minItems: 1, maxItems: MAX_BULK_IDS }) },
  { additionalProperties: false },
);

export const BulkResult = Type.Object({
  requested: Type.Integer({ description: 'Distinct ids in the request' }),
  deactivated: Type.Integer({ description: 'Organizations switched from active to inactive' }),
  unchanged: Type.Integer({ description: 'Organizations that were already inactive' }),
  not_found: Type.Integer(),
  results: Type.Array(
    Type.Object({
      id: Type.Integer(),
      result: Type.Union([Type.Literal('deactivated'), Type.Literal('unchanged'), Type.Literal('not_found')]),
    }),
    { description: 'One entry per distinct id, in request order' },
  ),
  errors: Type.Array(Type.Object({ id: Type.Integer(), code: Type.String(), detail: Type.String() }), {
    description: 'Ids that do not exist or are outside your scope: reported as not found, never 403',
  }),
});

export const Retention = Type.Object({
  organization_id: Type.Integer(),
  retention_days: Type.Integer({ minimum: MIN_RETENTION_DAYS, maximum: MAX_RETENTION_DAYS }),
  event_store: Type.Object(
    {
      removed: Type.Integer({
        minimum: 0,
        description:
          "Events the event store's retention removed since the organization was created (counted from when Weir received each event)",
      }),
      last_removed_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
        description: 'When retention last removed any of its events',
      }),
    },
    { description: "What the event store's retention removed" },
  ),
});

export const RetentionBody = Type.Object(
  {
    retention_days: Type.Integer({
      minimum: MIN_RETENTION_DAYS,
      maximum: MAX_RETENTION_DAYS,
      description: 'Days (1-3650); default 7',
    }),
  },
  { additionalProperties: false },
);

export const DataDeletionBody = Type.Object(
  { confirm: Type.String({ maxLength: 300, description: 'Exactly "DELETE <organization name>"' }) },
  { additionalProperties: false },
);

export const DataDeletionAccepted = Type.Object({
  deletion_id: Type.String({ format: 'uuid' }),
  organization_id: Type.Integer(),
  state: Type.Literal('queued'),
});

export const CustomerMappings = Type.Object({
  organization_id: Type.Integer(),
  case_customer_id: Type.Union([Type.String(), Type.Null()], {
    description: 'Customer id in the case-management system',
  }),
  partner_tenant_ids: Type.Array(Type.String(), {
    description: 'Tenant ids of the partner platform mapped to this organization',
  }),
});

export const SyncResult = Type.Object({
  synced: Type.Boolean({ description: 'false: no case-management system is configured (reason says so)' }),
  reason: Type.Optional(
    Type.String({ description: 'Why nothing was synced, or why the stored customer id was replaced' }),
  ),
  action: Type.Optional(
    Type.Union([Type.Literal('verified'), Type.Literal('found_by_name'), Type.Literal('created')], {
      description:
        "verified: the stored id names a customer; found_by_name: a customer with the organization's name exists; created: it was created",
    }),
  ),
  system: Type.Optional(Type.Literal('dfir-iris')),
  case_customer_id: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  customer_name: Type.Optional(Type.String()),
});
