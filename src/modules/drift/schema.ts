import { Type, type TLiteral } from 'typebox';
import { MAX_BULK_IDS, OffsetEnvelope, OffsetQuery, Timestamp } from '../../platform/http/schemas.js';

const Id = (description?: string) =>
  Type.Integer({ minimum: 1, maximum: 2_147_483_647, ...(description ? { description } : {}) });
const FieldId = Type.String({ minLength: 1, maxLength: 200, description: 'The drift field id' });

const statusLiterals = (): [TLiteral<'new'>, TLiteral<'ignored'>, TLiteral<'mapped'>] => [
  Type.Literal('new'),
  Type.Literal('ignored'),
  Type.Literal('mapped'),
];
export const DriftStatus = Type.Union(statusLiterals(), {
  description:
    'new: not read by the live mapping and not yet reviewed; ignored: reviewed, not wanted; mapped: marked as handled by a mapping change',
});

export const FieldParams = Type.Object({ field_id: FieldId });

export const ListQuery = Type.Object({
  ...OffsetQuery,
  organization_id: Type.Optional(Id('Only this organization (alias: org_id)')),
  integration_id: Type.Optional(Id()),
  stream: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  status: Type.Optional(Type.Union(statusLiterals(), { description: 'Only this status; every status when absent' })),
  path_prefix: Type.Optional(
    Type.String({ minLength: 1, maxLength: 500, description: 'Only paths that start with this text (case-sensitive)' }),
  ),
});

export const DriftField = Type.Object(
  {
    id: Type.String(),
    organization_id: Type.Integer(),
    integration_id: Type.Integer(),
    stream: Type.String(),
    path: Type.String({ description: 'Dotted path of the raw field; array elements are written []' }),
    value_type: Type.String({
      description: 'JSON type of the last value seen: string, number, boolean, object, array or null',
    }),
    status: DriftStatus,
    count: Type.Integer({
      description:
        'Events that carried the field: counted in every event of a batch of up to 32, estimated from 32 spread over a larger one',
    }),
    example: Type.Union([Type.String(), Type.Null()], { description: 'A masked example value' }),
    first_seen_at: Timestamp(),
    last_seen_at: Timestamp(),
  },
  { $id: 'DriftField' },
);

export const DriftPage = OffsetEnvelope(DriftField);

export const BulkBody = Type.Object(
  {
    ids: Type.Array(FieldId, {
      minItems: 1,
      maxItems: MAX_BULK_IDS,
      description: `Drift field ids, 1 to ${MAX_BULK_IDS}`,
    }),
  },
  { additionalProperties: false },
);

export const BulkResult = Type.Object({
  requested: Type.Integer({ description: 'Distinct ids in the request' }),
  updated: Type.Integer({ description: 'Fields now in the requested status (those already in it included)' }),
  errors: Type.Array(Type.Object({ id: Type.String(), code: Type.String(), detail: Type.String() }), {
    description: 'Ids that do not exist or are outside your scope: reported as not found, never 403',
  }),
});
