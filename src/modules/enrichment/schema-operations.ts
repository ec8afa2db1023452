// Request and response schemas of the enrichment operations (operations.ts): dry run, the live
// series, the activity list, and what the console offers (enrichers, key sources).
import { Type } from 'typebox';
import { OffsetQuery, Timestamp } from '../../platform/http/schemas.js';
import { MAX_DRY_RUN_EVENTS, METRICS_WINDOW_MAX_MINUTES } from './operations.js';
import { Nullable, ObjectId, OrgId, PolicyFields } from './schema.js';

export const DryRunBody = Type.Object(
  {
    organization_id: Type.Optional(OrgId('Required when you can see several organizations')),
    events: Type.Optional(
      Type.Array(Type.Record(Type.String(), Type.Unknown()), {
        maxItems: MAX_DRY_RUN_EVENTS,
        description: "OCSF events; absent: the organization's recent samples",
      }),
    ),
    policies: Type.Optional(
      Type.Array(Type.Object(PolicyFields, { additionalProperties: false }), {
        maxItems: 50,
        description: 'Drafts to try instead of the saved, enabled policies',
      }),
    ),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_DRY_RUN_EVENTS })),
  },
  { additionalProperties: false },
);
export const DryRunResult = Type.Object({
  organization_id: Type.Integer(),
  source: Type.String({ description: 'events or samples' }),
  items: Type.Array(
    Type.Object({
      index: Type.Integer(),
      input: Type.Record(Type.String(), Type.Unknown()),
      output: Type.Record(Type.String(), Type.Unknown()),
      policies: Type.Array(
        Type.Object({
          policy_id: Type.String(),
          name: Type.String(),
          outcome: Type.String({
            description: 'hit, miss, not_matched, error, or skipped (an external source: not called)',
          }),
          reason: Type.Optional(Type.String()),
        }),
      ),
    }),
  ),
});

export const MetricsQuery = Type.Object({
  organization_id: Type.Optional(OrgId('Only this organization')),
  policy_id: Type.Optional(ObjectId),
  window_minutes: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: 100_000,
      description: `1..${METRICS_WINDOW_MAX_MINUTES} (default 60): the live series keeps three hours`,
    }),
  ),
});
export const Metrics = Type.Object({
  window_minutes: Type.Integer(),
  from: Timestamp(),
  to: Timestamp(),
  policies: Type.Array(
    Type.Object({ policy_id: Type.String(), organization_id: Type.Integer() }, { additionalProperties: true }),
  ),
});

export const ActivityQuery = Type.Object({
  ...OffsetQuery,
  organization_id: Type.Optional(OrgId('Only this organization')),
});
export const ActivityPage = Type.Object({
  items: Type.Array(
    Type.Object({
      id: Type.String(),
      organization_id: Type.Integer(),
      at: Timestamp(),
      kind: Type.String(),
      subject_type: Type.String(),
      subject_id: Type.String(),
      message: Type.String(),
      actor_id: Nullable(Type.Integer()),
    }),
  ),
  total: Type.Integer(),
  limit: Type.Integer(),
  offset: Type.Integer(),
});

export const Enrichers = Type.Object({
  items: Type.Array(Type.Object({ kind: Type.String() }, { additionalProperties: true })),
});
export const KeySources = Type.Object({
  class_uids: Type.Array(Type.Integer()),
  items: Type.Array(
    Type.Object({
      path: Type.String(),
      type: Type.String(),
      observable: Type.Optional(Type.Integer()),
      class_uids: Type.Array(Type.Integer()),
    }),
  ),
});
