import type { Readable } from 'node:stream';
import { Type, type TSchema } from 'typebox';
import { DateParam, OffsetEnvelope, OffsetQuery, Timestamp } from '../../platform/http/schemas.js';

const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);

export const OUTCOMES = ['success', 'failed', 'denied', 'error'] as const;
export const ACTOR_KINDS = ['user', 'service_account', 'anonymous'] as const;

const Outcome = Type.Union(
  OUTCOMES.map((o) => Type.Literal(o)),
  {
    description: 'success; failed (refused by a rule, changes rolled back); denied (403); error (5xx)',
  },
);

export const AuditEntry = Type.Object(
  {
    seq: Type.Integer({ description: 'Gapless position in the hash chain' }),
    at: Timestamp(),
    actor_kind: Type.String({ description: 'user, service_account or anonymous' }),
    actor_id: Nullable(Type.Integer()),
    actor_name: Nullable(Type.String()),
    organization_id: Nullable(Type.Integer({ description: 'null for platform entries' })),
    operation_id: Type.String({ description: 'operationId of the API operation' }),
    method: Type.String(),
    path: Type.String(),
    target_type: Nullable(Type.String()),
    target_id: Nullable(Type.String()),
    outcome: Type.String({ description: 'success, failed, denied or error' }),
    status: Type.Integer({ description: 'HTTP status of the answer' }),
    error_code: Nullable(Type.String()),
    correlation_id: Type.String({ description: 'X-Correlation-Id of the request' }),
    details: Type.Record(Type.String(), Type.Unknown()),
    hash: Type.String({ description: 'SHA-256 over the previous hash and this entry' }),
    prev_hash: Type.String(),
  },
  { $id: 'AuditEntry', description: 'One entry of the hash-chained audit trail' },
);

const TimeWindow = {
  from: Type.Optional(DateParam('Entries at or after this instant')),
  to: Type.Optional(DateParam('Entries before this instant')),
};

const AuditFilters = {
  ...TimeWindow,
  actor_kind: Type.Optional(Type.Union(ACTOR_KINDS.map((k) => Type.Literal(k)))),
  actor_id: Type.Optional(Type.Integer({ minimum: 1 })),
  operation_id: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  organization_id: Type.Optional(Type.Integer({ minimum: 1, description: 'Alias: org_id' })),
  outcome: Type.Optional(Outcome),
};

export const HistoryQuery = Type.Object({
  ...OffsetQuery,
  ...TimeWindow,
  operation_id: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  outcome: Type.Optional(Outcome),
});

export const AuditQuery = Type.Object({ ...OffsetQuery, ...AuditFilters });

export const AuditCsvQuery = Type.Object(AuditFilters);

export const AuditPage = OffsetEnvelope(AuditEntry);

/** Streamed by the handler (a Readable), published as a string of text/csv. */
export const CsvBody = Type.Unsafe<Readable | string>(
  Type.String({ description: 'text/csv (RFC 4180): a header row, then one row per entry in ascending seq' }),
);
