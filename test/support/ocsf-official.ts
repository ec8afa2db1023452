// The official OCSF 1.8.0 schema (third_party/ocsf-schema/schema-1.8.0.json, every class), read at
// test time and built with the project's own createCatalog(), so tests can check outputs
// against the official definitions and not only the project's extract of them.
import { readFileSync } from 'node:fs';
import { createCatalog } from '../../src/ocsf/catalog.js';
import type { OcsfDefinitions } from '../../src/ocsf/format.js';
import type { OcsfCatalog } from '../../src/ocsf/types.js';

export const OFFICIAL_SCHEMA_URL = new URL('../../third_party/ocsf-schema/schema-1.8.0.json', import.meta.url);

let schema: OcsfDefinitions | undefined;
let catalog: OcsfCatalog | undefined;

/** The parsed official schema (format compact-1; see third_party/ocsf-schema/README.md). */
export function officialSchema(): OcsfDefinitions {
  schema ??= JSON.parse(readFileSync(OFFICIAL_SCHEMA_URL, 'utf8')) as OcsfDefinitions;
  return schema;
}

export function officialCatalog(): OcsfCatalog {
  catalog ??= createCatalog(officialSchema());
  return catalog;
}
