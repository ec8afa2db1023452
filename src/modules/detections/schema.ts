import { Type } from 'typebox';
import { DateParam, OffsetEnvelope, OffsetQuery, Timestamp } from '../../platform/http/schemas.js';
import { Evidence, GroupParam, Sort, TriageFields } from './schema-triage.js';

const Id = (description?: string) =>
  Type.Integer({ minimum: 1, maximum: 2_147_483_647, ...(description ? { description } : {}) });
const Text = (max: number, description?: string) =>
  Type.String({ minLength: 1, maxLength: max, ...(description ? { description } : {}) });
const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()]);
const StatusName = Type.Union(
  [
    Type.Literal('new'),
    Type.Literal('in_progress'),
    Type.Literal('resolved'),
    Type.Literal('false_positive'),
    Type.Literal('suppressed'),
  ],
  {
    description:
      'new (OCSF status_id 1), in_progress (2), resolved (4), false_positive (4 with verdict_id 1, False Positive), suppressed (3)',
  },
);
const Source = Type.Union([Type.Literal('vendor'), Type.Literal('rule'), Type.Literal('schedule')], {
  description: "vendor: a finding a vendor sent; rule: a detection rule matched; schedule: a scheduled search's alert",
});

export const DetectionParams = Type.Object({ detection_id: Text(64) });
export const ListQuery = Type.Object({
  ...OffsetQuery,
  organization_id: Type.Optional(Id()),
  status: Type.Optional(
    Type.String({ maxLength: 200, description: 'One status, or several separated by commas (new,in_progress)' }),
  ),
  severity_min: Type.Optional(
    Type.Integer({ minimum: 0, maximum: 6, description: 'At least this OCSF severity_id (4: high and above)' }),
  ),
  from: Type.Optional(DateParam('Last seen at or after')),
  to: Type.Optional(DateParam('Last seen before')),
  rule_id: Type.Optional(Text(64)),
  source: Type.Optional(Source),
  integration_id: Type.Optional(Id()),
  assignee_id: Type.Optional(Id()),
  sort: Type.Optional(Sort),
  group: Type.Optional(GroupParam),
});

const Mitre = Type.Object({ tactics: Type.Array(Type.String()), techniques: Type.Array(Type.String()) });

export const Detection = Type.Object(
  {
    id: Type.String(),
    organization_id: Type.Integer(),
    source: Source,
    uid: Type.String({
      description:
        'What makes it the same detection again: the vendor finding uid, the rule, group and window, or the search run',
    }),
    title: Type.String(),
    description: Type.String(),
    severity_id: Type.Integer(),
    status: StatusName,
    status_id: Type.Integer({ description: 'OCSF finding status_id' }),
    verdict_id: Type.Optional(Type.Integer({ description: 'OCSF verdict_id (1, False Positive, for false_positive)' })),
    assignee_id: Nullable(Type.Integer()),
    rule_id: Nullable(Type.String()),
    rule_version: Nullable(Type.Integer()),
    schedule_id: Nullable(Type.String()),
    search_id: Nullable(
      Type.String({
        description: 'Scheduled alerts: the run whose result is attached (GET /api/search/history/result/{search_id})',
      }),
    ),
    integration_id: Nullable(Type.Integer()),
    stream: Nullable(Type.String()),
    mitre: Mitre,
    event_ids: Type.Array(Type.String(), {
      description: 'Evidence: the events (at most 50) by their id in Weir (envelope.id in searches)',
    }),
    event_count: Type.Integer(),
    first_seen_at: Timestamp(),
    last_seen_at: Timestamp(),
    case_id: Nullable(Type.String()),
    created_at: Timestamp(),
    updated_at: Timestamp(),
    ...TriageFields,
  },
  { $id: 'Detection' },
);
export const DetectionList = OffsetEnvelope(Detection);
const History = Type.Object({
  id: Type.String(),
  at: Timestamp(),
  actor: Type.String({ description: 'user:<id>, service_account:<id>, vendor, rule, schedule or weir' }),
  kind: Type.String({ description: 'created, updated, status, assignee, comment, case, notified' }),
  change: Type.Record(Type.String(), Type.Unknown()),
  comment: Nullable(Type.String()),
});
export const DetectionDetail = Type.Intersect([
  Detection,
  Type.Object({
    finding: Type.Record(Type.String(), Type.Unknown(), { description: 'The OCSF finding' }),
    history: Type.Array(History),
    evidence: Evidence,
  }),
]);
export const PatchBody = Type.Object(
  {
    status: Type.Optional(StatusName),
    assignee_id: Type.Optional(Nullable(Id("A user of the detection's organization; null unassigns"))),
    comment: Type.Optional(Type.String({ maxLength: 10_000 })),
  },
  { additionalProperties: false },
);
export const CaseAnswer = Type.Object({ detection_id: Type.String(), case_id: Type.String() });

