import { Type } from 'typebox';
import { QUARANTINE_KINDS, type QuarantineKind } from '../../pipeline/envelope.js';
import { DateParam, MAX_BULK_IDS, OffsetEnvelope, OffsetQuery, Timestamp } from '../../platform/http/schemas.js';

const Id = (description?: string) =>
  Type.Integer({ minimum: 1, maximum: 2_147_483_647, ...(description ? { description } : {}) });

export const ErrorKind = Type.Unsafe<QuarantineKind>(
  Type.Union(
    QUARANTINE_KINDS.map((k) => Type.Literal(k)),
    { description: 'Why the event was quarantined' },
  ),
);

// Any text: an id that is not a UUID is simply not found (404), never a 422 or a 500.
export const EventParams = Type.Object({ event_id: Type.String({ minLength: 1, description: 'The event id (UUID)' }) });

export const StatusFilter = Type.Union(
  [Type.Literal('quarantined'), Type.Literal('reprocessed'), Type.Literal('all')],
  {
    default: 'quarantined',
    description:
      'quarantined (default): still waiting; reprocessed: normalized on a later attempt and kept until retention; all',
  },
);

const Filters = {
  organization_id: Type.Optional(Id('Only this organization (alias: org_id)')),
  integration_id: Type.Optional(Id()),
  stream: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  error_kind: Type.Optional(ErrorKind),
  status: Type.Optional(StatusFilter),
  since: Type.Optional(DateParam('Quarantined at or after (created_at)')),
  until: Type.Optional(DateParam('Quarantined before (created_at)')),
};

export const ListQuery = Type.Object({ ...OffsetQuery, ...Filters });
export const IdsQuery = Type.Object(Filters);

const itemFields = {
  id: Type.String({ description: 'The event id (UUID)' }),
  organization_id: Type.Integer(),
  integration_id: Type.Integer(),
  stream: Type.String(),
  received_at: Timestamp({ description: 'When the event was accepted' }),
  error_kind: Type.String({ description: `One of ${QUARANTINE_KINDS.join(', ')}` }),
  error_detail: Type.String(),
  mapping_version_id: Type.Union([Type.String(), Type.Null()], {
    description: 'The mapping version of the last attempt; null when there was no mapping',
  }),
  status: Type.Union([Type.Literal('quarantined'), Type.Literal('reprocessed')]),
  attempts: Type.Integer({ description: 'Normalization attempts so far (1 when first quarantined)' }),
  created_at: Timestamp({ description: 'When the event was quarantined' }),
  updated_at: Timestamp(),
  reprocessed_at: Type.Union([Timestamp(), Type.Null()]),
};

export const QuarantineItem = Type.Object(itemFields);
export const QuarantineEvent = Type.Object({
  ...itemFields,
  raw: Type.Record(Type.String(), Type.Unknown(), { description: 'The raw event as received, unmasked' }),
});
export const QuarantinePage = OffsetEnvelope(QuarantineItem);

export const IdsResult = Type.Object({
  ids: Type.Array(Type.String(), { description: `At most ${MAX_BULK_IDS}, newest first` }),
  total: Type.Integer({ minimum: 0, description: 'Events matching the filters' }),
  truncated: Type.Boolean({ description: 'true when total exceeds the ids returned: act on these, then ask again' }),
});

export const BulkBody = Type.Object(
  {
    ids: Type.Array(Type.String({ format: 'uuid' }), {
      minItems: 1,
      maxItems: MAX_BULK_IDS,
      description: `Event ids (UUID strings), 1 to ${MAX_BULK_IDS}`,
    }),
  },
  { additionalProperties: false },
);

const BulkError = Type.Object({
  id: Type.String(),
  code: Type.String({ description: 'resource.not_found or quarantine.already_reprocessed' }),
  detail: Type.String(),
});
const BulkErrors = Type.Array(BulkError, {
  description: 'Ids not acted on: unknown or outside your scope (not found, never 403), or already reprocessed',
});

export const DiscardResult = Type.Object({
  requested: Type.Integer({ description: 'Distinct ids in the request' }),
  discarded: Type.Integer({ description: 'Events removed permanently' }),
  errors: BulkErrors,
});

export const ReprocessResult = Type.Object({
  requested: Type.Integer({ description: 'Distinct ids in the request' }),
  reprocessed: Type.Integer({ description: 'Events normalized with the live mapping and sent on down the pipeline' }),
  failed: Type.Integer({ description: 'Events that failed again: still quarantined, error updated' }),
  failures: Type.Array(
    Type.Object({
      id: Type.String(),
      error_kind: Type.String(),
      error_detail: Type.String(),
      mapping_version_id: Type.Union([Type.String(), Type.Null()]),
    }),
    { description: 'The new error of each event that failed again' },
  ),
  errors: BulkErrors,
});
