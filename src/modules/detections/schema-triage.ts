// The triage additions' schemas (docs/detections.md): the list's order and group filter, the
// groups listing, the bulk change, and the fields every detection answers beside the spec's
// (entity, group, assignee by name, ATT&CK names, evidence on the detail).
import { Type } from 'typebox';
import { MAX_BULK_IDS, OffsetEnvelope, Timestamp } from '../../platform/http/schemas.js';

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()]);

export const Sort = Type.Union([Type.Literal('severity'), Type.Literal('time')], {
  default: 'severity',
  description: 'severity (default): most severe first, then most recent; time: most recent first. Ties by id',
});
export const GroupParam = Type.String({
  minLength: 1,
  maxLength: 2000,
  description: 'A group key from GET /api/detections/groups: only the findings of that group',
});

const Tactic = Type.Object({ id: Type.String(), name: Nullable(Type.String()) });
export const TriageFields = {
  entity: Type.String({
    description:
      'What the finding is about, as field=value: the rule group, else the user, host, source address or resource it names; empty when none',
  }),
  group: Type.String({ description: 'The key of its group (same kind and entity): GET /api/detections?group=' }),
  assignee: Nullable(
    Type.Object({
      id: Type.Integer(),
      username: Nullable(Type.String()),
      display_name: Nullable(Type.String()),
    }),
  ),
  attack: Type.Object(
    {
      tactics: Type.Array(Tactic),
      techniques: Type.Array(
        Type.Object({
          id: Type.String(),
          name: Nullable(Type.String()),
          parent_name: Nullable(Type.String({ description: "A sub-technique's parent technique" })),
          tactics: Type.Array(Tactic),
        }),
      ),
    },
    { description: 'The MITRE ATT&CK ids of mitre with their Enterprise names and tactics (null: not in the table)' },
  ),
};

export const Evidence = Type.Object(
  {
    fields: Type.Array(Type.Object({ field: Type.String(), values: Type.Array(Type.String()) }), {
      description: "The fields that matched, with their values across the evidence events (the rule's fields first)",
    }),
    events: Type.Array(
      Type.Object({
        event_id: Type.String({ description: 'envelope.id in searches' }),
        time: Nullable(Timestamp()),
        from: Type.Union([Type.Literal('event_store'), Type.Literal('finding'), Type.Literal('none')], {
          description: 'Where its fields were read; none: the event store no longer has it',
        }),
        fields: Type.Array(Type.Object({ field: Type.String(), value: Type.String() })),
      }),
    ),
  },
  { description: 'The evidence events (at most 50) with the values of the fields that matter' },
);

export const DetectionGroup = Type.Object({
  key: Type.String({ description: 'The group: ?group= on GET /api/detections, group in the bulk change' }),
  organization_id: Type.Integer(),
  source: Type.Union([Type.Literal('vendor'), Type.Literal('rule'), Type.Literal('schedule')]),
  title: Type.String({ description: "The most recent finding's title" }),
  top_id: Type.String({ description: 'Its most severe, then most recent, finding' }),
  entity: Type.String(),
  rule_id: Nullable(Type.String()),
  schedule_id: Nullable(Type.String()),
  integration_id: Nullable(Type.Integer()),
  count: Type.Integer({ description: 'Findings in the group (within the filters)' }),
  severity_id: Type.Integer({ description: 'The highest severity of its findings' }),
  first_seen_at: Timestamp(),
  last_seen_at: Timestamp(),
  event_count: Type.Integer(),
  statuses: Type.Record(Type.String(), Type.Integer(), { description: 'Findings by status' }),
});
export const DetectionGroupList = OffsetEnvelope(DetectionGroup);

const StatusName = Type.Union([
  Type.Literal('new'),
  Type.Literal('in_progress'),
  Type.Literal('resolved'),
  Type.Literal('false_positive'),
  Type.Literal('suppressed'),
]);
export const BulkBody = Type.Object(
  {
    ids: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 64 }), {
        minItems: 1,
        maxItems: MAX_BULK_IDS,
        description: `The detections to change (1 to ${MAX_BULK_IDS}); or group`,
      }),
    ),
    group: Type.Optional(GroupParam),
    where_status: Type.Optional(
      Type.Array(StatusName, {
        minItems: 1,
        maxItems: 5,
        description: "With group: only its findings in these statuses (the list's status filter)",
      }),
    ),
    status: Type.Optional(StatusName),
    assignee_id: Type.Optional(
      Nullable(Type.Integer({ minimum: 1, maximum: 2_147_483_647, description: 'null unassigns' })),
    ),
    comment: Type.Optional(Type.String({ maxLength: 10_000 })),
  },
  { additionalProperties: false },
);
export const BulkAnswer = Type.Object({
  matched: Type.Integer({ description: 'Detections the request named' }),
  status_changed: Type.Integer(),
  assignee_changed: Type.Integer(),
  commented: Type.Integer(),
  detection_ids: Type.Array(Type.String()),
});
