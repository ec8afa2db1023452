// The kinds of enrichment available, each with the JSON Schema of its configuration (GET
// /api/collectors/enrichment/enrichers): what a console builds its forms from.
import { Type, type TSchema } from 'typebox';
import { MATCH_KINDS } from '../../pipeline/enrich/types.js';
import { GEO_COLUMNS, GEOIP_ATTRIBUTION } from '../../pipeline/enrich/geoip.js';

const Header = Type.Object(
  {
    header: Type.String({ minLength: 1, maxLength: 256 }),
    value: Type.String({ minLength: 1, maxLength: 8192, writeOnly: true }),
  },
  { additionalProperties: false },
);

export const HttpConfig = Type.Object(
  {
    url_template: Type.String({
      maxLength: 2048,
      description: 'https://api.example.com/ip/{key}: {key} is replaced by the URL-encoded key',
    }),
    method: Type.Optional(Type.Union([Type.Literal('GET'), Type.Literal('POST')])),
    headers: Type.Optional(Type.Record(Type.String(), Type.String({ maxLength: 1024 }))),
    body_template: Type.Optional(Type.String({ maxLength: 8192 })),
    result_path: Type.Optional(Type.String({ maxLength: 256 })),
    timeout_ms: Type.Optional(Type.Integer({ minimum: 100, maximum: 30_000 })),
    rate_limit_per_second: Type.Optional(Type.Number({ minimum: 0.1, maximum: 10_000 })),
    cache_ttl_seconds: Type.Optional(Type.Integer({ minimum: 1, maximum: 604_800 })),
    negative_ttl_seconds: Type.Optional(Type.Integer({ minimum: 1, maximum: 604_800 })),
    max_cache_entries: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_000_000 })),
    concurrency: Type.Optional(Type.Integer({ minimum: 1, maximum: 64 })),
    test_key: Type.Optional(Type.String({ maxLength: 1024 })),
  },
  { additionalProperties: true },
);

export const FeedConfig = Type.Object(
  {
    url: Type.String({ maxLength: 2048 }),
    format: Type.Optional(Type.Union([Type.Literal('csv'), Type.Literal('lines'), Type.Literal('auto')])),
    indicator_column: Type.Optional(Type.String({ maxLength: 256 })),
    interval_minutes: Type.Optional(Type.Integer({ minimum: 5, maximum: 10_080 })),
    max_bytes: Type.Optional(Type.Integer({ minimum: 1, maximum: 268_435_456 })),
    table_name: Type.Optional(Type.String({ maxLength: 200 })),
  },
  { additionalProperties: true },
);

export interface Enricher {
  kind: string;
  title: string;
  description: string;
  /** Where a policy points: lookup.table_id or lookup.source_id. */
  lookup: 'table_id' | 'source_id';
  /** The columns a lookup answers with (null: whatever the table or API holds). */
  columns: readonly string[] | null;
  local: boolean;
  config_schema: TSchema;
  credential_schema?: TSchema;
}

export const ENRICHERS: readonly Enricher[] = [
  {
    kind: 'table',
    title: 'Lookup table',
    description: `A versioned table of rows keyed by one column; match ${MATCH_KINDS.join(', ')} (CIDR: longest prefix wins).`,
    lookup: 'table_id',
    columns: null,
    local: true,
    config_schema: Type.Object({
      key_column: Type.String(),
      match: Type.Union(MATCH_KINDS.map((m) => Type.Literal(m))),
    }),
  },
  {
    kind: 'geoip',
    title: 'GeoIP (built in)',
    description: `Country and autonomous system of an IP address. ${GEOIP_ATTRIBUTION}`,
    lookup: 'source_id',
    columns: GEO_COLUMNS,
    local: true,
    config_schema: Type.Object({}),
  },
  {
    kind: 'mmdb',
    title: 'MaxMind database',
    description: 'An uploaded .mmdb (GeoIP2/GeoLite2 City, Country, ASN, or compatible).',
    lookup: 'source_id',
    columns: GEO_COLUMNS,
    local: true,
    config_schema: Type.Object({}),
  },
  {
    kind: 'http',
    title: 'HTTP lookup API',
    description:
      'A threat-intel or asset API, called in the background; the pass reads its cache and never waits for it.',
    lookup: 'source_id',
    columns: null,
    local: false,
    config_schema: HttpConfig,
    credential_schema: Header,
  },
  {
    kind: 'feed',
    title: 'Indicator feed',
    description:
      'A CSV or newline list of IPs, CIDRs, domains, URLs or hashes fetched on a schedule into a table version.',
    lookup: 'source_id',
    columns: null,
    local: true,
    config_schema: FeedConfig,
    credential_schema: Header,
  },
];
