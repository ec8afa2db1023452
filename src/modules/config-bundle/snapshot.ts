// One organization's configuration read through the modules' own services, keyed by name,
// with ids kept aside (ids are not portable) and every secret replaced by a marker.
import type { Scope } from '../../core/scope.js';
import type { CollectorConfigService } from '../collector-config/service.js';
import type { DestinationService } from '../destinations/service.js';
import type { PoliciesService } from '../enrichment/policies.js';
import type { SourcesService } from '../enrichment/sources.js';
import type { TablesService } from '../enrichment/tables.js';
import type { IntegrationService } from '../integrations/service.js';
import type { MappingService } from '../mappings/service.js';
import type { RoutingService } from '../routing/service.js';
import type { RulesService } from '../detections/rules.js';
import type { QueriesService } from '../search/queries.js';
import type { SchedulesService } from '../search/schedules.js';
import { analyticsSnapshot } from './snapshot-analytics.js';
import { MAX_MAPPING_VERSIONS, MAX_MMDB_BASE64, type ConfigBundle } from './schema.js';

type Json = Record<string, unknown>;
type Bundle = ConfigBundle;

/** What the bundle reads and writes of each module: their own services, narrowed. */
export interface BundlePorts {
  integrations: Pick<IntegrationService, 'list' | 'get' | 'create' | 'update'>;
  secretFieldsOf(platform: string): string[];
  mappings: Pick<MappingService, 'list' | 'get' | 'versions' | 'version' | 'ensureOwn' | 'publish' | 'rollback'>;
  destinations: Pick<DestinationService, 'list' | 'credentialFields' | 'create' | 'update' | 'patchCredential'>;
  routes: Pick<RoutingService, 'list' | 'create' | 'update'>;
  tables: Pick<TablesService, 'list' | 'get' | 'create' | 'addVersion'>;
  sources: Pick<SourcesService, 'list' | 'exportable' | 'create' | 'update'>;
  policies: Pick<PoliciesService, 'list' | 'create' | 'addVersion' | 'enable'>;
  collectorSettings: Pick<CollectorConfigService, 'config' | 'updateConfig'>;
  rules: Pick<RulesService, 'list' | 'create' | 'update'>;
  queries: Pick<QueriesService, 'list' | 'create' | 'update'>;
  schedules: Pick<SchedulesService, 'list' | 'create' | 'remove'>;
  organizationName(id: number): Promise<string>;
  weirVersion: string;
  now(): Date;
}

/** Ids of the organization's objects by name (and global destinations'), for the import. */
export interface Current {
  bundle: Bundle;
  ids: {
    integration: Map<string, number>;
    mapping: Map<string, string>;
    destination: Map<string, string>;
    globalDestination: Map<string, string>;
    route: Map<string, string>;
    table: Map<string, string>;
    /** Sources a policy may name: the organization's own, shared ones, the built-in GeoIP. */
    source: Map<string, string>;
    /** The organization's own sources. */
    ownSource: Map<string, string>;
    policy: Map<string, string>;
    rule: Map<string, string>;
    savedQuery: Map<string, string>;
    schedule: Map<string, string>;
  };
}

const PAGE = 500;

export async function all<T>(
  page: (p: { limit: number; offset: number }) => Promise<{ items: T[]; total: number }>,
): Promise<T[]> {
  const out: T[] = [];
  for (let offset = 0; ; offset += PAGE) {
    const { items, total } = await page({ limit: PAGE, offset });
    out.push(...items);
    if (items.length < PAGE || out.length >= total) return out;
  }
}

export const secretRef = (kind: string, name: string, field: string) => `${kind}:${name}:${field}`;
const marker = (ref: string) => ({ $secret: ref });

function getPath(o: Json, path: string[]): unknown {
  let at: unknown = o;
  for (const p of path) at = typeof at === 'object' && at !== null ? (at as Json)[p] : undefined;
  return at;
}
export function setPath(o: Json, path: string[], value: unknown): void {
  let at = o;
  for (const p of path.slice(0, -1)) {
    if (typeof at[p] !== 'object' || at[p] === null) at[p] = {};
    at = at[p] as Json;
  }
  at[path[path.length - 1]!] = value;
}

