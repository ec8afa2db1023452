import { Type, type TSchema } from 'typebox';
import { Timestamp } from '../../platform/http/schemas.js';
import { MATCH_KINDS } from '../../pipeline/enrich/types.js';
import { ON_MISS } from '../../pipeline/enrich/policy.js';
import { MAX_PREVIEW_ROWS } from './tables.js';

export const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);
export const OrgId = (description: string) => Type.Integer({ minimum: 1, maximum: 2_147_483_647, description });
export const ObjectId = Type.String({ minLength: 1, maxLength: 64 });
const Name = Type.String({ minLength: 1, maxLength: 200 });
const Description = Type.String({ maxLength: 2000 });
const Comment = Type.String({ maxLength: 1000, description: 'Kept with the version this change writes' });
const Cell = Type.Union([Type.String({ maxLength: 65_536 }), Type.Number(), Type.Boolean(), Type.Null()]);
const RowSchema = Type.Record(Type.String({ maxLength: 256 }), Cell);
const Match = Type.Union(
  MATCH_KINDS.map((m) => Type.Literal(m)),
  { description: 'exact, case_insensitive, cidr (longest prefix wins) or wildcard (* and ?)' },
);
/** Table uploads: up to (and beyond) 1,000,000 rows. */
export const TABLE_BODY_LIMIT = 256 * 1024 * 1024;
/** MaxMind databases (City is some 70 MB; base64 adds a third). */
export const SOURCE_BODY_LIMIT = 160 * 1024 * 1024;
const DOCS = 'docs/enrichment.md';

export const TableParams = Type.Object({ table_id: ObjectId });
export const SourceParams = Type.Object({ source_id: ObjectId });
export const PolicyParams = Type.Object({ policy_id: ObjectId });
export const PolicyVersionParams = Type.Object({ policy_id: ObjectId, version_id: ObjectId });

export const OrgQuery = Type.Object({
  organization_id: Type.Optional(OrgId('Only this organization (alias: org_id)')),
});

const Content = {
  format: Type.Optional(
    Type.Union([Type.Literal('csv'), Type.Literal('json')], {
      description: 'Default: csv when csv is given, else json',
    }),
  ),
  csv: Type.Optional(
    Type.String({ maxLength: TABLE_BODY_LIMIT, description: 'CSV text, header line first (RFC 4180)' }),
  ),
  rows: Type.Optional(Type.Array(RowSchema, { maxItems: 2_000_000, description: 'Rows as flat objects of scalars' })),
};

export const CreateTableBody = Type.Object(
  {
    organization_id: Type.Optional(
      OrgId('Required when you can see several organizations; default: your only organization'),
    ),
    name: Name,
    description: Type.Optional(Description),
    key_column: Type.String({ minLength: 1, maxLength: 256 }),
    match: Match,
    ...Content,
    comment: Type.Optional(Comment),
  },
  { additionalProperties: false },
);

export const TableVersionBody = Type.Object(
  {
    mode: Type.Union([Type.Literal('replace'), Type.Literal('patch')], {
      description: 'replace: the whole table from csv or rows; patch: upsert rows by key and delete keys',
    }),
    ...Content,
    upsert: Type.Optional(Type.Array(RowSchema, { maxItems: 1_000_000 })),
    delete: Type.Optional(Type.Array(Type.String({ maxLength: 1024 }), { maxItems: 1_000_000 })),
    comment: Type.Optional(Comment),
  },
  { additionalProperties: false },
);

export const RollbackBody = Type.Object(
  { version: Type.Integer({ minimum: 1, maximum: 2_147_483_647 }), comment: Type.Optional(Comment) },
  { additionalProperties: false },
);

const TableVersion = Type.Object({
  id: Type.String(),
  version: Type.Integer(),
  kind: Type.String({ description: 'create, replace, patch, rollback or feed' }),
  row_count: Type.Integer(),
  columns: Type.Array(Type.String()),
  checksum: Type.String(),
  comment: Type.String(),
  created_by: Nullable(Type.Integer()),
  created_at: Timestamp(),
});
export const TableVersionSchema = TableVersion;
export const TableVersionList = Type.Array(TableVersion);

