// An organization's live enrichment for the pass (EnrichmentJob): its enabled policies and
// what each looks up in, read from the database when they changed (checked at most every
// poll, as routes and mappings are) and the bytes of table versions and uploaded databases
// loaded once per version into shared memory, which every pass thread reads without a copy.
import type { EnrichmentJob, ResourceRef } from '../../pipeline/enrich/live.js';
import type { PolicyDefinition } from '../../pipeline/enrich/policy.js';
import { tableBytes } from './common.js';
import { BUILTIN_GEOIP_ID } from './sources.js';
import type { EnrichmentStore, PolicyRow, SourceRow } from './store.js';

const MAX_BLOBS = 32;

function shared(bytes: Uint8Array): Uint8Array {
  const view = new Uint8Array(new SharedArrayBuffer(bytes.length));
  view.set(bytes);
  return view;
}

export function createEnrichmentCache(deps: {
  store: Pick<EnrichmentStore, 'orgPolicies' | 'getSource' | 'tablesOf' | 'versionData' | 'sourceBlob'>;
  pollMs: number;
}) {
  const { store } = deps;
  const cache = new Map<number, { checkedAt: number; job: EnrichmentJob | undefined }>();
  const blobs = new Map<string, Promise<Uint8Array | undefined>>();

  function blob(key: string, load: () => Promise<Uint8Array | undefined>): Promise<Uint8Array | undefined> {
    let found = blobs.get(key);
    if (!found) {
      found = load().catch(() => undefined);
      if (blobs.size >= MAX_BLOBS) blobs.delete(blobs.keys().next().value!);
      blobs.set(key, found);
    }
    return found;
  }

  /** Drops the bytes no organization's current job holds (old table versions): memory follows what is live. */
  function forgetUnused(): void {
    const used = new Set<string>();
    for (const { job } of cache.values()) for (const key of Object.keys(job?.blobs ?? {})) used.add(key);
    for (const key of blobs.keys()) if (!used.has(key.slice(key.indexOf(':') + 1))) blobs.delete(key);
  }

  async function tableRef(organizationId: number, tableId: string, job: EnrichmentJob): Promise<ResourceRef> {
    const table = (await store.tablesOf(organizationId, [tableId]))[0];
    if (!table?.live_version_id) return { kind: 'none' };
    const versionId = table.live_version_id;
    const bytes = await blob(`table:${versionId}`, async () => {
      const stored = await store.versionData(versionId);
      return stored === undefined ? undefined : shared(await tableBytes(stored));
    });
    if (!bytes) return { kind: 'none' };
    job.blobs[versionId] = bytes;
    return { kind: 'table', blob: versionId };
  }

  async function sourceRef(
    organizationId: number,
    source: SourceRow | undefined,
    job: EnrichmentJob,
  ): Promise<ResourceRef> {
    if (!source || !source.enabled || (source.organization_id !== organizationId && !source.shared))
      return { kind: 'none' };
    if (source.kind === 'http') return { kind: 'http', source_id: source.id };
    if (source.kind === 'feed')
      return source.table_id ? tableRef(source.organization_id, source.table_id, job) : { kind: 'none' };
    const key = `${source.id}:${source.version}`;
    const bytes = await blob(`mmdb:${key}`, async () => {
      const b64 = await store.sourceBlob(source.id);
      return b64 ? shared(new Uint8Array(Buffer.from(b64, 'base64'))) : undefined;
    });
    if (!bytes) return { kind: 'none' };
    job.blobs[key] = bytes;
    return { kind: 'mmdb', blob: key };
  }

  async function load(organizationId: number, policies: PolicyRow[]): Promise<EnrichmentJob | undefined> {
    const live = policies.filter((p) => p.enabled);
    if (live.length === 0) return undefined;
    const job: EnrichmentJob = { fingerprint: '', policies: [], refs: {}, blobs: {} };
    const parts: string[] = [];
    for (const p of live) {
      const definition = p.definition as unknown as PolicyDefinition;
      job.policies.push({ id: p.id, version: p.version, definition });
      const lookup = definition.lookup;
      let ref: ResourceRef;
      if ('table_id' in lookup) ref = await tableRef(organizationId, lookup.table_id, job);
      else if (lookup.source_id === BUILTIN_GEOIP_ID) ref = { kind: 'geoip' };
      else ref = await sourceRef(organizationId, await store.getSource(lookup.source_id), job);
      job.refs[p.id] = ref;
      parts.push(`${p.id}@${p.version}:${JSON.stringify(ref)}`);
    }
    job.fingerprint = parts.join('|');
    return job;
  }

  return {
    /** The organization's live enrichment, or undefined when it has no enabled policy. */
    async get(organizationId: number): Promise<EnrichmentJob | undefined> {
      const now = Date.now();
      const cached = cache.get(organizationId);
      if (cached && now - cached.checkedAt < deps.pollMs) return cached.job;
      const job = await load(organizationId, await store.orgPolicies(organizationId));
      // Same fingerprint: keep the old object (threads key their compiled form by it anyway).
      const kept = cached?.job && job && cached.job.fingerprint === job.fingerprint ? cached.job : job;
      cache.set(organizationId, { checkedAt: now, job: kept });
      if (kept !== cached?.job) forgetUnused();
      return kept;
    },
  };
}

export type EnrichmentCache = ReturnType<typeof createEnrichmentCache>;
