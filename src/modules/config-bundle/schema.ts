// The configuration bundle: one organization's configuration as one versioned JSON
// document (docs/config-bundle.md, docs/decisions/0033-configuration-bundle.md). Objects
// are keyed by name and refer to each other by name; secrets are markers, never values.
// The document schema is a named component of the OpenAPI document (ConfigBundle) and is
// written to docs/config-bundle.schema.json.
import { Type, type Static } from 'typebox';

export const BUNDLE_FORMAT = 'weir.config-bundle';
export const BUNDLE_VERSION = 1;
export const BUNDLE_SCHEMA_ID = 'ConfigBundle';

/** Bounds of an imported document (the fuzzer sends anything). */
export const MAX_OBJECTS = 500;
export const MAX_TABLE_ROWS = 50_000;
export const MAX_DEPTH = 32;
export const MAX_MAPPING_VERSIONS = 1_000;
/** An uploaded MaxMind database travels in the document up to this size (base64); a larger one must be uploaded. */
export const MAX_MMDB_BASE64 = 8 * 1024 * 1024;
export const MAX_BODY_BYTES = 32 * 1024 * 1024;

const Name = Type.String({ minLength: 1, maxLength: 200 });
const Text = Type.String({ maxLength: 4000 });
const Free = (description: string) => Type.Record(Type.String({ maxLength: 200 }), Type.Unknown(), { description });
const Version = Type.Union([Type.Integer({ minimum: 0, maximum: 2_147_483_647 }), Type.Null()], {
  description:
    'The version in the exporting organization (informative; import writes a new version when the content differs)',
});

export const SecretMarker = Type.Object(
  {
    $secret: Type.String({
      minLength: 1,
      maxLength: 500,
      description: "kind:name:field; give its value in the import body's `secrets`",
    }),
  },
  { additionalProperties: false, description: 'A secret the document does not carry' },
);

const Integration = Type.Object(
  {
    name: Name,
    platform: Type.String({ minLength: 1, maxLength: 100 }),
    is_active: Type.Boolean(),
    parent: Type.Union([Name, Type.Null()], { description: "The parent integration's name" }),
    config: Free('The platform config; secret fields are {"$secret": "integration:<name>:<field>"}'),
  },
  { additionalProperties: false },
);

const Mapping = Type.Object(
  {
    name: Name,
    platform: Type.String({ minLength: 1, maxLength: 100 }),
    stream: Type.String({ minLength: 1, maxLength: 200 }),
    description: Text,
    version: Version,
    document: Type.Union([Free("The live version's mapping document"), Type.Null()]),
    versions: Type.Optional(
      Type.Array(
        Type.Object(
          {
            version: Type.Integer({ minimum: 1, maximum: 2_147_483_647 }),
            comment: Type.String({ maxLength: 1000 }),
            document: Free("This version's mapping document"),
          },
          { additionalProperties: false },
        ),
        {
          maxItems: MAX_MAPPING_VERSIONS,
          description:
            'Every version, oldest first; the live one is the one numbered `version` (its document equals `document`). ' +
            'Import into an organization without the definition creates them in order and makes that one live; an existing definition only gets a new version when `document` differs',
        },
      ),
    ),
  },
  { additionalProperties: false },
);

const CredentialField = Type.Union([SecretMarker, Type.Record(Type.String({ maxLength: 200 }), SecretMarker)]);

const Destination = Type.Object(
  {
    name: Name,
    type: Type.String({ minLength: 1, maxLength: 100 }),
    description: Text,
    config: Free("The type's config"),
    delivery: Free('Delivery settings'),
    enabled: Type.Boolean(),
    credential: Type.Union([Type.Record(Type.String({ maxLength: 200 }), CredentialField), Type.Null()], {
      description: 'Field names of the stored credential, each a secret marker (secret_headers: one marker per header)',
    }),
  },
  { additionalProperties: false },
);

const Route = Type.Object(
  {
    name: Name,
    description: Text,
    position: Type.Integer({ minimum: 1, maximum: 100_000 }),
    enabled: Type.Boolean(),
    condition: Type.Unknown({ description: 'null or a condition (docs/conditions.md)' }),
    transforms: Type.Array(Type.Unknown(), { maxItems: 100 }),
    destinations: Type.Array(Name, {
      maxItems: 50,
      description: "Destination names: the organization's own or global ones",
    }),
    final: Type.Boolean(),
    version: Version,
  },
  { additionalProperties: false },
);