/** The integration config with each configured secret replaced by its marker. */
function integrationConfig(ports: BundlePorts, name: string, platform: string, config: Json): Json {
  const copy = structuredClone(config);
  for (const field of ports.secretFieldsOf(platform)) {
    const path = field.split('.');
    const v = getPath(copy, path);
    if (v !== undefined && v !== null) setPath(copy, path, marker(secretRef('integration', name, field)));
  }
  return copy;
}

function credentialMarkers(name: string, shape: Record<string, string[] | null> | null) {
  if (!shape) return null;
  const out: Record<string, { $secret: string } | Record<string, { $secret: string }>> = {};
  for (const [field, keys] of Object.entries(shape)) {
    out[field] =
      keys === null
        ? marker(secretRef('destination', name, field))
        : Object.fromEntries(keys.map((k) => [k, marker(secretRef('destination', name, `${field}.${k}`))]));
  }
  return out;
}

export async function snapshot(ports: BundlePorts, scope: Scope, organizationId: number): Promise<Current> {
  const ids: Current['ids'] = {
    integration: new Map(),
    mapping: new Map(),
    destination: new Map(),
    globalDestination: new Map(),
    route: new Map(),
    table: new Map(),
    source: new Map(),
    ownSource: new Map(),
    policy: new Map(),
    rule: new Map(),
    savedQuery: new Map(),
    schedule: new Map(),
  };
  const integrationRows = await Promise.all(
    (await all((p) => ports.integrations.list(scope, { organizationId }, p))).map((r) =>
      ports.integrations.get(scope, r.id),
    ),
  );
  const integrationName = new Map(integrationRows.map((r) => [r.id, r.name]));
  const integrations = integrationRows.map((r) => {
    ids.integration.set(r.name, r.id);
    return {
      name: r.name,
      platform: r.platform,
      is_active: r.is_active,
      parent: r.parent_id === null ? null : (integrationName.get(r.parent_id) ?? null),
      config: integrationConfig(ports, r.name, r.platform, r.config),
    };
  });

  const mappingRows = await Promise.all(
    (await all((p) => ports.mappings.list(scope, { organizationId, builtin: false }, p))).map((r) =>
      ports.mappings.get(scope, r.id),
    ),
  );
  const mappings: Bundle['mappings'] = [];
  for (const m of mappingRows) {
    ids.mapping.set(m.name, m.id);
    // Every version, oldest first, with its document (the live one is numbered `version`).
    let summaries = (await all((p) => ports.mappings.versions(scope, m.id, p))).sort((a, b) => a.version - b.version);
    if (summaries.length > MAX_MAPPING_VERSIONS) {
      // The newest ones, and the live one when it is older.
      const live = summaries.find((v) => v.is_live);
      summaries = summaries.slice(-MAX_MAPPING_VERSIONS);
      if (live && !summaries.includes(live)) summaries = [live, ...summaries.slice(1)];
    }
    const versions = [];
    for (const v of summaries) {
      const full = await ports.mappings.version(scope, m.id, v.id);
      versions.push({ version: full.version, comment: full.comment, document: full.document as Json });
    }
    mappings.push({
      name: m.name,
      platform: m.platform,
      stream: m.stream,
      description: m.description,
      version: m.live_version?.version ?? null,
      document: (m.document as Json | null) ?? null,
      versions,
    });
  }

  const destinationName = new Map<string, string>();
  const destinations: Bundle['destinations'] = [];
  for (const d of await all((p) => ports.destinations.list(scope, {}, p))) {
    destinationName.set(d.id, d.name);
    if (d.organization_id === null) {
      ids.globalDestination.set(d.name, d.id);
      continue;
    }
    if (d.organization_id !== organizationId) continue;
    ids.destination.set(d.name, d.id);
    const shape = d.has_credential ? await ports.destinations.credentialFields(scope, d.id) : null;
    destinations.push({
      name: d.name,
      type: d.type,
      description: d.description,
      config: d.config,
      delivery: d.delivery as Json,
      enabled: d.enabled,
      credential: credentialMarkers(d.name, shape),
    });
  }

  const routes = (await ports.routes.list(scope, organizationId)).map((r) => {
    ids.route.set(r.name, r.id);
    return {
      name: r.name,
      description: r.description,
      position: r.position,
      enabled: r.enabled,
      condition: r.condition ?? null,
      transforms: (r.transforms ?? []) as unknown[],
      destinations: r.destination_ids.map((id) => destinationName.get(id) ?? id),
      final: r.final,
      version: r.version,
    };
  });

  // Sources first: a feed's table is filled by the feed, so it travels with its source, not as a table.
  const sourceRows = await ports.sources.list(scope, organizationId);
  const feedTables = new Set(
    sourceRows.filter((s) => s.organization_id === organizationId && s.table_id !== null).map((s) => s.table_id!),
  );
  const tableName = new Map<string, string>();
  const enrichment_tables: Bundle['enrichment_tables'] = [];
  for (const t of await ports.tables.list(scope, organizationId)) {
    tableName.set(t.id, t.name);
    if (feedTables.has(t.id)) {
      ids.table.set(t.name, t.id);
      continue;
    }
    const full = await ports.tables.get(scope, t.id, { limit: 1_000_000, offset: 0 });
    ids.table.set(full.name, full.id);
    tableName.set(full.id, full.name);
    enrichment_tables.push({
      name: full.name,
      description: full.description,
      key_column: full.key_column,
      match: full.match,
      version: full.version,
      rows: full.rows as Json[],
    });
  }
  const sourceName = new Map<string, string>();
  const enrichment_sources: NonNullable<Bundle['enrichment_sources']> = [];
  for (const s of sourceRows) {
    sourceName.set(s.id, s.name);
    ids.source.set(s.name, s.id);
    // Only the organization's own: not the built-in GeoIP, not another organization's shared source.
    if (s.organization_id !== organizationId) continue;
    ids.ownSource.set(s.name, s.id);
    const extra = await ports.sources.exportable(scope, s.id);
    enrichment_sources.push({
      name: s.name,
      description: s.description,
      kind: s.kind as 'mmdb' | 'http' | 'feed',
      config: s.config,
      enabled: s.enabled,
      shared: s.shared,
      credential:
        extra.credentialHeader === null
          ? null
          : { header: extra.credentialHeader, value: marker(secretRef('enrichment_source', s.name, 'credential')) },
      ...(s.kind === 'feed' ? { table: s.table_id === null ? null : (tableName.get(s.table_id) ?? null) } : {}),
      ...(s.kind === 'mmdb'
        ? {
            mmdb_base64:
              extra.mmdbBase64 !== null && extra.mmdbBase64.length <= MAX_MMDB_BASE64 ? extra.mmdbBase64 : null,
          }
        : {}),
    });
  }
  const enrichment_policies = (await ports.policies.list(scope, organizationId)).map((p) => {
    ids.policy.set(p.name, p.id);
    const lookup =
      'table_id' in p.lookup
        ? { table: tableName.get(p.lookup.table_id!) ?? p.lookup.table_id! }
        : { source: sourceName.get(p.lookup.source_id!) ?? p.lookup.source_id ?? '' };
    return {
      name: p.name,
      enabled: p.enabled,
      version: p.version,
      description: p.description,
      order: p.order,
      condition: p.condition ?? null,
      key: p.key,
      lookup,
      output: p.output,
      on_miss: p.on_miss,
      ...(p.defaults ? { defaults: p.defaults } : {}),
      ...(p.overwrite !== undefined ? { overwrite: p.overwrite } : {}),
    };
  });

  const bundle: Bundle = {
    format: 'weir.config-bundle',
    version: 1,
    weir_version: ports.weirVersion,
    exported_at: ports.now().toISOString(),
    organization: { name: await ports.organizationName(organizationId) },
    integrations,
    mappings,
    destinations,
    routes,
    enrichment_tables,
    enrichment_sources,
    enrichment_policies,
    ...(await analyticsSnapshot(ports, scope, organizationId, ids, integrationName)),
    collector_settings: (await ports.collectorSettings.config()).settings as Record<string, number | boolean>,
  };
  return { bundle, ids };
}