const TableFields = {
  id: Type.String(),
  organization_id: Type.Integer(),
  name: Type.String(),
  description: Type.String(),
  key_column: Type.String(),
  match: Type.String(),
  version: Type.Integer({ description: 'The live version' }),
  row_count: Type.Integer(),
  created_at: Timestamp(),
  updated_at: Timestamp(),
};
export const Table = Type.Object(TableFields);
export const TableList = Type.Array(Table);
export const CreatedTable = Type.Object({ ...TableFields, live_version: TableVersion });
export const TableDetail = Type.Object({
  ...TableFields,
  columns: Type.Array(Type.String()),
  live_version: Nullable(TableVersion),
  rows: Type.Array(RowSchema),
  limit: Type.Integer(),
  offset: Type.Integer(),
});
export const TableQuery = Type.Object({
  limit: Type.Optional(
    Type.Integer({ minimum: 1, maximum: MAX_PREVIEW_ROWS, default: 20, description: 'Rows of the live version shown' }),
  ),
  offset: Type.Optional(Type.Integer({ minimum: 0, maximum: 2_000_000, default: 0 })),
});

const Credential = Type.Object(
  {
    header: Type.String({
      minLength: 1,
      maxLength: 256,
      pattern: "^[A-Za-z0-9!#$%&'*+.^_`|~-]+$",
      errorMessage: { pattern: "must be an HTTP header name (letters, digits and !#$%&'*+.^_`|~-)" },
    }),
    value: Type.String({ minLength: 1, maxLength: 8192, writeOnly: true }),
  },
  {
    additionalProperties: false,
    description:
      'A secret header sent with each call (Authorization: Bearer …, X-Api-Key: …); sealed at rest, never returned',
  },
);
const SourceKind = Type.Union([Type.Literal('mmdb'), Type.Literal('http'), Type.Literal('feed')]);
const Config = Type.Record(Type.String({ maxLength: 256 }), Type.Unknown(), {
  description: 'Per kind: GET /api/collectors/enrichment/enrichers has each schema',
});
const Mmdb = Type.String({ maxLength: SOURCE_BODY_LIMIT, description: 'The .mmdb file, base64' });

export const CreateSourceBody = Type.Object(
  {
    organization_id: Type.Optional(
      OrgId('Required when you can see several organizations; default: your only organization'),
    ),
    name: Name,
    description: Type.Optional(Description),
    kind: SourceKind,
    config: Type.Optional(Config),
    credential: Type.Optional(Nullable(Credential)),
    shared: Type.Optional(
      Type.Boolean({ description: "Usable by every organization's policies (Enterprise; else 403)" }),
    ),
    enabled: Type.Optional(Type.Boolean()),
    mmdb_base64: Type.Optional(Mmdb),
  },
  { additionalProperties: false },
);

export const PatchSourceBody = Type.Object(
  {
    name: Type.Optional(Name),
    description: Type.Optional(Description),
    config: Type.Optional(Config),
    credential: Type.Optional(Nullable(Credential)),
    shared: Type.Optional(Type.Boolean()),
    enabled: Type.Optional(Type.Boolean()),
    mmdb_base64: Type.Optional(Mmdb),
  },
  { additionalProperties: false },
);

export const Source = Type.Object({
  id: Type.String(),
  organization_id: Nullable(Type.Integer({ description: 'null: built in' })),
  name: Type.String(),
  description: Type.String(),
  kind: Type.String({ description: 'geoip (built in), mmdb, http or feed' }),
  builtin: Type.Boolean(),
  config: Type.Record(Type.String(), Type.Unknown()),
  has_credential: Type.Boolean(),
  shared: Type.Boolean(),
  enabled: Type.Boolean(),
  database: Nullable(
    Type.Record(Type.String(), Type.Unknown(), { description: 'mmdb and geoip: what the database is' }),
  ),
  table_id: Nullable(Type.String({ description: 'feed: the table its fetches write' })),
  status: Type.Record(Type.String(), Type.Unknown(), {
    description: 'feed: last_fetch_at, last_fetch_status, last_error, rows, skipped',
  }),
  next_fetch_at: Nullable(Timestamp()),
  version: Type.Integer(),
  created_at: Nullable(Timestamp()),
  updated_at: Nullable(Timestamp()),
});
export const SourceList = Type.Array(Source);