const Table = Type.Object(
  {
    name: Name,
    description: Text,
    key_column: Type.String({ minLength: 1, maxLength: 200 }),
    match: Type.String({ minLength: 1, maxLength: 50 }),
    version: Version,
    rows: Type.Array(Free('A row'), { maxItems: MAX_TABLE_ROWS }),
  },
  { additionalProperties: false },
);

const Source = Type.Object(
  {
    name: Name,
    description: Text,
    kind: Type.Union([Type.Literal('mmdb'), Type.Literal('http'), Type.Literal('feed')]),
    config: Free("The kind's config (GET /api/collectors/enrichment/enrichers)"),
    enabled: Type.Boolean(),
    shared: Type.Boolean({
      description: 'Shared with every organization (needs the Enterprise edition where it is imported)',
    }),
    credential: Type.Union(
      [
        Type.Object(
          { header: Type.String({ minLength: 1, maxLength: 256 }), value: SecretMarker },
          { additionalProperties: false },
        ),
        Type.Null(),
      ],
      {
        description:
          'http and feed: the secret header sent with each call; its value is {"$secret": "enrichment_source:<name>:credential"}',
      },
    ),
    table: Type.Optional(
      Type.Union([Name, Type.Null()], {
        description: 'feed: the table the feed fills (created with the source; policies may name it)',
      }),
    ),
    mmdb_base64: Type.Optional(
      Type.Union([Type.String({ maxLength: MAX_MMDB_BASE64 }), Type.Null()], {
        description: `mmdb: the database file, base64, when at most ${MAX_MMDB_BASE64} characters; null when larger (upload it to the source, then import)`,
      }),
    ),
  },
  { additionalProperties: false },
);

const Lookup = Type.Union([
  Type.Object({ table: Name }, { additionalProperties: false }),
  Type.Object({ source: Name }, { additionalProperties: false }),
]);

