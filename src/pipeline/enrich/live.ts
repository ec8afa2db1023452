// An organization's live enrichment as a pass receives it (EnrichmentJob), and its compiled
// form, cached per thread: policies by their fingerprint, tables and uploaded databases by
// their version (a 1,000,000-row table is built once per version in each thread, from the
// bytes the main thread shares with every thread without copying them).
import { ocsfCatalog } from '../../ocsf/index.js';
import type { NormalizedRecord } from '../envelope.js';
import { httpCache } from './http-cache.js';
import { openMmdb } from './mmdb.js';
import { defaultGeoip } from './geoip.js';
import {
  compileEnrichment,
  type CompiledEnrichment,
  type PolicyCounters,
  type PolicyLookup,
  type PolicySpec,
} from './policy.js';
import { buildTable, decodeTable } from './table.js';
import type { Lookup } from './types.js';

/** What a policy looks up in, resolved by the main thread. */
export type ResourceRef =
  /** A table version (or a feed's): `blob` names its bytes in EnrichmentJob.blobs. */
  | { kind: 'table'; blob: string }
  /** The GeoIP database shipped with Weir. */
  | { kind: 'geoip' }
  /** An uploaded MaxMind database (`blob`: source id and version). */
  | { kind: 'mmdb'; blob: string }
  /** An HTTP lookup API: answered from the cache of this thread. */
  | { kind: 'http'; source_id: string }
  /** The table or source is gone or disabled: the policy counts errors. */
  | { kind: 'none' };

export interface EnrichmentJob {
  /** Changes whenever a policy, or the version of what it looks up in, changes. */
  fingerprint: string;
  /** Enabled policies with their live definition. */
  policies: PolicySpec[];
  /** Per policy id. */
  refs: Record<string, ResourceRef>;
  /** Table and database bytes by blob key (shared memory: crossing to a thread copies nothing). */
  blobs: Record<string, Uint8Array>;
}

const MAX_ORGANIZATIONS = 256;
const MAX_LOOKUPS = 32;

/** Per organization, its current compiled enrichment only: an older one (and the table indexes it holds) goes when the fingerprint moves. */
const compiled = new Map<number, { fingerprint: string; enrichment: CompiledEnrichment; uses: string[] }>();
const lookups = new Map<string, Lookup>();

function remember<V>(map: Map<string, V>, max: number, key: string, make: () => V): V {
  let value = map.get(key);
  if (value === undefined) {
    value = make();
    if (map.size >= max) map.delete(map.keys().next().value!);
    map.set(key, value);
  } else {
    // Most recently used last: the oldest goes first.
    map.delete(key);
    map.set(key, value);
  }
  return value;
}

const lookupKey = (ref: { kind: string; blob: string }) => `${ref.kind}:${ref.blob}`;

function resolve(ref: ResourceRef | undefined, blobs: Record<string, Uint8Array>): PolicyLookup | undefined {
  if (!ref) return undefined;
  switch (ref.kind) {
    case 'table':
    case 'mmdb': {
      const bytes = blobs[ref.blob];
      if (!bytes) return undefined;
      const make = ref.kind === 'table' ? () => buildTable(decodeTable(bytes)) : () => openMmdb(bytes);
      return remember(lookups, MAX_LOOKUPS, lookupKey(ref), make);
    }
    case 'geoip':
      return defaultGeoip();
    case 'http': {
      const cache = httpCache();
      const id = ref.source_id;
      return {
        external: true,
        answer: (key) => {
          const a = cache.get(id, key);
          return a === undefined ? undefined : 'hit' in a ? a.hit : null;
        },
        want: (key) => cache.want(id, key),
      };
    }
    default:
      return undefined;
  }
}

/** The compiled enrichment of a job (cached per organization while its fingerprint holds). */
export function compiledEnrichment(organizationId: number, job: EnrichmentJob): CompiledEnrichment {
  const current = compiled.get(organizationId);
  if (current && current.fingerprint === job.fingerprint) return current.enrichment;
  const enrichment = compileEnrichment(job.policies, (spec) => resolve(job.refs[spec.id], job.blobs), ocsfCatalog());
  compiled.delete(organizationId);
  if (compiled.size >= MAX_ORGANIZATIONS) compiled.delete(compiled.keys().next().value!);
  const uses = Object.values(job.refs).flatMap((r) => (r.kind === 'table' || r.kind === 'mmdb' ? [lookupKey(r)] : []));
  compiled.set(organizationId, { fingerprint: job.fingerprint, enrichment, uses });
  // Table indexes no organization's current enrichment uses (older versions) are let go.
  const used = new Set([...compiled.values()].flatMap((c) => c.uses));
  for (const key of lookups.keys()) if (!used.has(key)) lookups.delete(key);
  return enrichment;
}

/** The stage's enrich hook for a job, or undefined when the organization has no live policy. */
export function enrichHook(
  organizationId: number,
  job: EnrichmentJob | undefined,
): ((records: NormalizedRecord[]) => PolicyCounters[]) | undefined {
  if (!job || job.policies.length === 0) return undefined;
  const enrichment = compiledEnrichment(organizationId, job);
  return (records) => enrichment.apply(records);
}

/** External keys the passes of this thread asked for since the last call, by source id. */
export function drainWanted(): [string, string[]][] {
  return [...httpCache().drainWanted()];
}
