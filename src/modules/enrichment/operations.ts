// The family's read-side and tool operations: dry-run (local rules only; external ones come
// back skipped), the live series per policy (three hours), activity, the enrichers with
// their config schemas, the fields usable as keys, and the source test (one real call).
import type { Scope } from '../../core/scope.js';
import { errors } from '../../core/errors.js';
import { inScope, scopeOf } from '../../core/scope.js';
import type { Actor } from '../../core/actor.js';
import { ocsfCatalog } from '../../ocsf/index.js';
import type { OcsfCatalog } from '../../ocsf/types.js';
import type { NormalizedRecord } from '../../pipeline/envelope.js';
import { fetchFeed, parseFeed, type FeedConfig } from '../../pipeline/enrich/feeds.js';
import { testHttpSource, type HttpSourceConfig } from '../../pipeline/enrich/http-source.js';
import { openMmdb } from '../../pipeline/enrich/mmdb.js';
import {
  compileEnrichment,
  type PolicyDefinition,
  type PolicyLookup,
  type PolicySpec,
} from '../../pipeline/enrich/policy.js';
import { buildTable } from '../../pipeline/enrich/table.js';
import type { NetPolicy } from '../../platform/net/policy.js';
import { loadTableData, targetOrganization } from './common.js';
import { ENRICHERS } from './enrichers.js';
import { definitionOf, type PoliciesService, type PolicyInput } from './policies.js';
import { BUILTIN_GEOIP_ID, type SourcesService } from './sources.js';
import type { EnrichmentStore } from './store.js';

export const METRICS_WINDOW_MAX_MINUTES = 180;
export const MAX_DRY_RUN_EVENTS = 200;

export interface DryRunInput {
  organization_id?: number;
  /** OCSF events to enrich; absent: the organization's recent samples, normalized by the live mappings. */
  events?: Record<string, unknown>[];
  /** Draft definitions to try instead of the saved policies. */
  policies?: Omit<PolicyInput, 'organization_id'>[];
  limit?: number;
}

export interface OperationsDeps {
  store: EnrichmentStore;
  sources: SourcesService;
  policies: PoliciesService;
  now: () => Date;
  net: NetPolicy;
  /** The organization's recent events, normalized by its live mappings (raw samples). */
  samples(organizationId: number, limit: number): Promise<Record<string, unknown>[]>;
  /** Classes the organization's live mappings produce. */
  classesOf(organizationId: number): Promise<number[]>;
}

/** Scalar attribute paths of a class, up to a depth (key sources). */
function scalarPaths(
  catalog: OcsfCatalog,
  classUid: number,
  depth = 3,
): { path: string; type: string; observable?: number }[] {
  const out: { path: string; type: string; observable?: number }[] = [];
  const cls = catalog.classByUid(classUid);
  if (!cls) return out;
  const walk = (
    attrs: Readonly<
      Record<string, { name: string; type: string; objectType?: string; isArray: boolean; observable?: number }>
    >,
    prefix: string,
    level: number,
    seen: Set<string>,
  ) => {
    for (const a of Object.values(attrs)) {
      const path = prefix ? `${prefix}.${a.name}` : a.name;
      if (a.type === 'object_t') {
        if (level >= depth || a.isArray || !a.objectType || seen.has(a.objectType)) continue;
        const obj = catalog.object(a.objectType);
        if (obj) walk(obj.attributes, path, level + 1, new Set([...seen, a.objectType]));
      } else if (!a.isArray && a.type !== 'json_t' && !a.name.endsWith('_dt')) {
        out.push({ path, type: a.type, ...(a.observable !== undefined ? { observable: a.observable } : {}) });
      }
    }
  };
  walk(cls.attributes, '', 1, new Set());
  return out;
}

const KEY_TYPES = new Set([
  'ip_t',
  'hostname_t',
  'email_t',
  'username_t',
  'url_t',
  'file_hash_t',
  'mac_t',
  'subnet_t',
  'string_t',
  'resource_uid_t',
  'file_name_t',
  'process_name_t',
  'port_t',
]);

