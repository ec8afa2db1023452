import { Type, type TSchema } from 'typebox';
import { OffsetEnvelope, OffsetQuery, Timestamp } from '../../platform/http/schemas.js';

const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);
const Uuid = (description?: string) => Type.String({ format: 'uuid', ...(description ? { description } : {}) });
const Id = (description?: string) =>
  Type.Integer({ minimum: 1, maximum: 2_147_483_647, ...(description ? { description } : {}) });
const Json = (description: string) => Type.Record(Type.String(), Type.Unknown(), { description });

/** Limits of the mapping tools. */
export const MAX_DRY_RUN_EVENTS = 100;
export const MAX_SAMPLE_LIMIT = 50;
export const DEFAULT_SAMPLE_LIMIT = 20;
export const DEFAULT_DISCOVER_SAMPLES = 200;
export const MAX_DISCOVER_SAMPLES = 1000;

// The document is checked by the service (mapping.invalid_document, every problem with its
// location), not by the request schema: a 422 then says where in the document it is wrong.
const Document = Json('A mapping document (docs/mappings.md): product, rules, defaults...');

export const DefinitionParams = Type.Object({ definition_id: Uuid() });
export const VersionParams = Type.Object({ definition_id: Uuid(), version_id: Uuid() });
export const DiffParams = Type.Object({
  definition_id: Uuid(),
  version_a_id: Uuid('The "from" version'),
  version_b_id: Uuid('The "to" version'),
});

const VersionRef = Type.Object({ id: Type.String(), version: Type.Integer() });

export const Definition = Type.Object(
  {
    id: Type.String(),
    organization_id: Nullable(Type.Integer({ description: 'null for a built-in (platform-wide) definition' })),
    platform: Type.String(),
    stream: Type.String(),
    name: Type.String(),
    description: Type.String(),
    builtin: Type.Boolean({
      description: "Platform-wide; an organization's own definition for the same platform and stream takes precedence",
    }),
    live_version: Nullable(Type.Object({ id: Type.String(), version: Type.Integer(), created_at: Timestamp() })),
    versions_count: Type.Integer(),
    created_at: Timestamp(),
    updated_at: Timestamp({ description: 'Changes when a version goes live; workers reload within seconds' }),
  },
  { description: 'A mapping definition: one platform/stream, of an organization or built-in' },
);

export const DefinitionDetail = Type.Object({
  ...Definition.properties,
  document: Nullable(Json("The live version's document; null when none is live")),
});

export const DefinitionPage = OffsetEnvelope(Definition);

export const ListQuery = Type.Object({
  ...OffsetQuery,
  platform: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  stream: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
  builtin: Type.Optional(Type.Boolean({ description: "true: only built-ins; false: only organizations' own" })),
  organization_id: Type.Optional(Id("Only this organization's own definitions (alias: org_id)")),
});

export const PageQuery = Type.Object({ ...OffsetQuery });

export const Version = Type.Object({
  id: Type.String(),
  definition_id: Type.String(),
  version: Type.Integer({ description: '1, 2, ... per definition' }),
  is_live: Type.Boolean(),
  builtin: Type.Boolean({ description: 'Added by the built-in catalog at start, not by a person' }),
  comment: Type.String(),
  checksum: Type.String({ description: 'SHA-256 of the document as canonical JSON (sorted keys)' }),
  created_by: Nullable(
    Type.Integer({
      description:
        'The user who published it; null for service accounts and built-ins (the audit trail names every actor)',
    }),
  ),
  created_at: Timestamp(),
});

export const VersionDetail = Type.Object({ ...Version.properties, document: Document });

export const VersionPage = OffsetEnvelope(Version);

export const PublishBody = Type.Object(
  {
    document: Document,
    comment: Type.Optional(Type.String({ maxLength: 1000 })),
  },
  { additionalProperties: false },
);

export const RollbackBody = Type.Object(
  {
    version_id: Type.Optional(Uuid('The version to make live')),
    version: Type.Optional(Type.Integer({ minimum: 1, description: 'The version number to make live' })),
  },
  { additionalProperties: false, description: 'Exactly one of version_id and version' },
);

export const Diff = Type.Object({
  from: VersionRef,
  to: VersionRef,
  changes: Type.Array(
    Type.Object({
      op: Type.Union([Type.Literal('add'), Type.Literal('remove'), Type.Literal('replace')]),
      path: Type.String({ description: 'JSON pointer into the documents' }),
      from: Type.Optional(Type.Unknown()),
      to: Type.Optional(Type.Unknown()),
    }),
    { description: 'Objects compared by key, arrays by index' },
  ),
});

export const AuditQuery = Type.Object({
  ...OffsetQuery,
  outcome: Type.Optional(
    Type.Union([Type.Literal('success'), Type.Literal('failed'), Type.Literal('denied'), Type.Literal('error')]),
  ),
});

const OcsfIssue = Type.Object({ path: Type.String(), kind: Type.String(), message: Type.String() });