const Policy = Type.Object(
  {
    name: Name,
    enabled: Type.Boolean(),
    version: Version,
    description: Text,
    order: Type.Integer({ minimum: -1_000_000, maximum: 1_000_000 }),
    condition: Type.Unknown(),
    key: Type.Unknown(),
    lookup: Lookup,
    output: Type.Unknown(),
    on_miss: Type.String({ maxLength: 50 }),
    defaults: Type.Optional(Free('Values written on a miss')),
    overwrite: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

const Strings = (max: number) => Type.Array(Type.String({ maxLength: 200 }), { maxItems: max });
const Mitre = Type.Object(
  { tactics: Type.Optional(Strings(50)), techniques: Type.Optional(Strings(50)) },
  { additionalProperties: false, description: 'MITRE ATT&CK ids: tactics TA0001, techniques T1110 or T1110.003' },
);

const DetectionRule = Type.Object(
  {
    name: Name,
    enabled: Type.Boolean(),
    version: Version,
    definition: Type.Object(
      {
        title: Type.Optional(Type.String({ maxLength: 1000 })),
        description: Type.Optional(Type.String({ maxLength: 10_000 })),
        condition: Type.Unknown({ description: 'The events the rule matches (docs/conditions.md)' }),
        severity_id: Type.Integer({ minimum: 1, maximum: 6, description: 'OCSF severity_id of its findings' }),
        mitre: Type.Optional(Mitre),
        group_by: Type.Optional(Strings(5)),
        threshold: Type.Optional(
          Type.Object(
            { count: Type.Integer({ minimum: 1 }), window_seconds: Type.Integer({ minimum: 1 }) },
            { additionalProperties: false },
          ),
        ),
        suppression_seconds: Type.Optional(Type.Integer({ minimum: 0 })),
        origin: Type.Optional(
          Free('Where the rule came from: a Sigma rule\'s {format: "sigma", id, title, logsource, ...}'),
        ),
      },
      { additionalProperties: false, description: "The live version's definition (docs/detections.md)" },
    ),
  },
  { additionalProperties: false },
);

const SavedQuery = Type.Object(
  {
    name: Name,
    description: Text,
    integration: Type.Union([Name, Type.Null()], {
      description: "A live query's integration, by name (its query's integration_id in the organization)",
    }),
    query: Free('The query definition (docs/search.md) without organization_id and integration_id'),
  },
  { additionalProperties: false },
);

const Schedule = Type.Object(
  {
    name: Name,
    query: Type.String({ minLength: 1, maxLength: 200, description: 'The saved query it runs, by name' }),
    cron: Type.Union([Type.String({ minLength: 1, maxLength: 200 }), Type.Null()]),
    timezone: Type.String({ minLength: 1, maxLength: 100 }),
    interval_seconds: Type.Union([Type.Integer({ minimum: 1, maximum: 2_147_483_647 }), Type.Null()]),
    notify: Free('E-mail, condition and alert settings (docs/search.md, Schedules)'),
    enabled: Type.Boolean(),
  },
  { additionalProperties: false },
);

const CollectorSettings = Type.Record(
  Type.String({ maxLength: 100 }),
  Type.Union([Type.Integer({ minimum: 0, maximum: 10_000_000 }), Type.Boolean()]),
  {
    description: 'Installation-wide collector settings (GET /api/collectors/config); imported only with platform scope',
  },
);

const List = <T extends Parameters<typeof Type.Array>[0]>(item: T) => Type.Array(item, { maxItems: MAX_OBJECTS });

export const ConfigBundle = Type.Object(
  {
    format: Type.Literal(BUNDLE_FORMAT),
    version: Type.Integer({
      minimum: 1,
      maximum: 1000,
      description: `The bundle format version (this Weir writes and reads ${BUNDLE_VERSION})`,
    }),
    weir_version: Type.String({ maxLength: 50 }),
    exported_at: Type.String({ maxLength: 40, format: 'date-time' }),
    organization: Type.Object({ name: Name }, { additionalProperties: false }),
    integrations: List(Integration),
    mappings: List(Mapping),
    destinations: List(Destination),
    routes: List(Route),
    enrichment_tables: List(Table),
    enrichment_sources: Type.Optional(List(Source)),
    enrichment_policies: List(Policy),
    detection_rules: Type.Optional(List(DetectionRule)),
    saved_queries: Type.Optional(List(SavedQuery)),
    schedules: Type.Optional(List(Schedule)),
    collector_settings: Type.Optional(CollectorSettings),
  },
  {
    additionalProperties: false,
    title: 'Weir configuration bundle',
    description: "One organization's configuration (docs/config-bundle.md)",
  },
);
export type ConfigBundle = Static<typeof ConfigBundle>;

/** The document's JSON Schema as plain JSON (TypeBox's own markers left out). */
export function bundleJsonSchema(): Record<string, unknown> {
  return JSON.parse(JSON.stringify(ConfigBundle, (k, v: unknown) => (k.startsWith('~') ? undefined : v))) as Record<
    string,
    unknown
  >;
}

export const ExportQuery = Type.Object({
  organization_id: Type.Optional(
    Type.Integer({ minimum: 1, description: 'Required when you can see several organizations' }),
  ),
});

export const ImportBody = Type.Object(
  {
    document: Type.Object(
      {},
      {
        additionalProperties: true,
        description: `A ${BUNDLE_SCHEMA_ID} document (checked against it, then its references)`,
      },
    ),
    dry_run: Type.Optional(Type.Boolean({ default: false })),
    secrets: Type.Optional(
      Type.Record(Type.String({ minLength: 1, maxLength: 500 }), Type.String({ maxLength: 65_536 }), {
        maxProperties: 2_000,
      }),
    ),
  },
  { additionalProperties: false },
);

const L = Type.Literal;
export const ItemKind = Type.Union([
  L('integration'),
  L('mapping'),
  L('route'),
  L('destination'),
  L('enrichment_table'),
  L('enrichment_source'),
  L('enrichment_policy'),
  L('detection_rule'),
  L('saved_query'),
  L('schedule'),
  L('collector_settings'),
]);
export const ItemAction = Type.Union([L('create'), L('update'), L('unchanged'), L('conflict')]);

export const ImportItem = Type.Object({
  kind: ItemKind,
  name: Type.String(),
  action: ItemAction,
  changes: Type.Optional(Type.Array(Type.String(), { description: 'The fields that differ (names, never values)' })),
  reason: Type.Optional(Type.String()),
  id: Type.Optional(
    Type.Union([Type.String(), Type.Integer()], { description: 'The id in the target organization after apply' }),
  ),
});

export const ImportResult = Type.Object({
  dry_run: Type.Boolean(),
  applied: Type.Boolean(),
  summary: Type.Object({
    create: Type.Integer(),
    update: Type.Integer(),
    unchanged: Type.Integer(),
    conflict: Type.Integer(),
  }),
  items: Type.Array(ImportItem),
});
export type ImportItem = Static<typeof ImportItem>;
export type ImportResult = Static<typeof ImportResult>;