export function createOperations(deps: OperationsDeps) {
  const { store } = deps;
  const catalog = ocsfCatalog();

  /** Local lookups for a dry run: tables and databases; HTTP sources are not called (skipped). */
  async function localLookup(organizationId: number, def: PolicyDefinition): Promise<PolicyLookup | undefined> {
    const lookup = def.lookup;
    if ('table_id' in lookup) {
      const table = (await store.tablesOf(organizationId, [lookup.table_id]))[0];
      const v = table && (await store.tableVersion(table.id, table.version));
      return v ? buildTable(await loadTableData(v.data)) : undefined;
    }
    if (lookup.source_id === BUILTIN_GEOIP_ID) return { get: deps.sources.geoipLookup };
    const source = await store.getSource(lookup.source_id);
    if (!source || (source.organization_id !== organizationId && !source.shared)) return undefined;
    if (source.kind === 'http') return { external: true, answer: () => undefined, want: () => undefined };
    if (source.kind === 'feed') {
      const table = source.table_id ? (await store.tablesOf(source.organization_id, [source.table_id]))[0] : undefined;
      const v = table && (await store.tableVersion(table.id, table.version));
      return v ? buildTable(await loadTableData(v.data)) : undefined;
    }
    const blob = await store.sourceBlob(source.id);
    return blob ? openMmdb(new Uint8Array(Buffer.from(blob, 'base64'))) : undefined;
  }

  return {
    async dryRun(actor: Actor, input: DryRunInput) {
      const organizationId = await targetOrganization(store, scopeOf(actor), input.organization_id);
      const limit = Math.min(input.limit ?? 20, MAX_DRY_RUN_EVENTS);
      const events = input.events ?? (await deps.samples(organizationId, limit));
      const drafts = input.policies?.map((d) => definitionOf(d, d.name));
      const specs: PolicySpec[] = drafts
        ? drafts.map((d, i) => ({ id: `draft-${i}`, version: 0, definition: d }))
        : (await store.orgPolicies(organizationId))
            .filter((p) => p.enabled)
            .map((p) => ({ id: p.id, version: p.version, definition: p.definition as unknown as PolicyDefinition }));
      if (drafts) for (const d of drafts) await deps.policies.check(organizationId, d);
      const lookups = new Map<string, PolicyLookup | undefined>();
      for (const s of specs) lookups.set(s.id, await localLookup(organizationId, s.definition));
      const enrichment = compileEnrichment(specs, (s) => lookups.get(s.id), catalog);
      const items = events.slice(0, limit).map((event, index) => {
        const record: NormalizedRecord = {
          id: `dry-run-${index}`,
          organization_id: organizationId,
          integration_id: 0,
          stream: '',
          received_at: deps.now().toISOString(),
          mapping_version_id: '',
          valid: true,
          ocsf: structuredClone(event),
        };
        const counters = enrichment.apply([record]);
        const outcomes = counters.map((c) => {
          const spec = specs.find((s) => s.id === c.policy_id)!;
          const outcome =
            c.seen === 0
              ? 'not_matched'
              : c.unanswered > 0
                ? 'skipped'
                : c.errors > 0
                  ? 'error'
                  : c.hits > 0
                    ? 'hit'
                    : 'miss';
          return {
            policy_id: c.policy_id,
            name: spec.definition.name,
            outcome,
            ...(outcome === 'skipped' ? { reason: 'calls an external service: use the source test' } : {}),
          };
        });
        return { index, input: event, output: record.ocsf, policies: outcomes };
      });
      return { organization_id: organizationId, source: input.events ? 'events' : 'samples', items };
    },

    async metrics(scope: Scope, q: { organization_id?: number; policy_id?: string; window_minutes?: number }) {
      const window = q.window_minutes ?? 60;
      if (window > METRICS_WINDOW_MAX_MINUTES) {
        throw errors.validation(
          `window_minutes is at most ${METRICS_WINDOW_MAX_MINUTES}: the live series keeps three hours`,
          {
            errors: [{ location: 'querystring/window_minutes', message: `must be <= ${METRICS_WINDOW_MAX_MINUTES}` }],
          },
        );
      }
      if (q.organization_id !== undefined && !inScope(scope, q.organization_id)) throw errors.notFound('Organization');
      if (q.policy_id !== undefined) {
        const p = await store.getPolicy(q.policy_id);
        if (!p || !inScope(scope, p.organization_id)) throw errors.notFound('Enrichment policy');
      }
      const now = deps.now();
      const since = new Date(Math.floor(now.getTime() / 60_000) * 60_000 - (window - 1) * 60_000);
      const rows = await store.metrics(scope, since, q.organization_id, q.policy_id);
      const byPolicy = new Map<
        string,
        { policy_id: string; organization_id: number; totals: Record<string, number>; series: unknown[] }
      >();
      for (const r of rows) {
        let p = byPolicy.get(r.policy_id);
        if (!p)
          byPolicy.set(
            r.policy_id,
            (p = {
              policy_id: r.policy_id,
              organization_id: r.organization_id,
              totals: { seen: 0, hits: 0, misses: 0, errors: 0, unanswered: 0, micros: 0 },
              series: [],
            }),
          );
        for (const k of ['seen', 'hits', 'misses', 'errors', 'unanswered', 'micros'] as const) p.totals[k]! += r[k];
        p.series.push({
          minute: r.minute,
          seen: r.seen,
          hits: r.hits,
          misses: r.misses,
          errors: r.errors,
          unanswered: r.unanswered,
          avg_latency_us: r.seen ? Math.round(r.micros / r.seen) : 0,
        });
      }
      const policies = [...byPolicy.values()].map((p) => {
        const { micros, ...totals } = p.totals as Record<string, number> & { micros: number };
        return {
          policy_id: p.policy_id,
          organization_id: p.organization_id,
          ...totals,
          hit_rate: totals.seen ? totals.hits! / totals.seen : null,
          avg_latency_us: totals.seen ? Math.round(micros / totals.seen!) : 0,
          series: p.series,
        };
      });
      return { window_minutes: window, from: since, to: now, policies };
    },

    async activity(scope: Scope, q: { organization_id?: number; limit: number; offset: number }) {
      const { items, total } = await store.activity(scope, { limit: q.limit, offset: q.offset }, q.organization_id);
      return { items, total, limit: q.limit, offset: q.offset };
    },

    enrichers: () => ({ items: [...ENRICHERS] }),

    async keySources(scope: Scope, organizationId?: number) {
      if (organizationId !== undefined && !inScope(scope, organizationId)) throw errors.notFound('Organization');
      const orgs = organizationId !== undefined ? [organizationId] : scope.global ? [] : scope.organizationIds;
      const classes = new Set<number>();
      for (const org of orgs) for (const c of await deps.classesOf(org)) classes.add(c);
      const fields = new Map<string, { path: string; type: string; observable?: number; class_uids: number[] }>();
      for (const uid of [...classes].sort((a, b) => a - b)) {
        for (const f of scalarPaths(catalog, uid)) {
          if (!KEY_TYPES.has(f.type) && f.observable === undefined) continue;
          const known = fields.get(f.path);
          if (known) known.class_uids.push(uid);
          else fields.set(f.path, { ...f, class_uids: [uid] });
        }
      }
      return {
        class_uids: [...classes].sort((a, b) => a - b),
        items: [...fields.values()].sort((a, b) => a.path.localeCompare(b.path)),
      };
    },

    async test(actor: Actor, id: string, key: string | undefined) {
      if (id === BUILTIN_GEOIP_ID) {
        const k = key ?? '8.8.8.8';
        const started = performance.now();
        const row = deps.sources.geoipLookup(k);
        return {
          ok: true,
          kind: 'geoip',
          key: k,
          found: row !== undefined,
          result: row ?? null,
          latency_ms: Math.round(performance.now() - started),
        };
      }
      const source = await deps.sources.owned(actor, id);
      const credential = deps.sources.credentialOf(source);
      if (source.kind === 'http') {
        const k = key ?? String(source.config.test_key ?? '8.8.8.8');
        const r = await testHttpSource(
          {
            id: source.id,
            config: source.config as unknown as HttpSourceConfig,
            ...(credential ? { credential } : {}),
          },
          k,
          { lookup: deps.net.lookup },
        );
        return { kind: 'http', key: k, ...r, found: r.result !== undefined && r.result !== null };
      }
      if (source.kind === 'feed') {
        const started = performance.now();
        const fetched = await fetchFeed({ ...(source.config as unknown as FeedConfig) }, credential, {
          lookup: deps.net.lookup,
          now: () => deps.now().getTime(),
        });
        if (!fetched.ok)
          return {
            ok: false,
            kind: 'feed',
            error: fetched.error,
            ...(fetched.status ? { status: fetched.status } : {}),
            latency_ms: Math.round(performance.now() - started),
          };
        if (!('text' in fetched) || fetched.text === undefined)
          return { ok: true, kind: 'feed', not_modified: true, latency_ms: Math.round(performance.now() - started) };
        const parsed = parseFeed(fetched.text, source.config as unknown as FeedConfig);
        return {
          ok: true,
          kind: 'feed',
          rows: parsed.data.rows.length,
          skipped: parsed.skipped,
          match: parsed.data.match,
          bytes: fetched.bytes,
          latency_ms: Math.round(performance.now() - started),
        };
      }
      const blob = await store.sourceBlob(source.id);
      const k = key ?? '8.8.8.8';
      const started = performance.now();
      const row = blob ? openMmdb(new Uint8Array(Buffer.from(blob, 'base64'))).get(k) : undefined;
      return {
        ok: blob !== null && blob !== undefined,
        kind: 'mmdb',
        key: k,
        found: row !== undefined,
        result: row ?? null,
        latency_ms: Math.round(performance.now() - started),
      };
    },
  };
}

export type EnrichmentOperations = ReturnType<typeof createOperations>;