export const DryRunBody = Type.Object(
  {
    document: Type.Optional(Json('A draft document to try (exclusive with definition_id)')),
    definition_id: Type.Optional(Uuid("Try this definition's live version (or version_id)")),
    version_id: Type.Optional(Uuid('With definition_id: try this version instead of the live one')),
    events: Type.Optional(Type.Array(Json('A raw event'), { minItems: 1, maxItems: MAX_DRY_RUN_EVENTS })),
    sample: Type.Optional(
      Type.Object(
        {
          integration_id: Id(),
          stream: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
          limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_SAMPLE_LIMIT, default: DEFAULT_SAMPLE_LIMIT })),
        },
        { additionalProperties: false, description: 'Use the newest raw samples of an integration in your scope' },
      ),
    ),
    organization_id: Type.Optional(
      Id(
        "Judge quarantine under this organization's OCSF policy (default: the sample's or definition's organization, else yours when you have one)",
      ),
    ),
  },
  {
    additionalProperties: false,
    description: 'Exactly one of document / definition_id, and exactly one of events / sample',
  },
);

export const DryRunResult = Type.Object({
  version: Nullable(
    Type.Object(
      { id: Type.String(), definition_id: Type.String(), version: Type.Integer() },
      { description: 'null for a draft' },
    ),
  ),
  policy: Type.Union([Type.Literal('strict'), Type.Literal('lenient')], {
    description: 'The OCSF policy the quarantine decisions follow',
  }),
  masked: Type.Boolean({
    description:
      'Personal data in the inputs and outputs is masked: true for a run on samples by a caller without ' +
      'quarantine.read (the permission to read raw events); captions, codes and ids are never masked',
  }),
  results: Type.Array(
    Type.Object({
      index: Type.Integer(),
      sample_id: Type.Optional(Type.String()),
      input: Type.Optional(Json('The sample the result is for (masked when `masked` is true)')),
      ok: Type.Boolean({ description: 'Mapped, and valid OCSF' }),
      quarantine: Type.Boolean({ description: 'The live pipeline would quarantine the event' }),
      error_kind: Type.Optional(
        Type.String({ description: 'The quarantine reason (or invalid_ocsf for a flagged event)' }),
      ),
      error_detail: Type.Optional(Type.String()),
      ocsf: Type.Optional(Json('The OCSF event the mapping produced')),
      issues: Type.Array(OcsfIssue),
    }),
  ),
  summary: Type.Object({
    total: Type.Integer(),
    ok: Type.Integer(),
    flagged: Type.Integer({ description: 'Invalid OCSF delivered with issues under a lenient policy' }),
    quarantined: Type.Integer(),
  }),
});

export const TestCasesBody = Type.Object(
  {
    document: Type.Optional(Json('A draft document whose tests to run (exclusive with definition_id)')),
    definition_id: Type.Optional(Uuid("Run the tests of this definition's live version (or version_id)")),
    version_id: Type.Optional(Uuid('With definition_id: this version instead of the live one')),
  },
  { additionalProperties: false, description: 'Exactly one of document / definition_id' },
);

export const TestCasesResult = Type.Object({
  version: Nullable(
    Type.Object(
      { id: Type.String(), definition_id: Type.String(), version: Type.Integer() },
      { description: 'null for a draft' },
    ),
  ),
  total: Type.Integer(),
  passed: Type.Integer(),
  failed: Type.Integer(),
  results: Type.Array(
    Type.Object({
      index: Type.Integer({ description: "The case's index in tests (/tests/<index>)" }),
      name: Type.String(),
      ok: Type.Boolean(),
      failures: Type.Array(Type.String(), {
        description: 'Why it failed, one line each: path: expected X, got Y (empty when it passed)',
      }),
    }),
  ),
});

export const SamplesQuery = Type.Object({
  integration_id: Id(),
  stream: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_SAMPLE_LIMIT, default: DEFAULT_SAMPLE_LIMIT })),
  offset: Type.Optional(Type.Integer({ minimum: 0, default: 0 })),
});

export const SamplePage = OffsetEnvelope(
  Type.Object({
    id: Type.String(),
    integration_id: Type.Integer(),
    stream: Type.String(),
    received_at: Timestamp(),
    raw: Json('The raw event, personal data masked'),
  }),
);

export const DiscoverQuery = Type.Object({
  integration_id: Type.Optional(Id("Only this integration's samples")),
  limit: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: MAX_DISCOVER_SAMPLES,
      default: DEFAULT_DISCOVER_SAMPLES,
      description: 'Newest samples to read',
    }),
  ),
});

export const Discovery = Type.Object({
  samples: Type.Integer({ description: 'Samples read' }),
  truncated: Type.Boolean({ description: 'More distinct paths were seen than are listed' }),
  fields: Type.Array(
    Type.Object({
      path: Type.String({ description: 'Dotted path; array elements as []' }),
      types: Type.Record(Type.String(), Type.Integer(), {
        description: 'JSON type -> samples in which the path held it',
      }),
      count: Type.Integer({ description: 'Samples in which the path appears' }),
      frequency: Type.Number({ minimum: 0, maximum: 1 }),
      mapped: Type.Boolean({ description: 'The live version reads the path (or an ancestor)' }),
      example: Type.Unknown({ description: 'A value seen (masked)' }),
    }),
  ),
});

export const TypeCastList = Type.Array(
  Type.Object({
    name: Type.String({ description: "The value of an assignment's `cast`" }),
    description: Type.String(),
    input: Type.String({ description: 'JSON types accepted' }),
    output: Type.String({ description: 'The OCSF type produced' }),
    example: Type.Object({ input: Type.Unknown(), output: Type.Unknown() }),
  }),
);