const Definition = Type.Unknown({
  description:
    'A detection rule (docs/detections.md): {condition (the one condition language over OCSF, as the JSON tree or as text: "class_uid = 3002 and status_id = 2"), severity_id (1-6), title?, description?, mitre?: {tactics, techniques}, ' +
    'group_by?: [fields], threshold?: {count, window_seconds}, suppression_seconds?}',
});
export const Rule = Type.Object(
  {
    id: Type.String(),
    organization_id: Type.Integer(),
    name: Type.String(),
    enabled: Type.Boolean(),
    version: Nullable(Type.Integer()),
    definition: Type.Unknown(),
    condition_text: Nullable(
      Type.String({
        description:
          "The rule's condition in the text form (docs/conditions.md); null when the text cannot say that tree exactly",
      }),
    ),
    live_version_id: Nullable(Type.String()),
    created_by: Nullable(Type.Integer()),
    created_at: Timestamp(),
    updated_at: Timestamp(),
  },
  { $id: 'DetectionRule' },
);
export const RuleList = OffsetEnvelope(Rule);
export const RuleParams = Type.Object({ rule_id: Text(64) });
export const RuleListQuery = Type.Object({ ...OffsetQuery, organization_id: Type.Optional(Id()) });
export const CreateRuleBody = Type.Object(
  {
    name: Text(200),
    organization_id: Type.Optional(Id()),
    enabled: Type.Optional(Type.Boolean()),
    definition: Definition,
    comment: Type.Optional(Type.String({ maxLength: 1000 })),
  },
  { additionalProperties: false },
);
export const UpdateRuleBody = Type.Object(
  {
    name: Type.Optional(Text(200)),
    enabled: Type.Optional(Type.Boolean()),
    definition: Type.Optional(Definition),
    comment: Type.Optional(Type.String({ maxLength: 1000 })),
  },
  { additionalProperties: false },
);
export const RuleVersion = Type.Object({
  id: Type.String(),
  version: Type.Integer(),
  definition: Type.Unknown(),
  comment: Type.String(),
  created_by: Nullable(Type.Integer()),
  created_at: Timestamp(),
});
export const RollbackBody = Type.Object(
  { version: Type.Integer({ minimum: 1 }), comment: Type.Optional(Type.String({ maxLength: 1000 })) },
  { additionalProperties: false },
);
export const SigmaBody = Type.Object(
  {
    yaml: Type.String({
      minLength: 1,
      maxLength: 262_144,
      description: 'One Sigma rule (YAML; docs/sigma.md lists what compiles)',
    }),
    organization_id: Type.Optional(Id()),
    name: Type.Optional(Text(200, "Default: the rule's title")),
    enabled: Type.Optional(Type.Boolean()),
    group_by: Type.Optional(
      Type.Array(Type.String({ maxLength: 512 }), {
        maxItems: 5,
        description: 'Overrides: OCSF fields whose values make a group (threshold and suppression count per group)',
      }),
    ),
    threshold: Type.Optional(
      Type.Object(
        { count: Type.Integer({ minimum: 1 }), window_seconds: Type.Integer({ minimum: 1 }) },
        {
          additionalProperties: false,
          description: 'Override: at least count matching events of a group within window_seconds',
        },
      ),
    ),
    suppression_seconds: Type.Optional(Type.Integer({ minimum: 0 })),
  },
  { additionalProperties: false },
);
export const SigmaQuery = Type.Object({
  dry_run: Type.Optional(
    Type.Boolean({
      default: false,
      description: 'Only compile and check: answer 200 with the definition, store nothing',
    }),
  ),
});
export const SigmaCompiled = Type.Object({
  name: Type.String(),
  definition: Type.Unknown({ description: 'The compiled rule definition' }),
  condition_text: Nullable(
    Type.String({
      description:
        "The rule's condition in the text form (docs/conditions.md); null when the text cannot say that tree exactly",
    }),
  ),
});
