// Enrichment as the one pass sees it (docs/enrichment.md): an organization's enabled
// policies, in order, each reading one key field of a normalized event, looking it up in a
// table version or a source, and writing what it found to `enrichments[]` or to named OCSF
// fields. Tables and local sources answer synchronously from memory; an HTTP source answers
// from its cache only (a miss is fetched in the background, pipeline/enrich/http-source.ts).

/** How a table matches a key against its key column. */
export const MATCH_KINDS = ['exact', 'case_insensitive', 'cidr', 'wildcard'] as const;
export type MatchKind = (typeof MATCH_KINDS)[number];

export type Cell = string | number | boolean | null;
export type Row = Record<string, Cell>;

/** One table version as it is loaded: every row, the key column, how keys match. */
export interface TableData {
  key_column: string;
  match: MatchKind;
  columns: string[];
  rows: Row[];
}

/** A loaded table or local source: the row (or result object) for a key, undefined on a miss. */
export interface Lookup {
  get(key: string): Row | undefined;
  /** Rows (tables) or entries held; for metrics and activity. */
  readonly size: number;
}

export const SOURCE_KINDS = ['geoip', 'mmdb', 'http', 'feed'] as const;
export type SourceKind = (typeof SOURCE_KINDS)[number];