export const TestBody = Type.Object(
  {
    key: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 1024,
        description: 'The key to look up (default 8.8.8.8, or config.test_key)',
      }),
    ),
  },
  { additionalProperties: false },
);
export const TestResult = Type.Object(
  { ok: Type.Boolean(), kind: Type.String(), latency_ms: Type.Optional(Type.Number()) },
  { additionalProperties: true },
);

const PolicyCondition = Type.Unknown({
  description:
    'The one condition language over the normalized OCSF event (docs/conditions.md), as the tree or its text form ' +
    '(`class_uid = 3002 and actor.user.name exists`; the tree is stored); null: every event',
});
const Lookup = Type.Union(
  [
    Type.Object({ table_id: ObjectId }, { additionalProperties: false }),
    Type.Object({ source_id: ObjectId }, { additionalProperties: false }),
  ],
  {
    description: 'A table of the organization, or a source (its own, shared with it, or builtin-geoip)',
  },
);
const Output = Type.Object(
  {
    enrichment: Type.Optional(
      Type.Object(
        {
          name: Type.String({ minLength: 1, maxLength: 200 }),
          type: Type.Optional(Type.String({ maxLength: 200 })),
          provider: Type.Optional(Type.String({ maxLength: 200 })),
        },
        { additionalProperties: false },
      ),
    ),
    fields: Type.Optional(
      Type.Record(Type.String({ maxLength: 256 }), Type.String({ minLength: 1, maxLength: 256 }), {
        description: 'OCSF target path → column of the answer',
      }),
    ),
  },
  {
    additionalProperties: false,
    description:
      'enrichment: appended to enrichments[] {name, value: the key, type, provider, data: the row}; fields: written to named OCSF attributes',
  },
);

export const PolicyFields = {
  name: Name,
  description: Type.Optional(Description),
  order: Type.Optional(
    Type.Integer({
      minimum: -1_000_000,
      maximum: 1_000_000,
      description: 'Policies run by ascending order (default 100)',
    }),
  ),
  condition: Type.Optional(PolicyCondition),
  key: Type.String({
    minLength: 1,
    maxLength: 256,
    description: 'The OCSF field looked up (src_endpoint.ip, actor.user.name, …); GET key-sources lists them',
  }),
  lookup: Lookup,
  output: Output,
  on_miss: Type.Optional(
    Type.Union(
      ON_MISS.map((m) => Type.Literal(m)),
      { description: 'continue (default): the event goes on unchanged; default: defaults stand in for the row' },
    ),
  ),
  defaults: Type.Optional(RowSchema),
  overwrite: Type.Optional(Type.Boolean({ description: 'Write over a value the mapping set (default false)' })),
  comment: Type.Optional(Comment),
};

export const CreatePolicyBody = Type.Object(
  { organization_id: Type.Optional(OrgId('Required when you can see several organizations')), ...PolicyFields },
  { additionalProperties: false },
);
export const PolicyVersionBody = Type.Object(PolicyFields, { additionalProperties: false });
export const EnableBody = Type.Object(
  { enabled: Type.Optional(Type.Boolean({ default: true, description: 'false disables' })) },
  { additionalProperties: false },
);

export const Policy = Type.Object(
  {
    id: Type.String(),
    organization_id: Type.Integer(),
    name: Type.String(),
    enabled: Type.Boolean(),
    version: Type.Integer(),
    description: Type.Optional(Type.String()),
    order: Type.Integer(),
    condition: Type.Unknown(),
    key: Type.String(),
    lookup: Type.Record(Type.String(), Type.String()),
    output: Type.Unknown(),
    on_miss: Type.String(),
    defaults: Type.Optional(RowSchema),
    overwrite: Type.Optional(Type.Boolean()),
    created_at: Timestamp(),
    updated_at: Timestamp(),
  },
  { $id: 'EnrichmentPolicy', description: `An enrichment policy at its live version. ${DOCS}` },
);
export const PolicyList = Type.Array(Policy);
export const PolicyVersion = Type.Object({
  id: Type.String(),
  policy_id: Type.String(),
  version: Type.Integer(),
  definition: Type.Record(Type.String(), Type.Unknown()),
  comment: Type.String(),
  created_by: Nullable(Type.Integer()),
  created_at: Timestamp(),
});
export const PolicyVersionList = Type.Array(PolicyVersion);
