// The live mappings and OCSF policies of every organization, held in memory by each
// process that normalizes. No per-event or per-batch database access: a batch asks
// refreshIfStale(), which at most once per refresh interval reads two cheap fingerprints
// and reloads only what changed (a changed definition list; documents only for versions
// not compiled yet). A publish therefore reaches every worker within one interval
// (docs/decisions/0014-normalization-stage.md).
import { connectorFor } from '../../connectors/index.js';
import { streamOf } from '../../connectors/sdk.js';
import { newId } from '../../core/ids.js';
import type { Logger } from '../../platform/logger.js';
import type { OcsfPolicyMode, StageMapping } from '../../pipeline/normalize/stage.js';
import type { CompiledMapping } from '../../pipeline/normalize/types.js';
import type { DefinitionEntry, NormalizationStore } from './store.js';

export interface LiveMapping extends StageMapping {
  /** null: the passthrough of an already-OCSF stream (no definition, no version). */
  definitionId: string | null;
  /** The version's document (what a pass thread compiles for itself). */
  document: Record<string, unknown>;
}

export interface Resolution {
  /** The live mapping that applies, if any. */
  mapping: LiveMapping | undefined;
  /** True when a definition exists for the stream (the organization's or a built-in one). */
  known: boolean;
}

export type RegistryStore = Pick<
  NormalizationStore,
  'fingerprints' | 'definitions' | 'documents' | 'policies' | 'createDefinition'
> &
  Partial<Pick<NormalizationStore, 'ocsfStreams'>>;

export interface RegistryDeps {
  store: RegistryStore;
  /** compileMapping(document, ocsfCatalog()); throws on an invalid document. */
  compile: (document: Record<string, unknown>) => CompiledMapping;
  /** ocsfPassthrough(ocsfCatalog()): the mapping of already-OCSF streams; without it they have none. */
  passthrough?: CompiledMapping;
  logger: Logger;
  refreshMs: number;
  /** Monotonic milliseconds (tests move it). */
  nowMs?: () => number;
  /** Wall clock for created rows. */
  now?: () => Date;
}

interface Entry {
  definitionId: string;
  mapping: LiveMapping | undefined;
}

interface Snapshot {
  /** By `${organization_id ?? 0}\u0000${platform}\u0000${stream}`. */
  definitions: Map<string, Entry>;
  policies: Map<number, OcsfPolicyMode>;
  /** By `${integration_id}\u0000${stream}`: the streams integrations declare as already OCSF. */
  ocsf: Set<string>;
}

const keyOf = (organizationId: number | null, platform: string, stream: string) =>
  `${organizationId ?? 0}\u0000${platform}\u0000${stream}`;

export function createMappingRegistry(deps: RegistryDeps) {
  const { store, compile, logger, refreshMs } = deps;
  const nowMs = deps.nowMs ?? (() => performance.now());
  const now = deps.now ?? (() => new Date());
  // Compiled once per version (documents never change); null: the document did not compile.
  const compiled = new Map<string, CompiledMapping | null>();
  const documents = new Map<string, Record<string, unknown>>();
  const created = new Set<string>();
  let snapshot: Snapshot = { definitions: new Map(), policies: new Map(), ocsf: new Set() };
  const passthrough: LiveMapping | undefined = deps.passthrough && {
    definitionId: null,
    versionId: null,
    compiled: deps.passthrough,
    document: {},
    passthrough: true,
  };
  let seen: { mappings?: string; policies?: string } = {};
  let checkedAt = -Infinity;
  let started = 0;
  let applied = 0;
  let inFlight: Promise<void> | undefined;

  function compileVersion(versionId: string, document: Record<string, unknown>): CompiledMapping | null {
    try {
      return compile(document);
    } catch (err) {
      // The API validates documents on publish, so this means a catalog or compiler change.
      logger.error(
        { err, versionId },
        'live mapping version does not compile; its events are quarantined as no_mapping',
      );
      return null;
    }
  }

  async function loadDefinitions(): Promise<Map<string, Entry>> {
    const rows: DefinitionEntry[] = await store.definitions();
    const live = new Set(rows.flatMap((r) => (r.live_version_id ? [r.live_version_id] : [])));
    // A local view: an overlapping refresh may prune the shared cache while this one awaits.
    const local = new Map<string, CompiledMapping | null>();
    for (const id of live) if (compiled.has(id)) local.set(id, compiled.get(id)!);
    for (const doc of await store.documents([...live].filter((id) => !local.has(id)))) {
      const c = compiled.has(doc.id) ? compiled.get(doc.id)! : compileVersion(doc.id, doc.document);
      local.set(doc.id, c);
      compiled.set(doc.id, c);
      documents.set(doc.id, doc.document);
    }
    for (const id of compiled.keys()) if (!live.has(id)) compiled.delete(id);
    for (const id of documents.keys()) if (!live.has(id)) documents.delete(id);
    const definitions = new Map<string, Entry>();
    for (const r of rows) {
      const c = r.live_version_id ? local.get(r.live_version_id) : undefined;
      definitions.set(keyOf(r.organization_id, r.platform, r.stream), {
        definitionId: r.id,
        mapping:
          c && r.live_version_id
            ? {
                definitionId: r.id,
                versionId: r.live_version_id,
                compiled: c,
                document: documents.get(r.live_version_id)!,
              }
            : undefined,
      });
    }
    return definitions;
  }

  async function refresh(): Promise<void> {
    // Refreshes may overlap (a forced one inside a request's transaction never waits for
    // another): only a newer one than the last applied may replace the snapshot.
    const generation = ++started;
    const fingerprints = await store.fingerprints();
    const definitions = fingerprints.mappings !== seen.mappings ? await loadDefinitions() : undefined;
    const policies =
      fingerprints.policies !== seen.policies
        ? new Map((await store.policies()).map((p) => [p.organization_id, p.mode] as const))
        : undefined;
    // A few rows (only integrations that declare ocsf_streams), read whole each interval.
    const ocsf = new Set<string>();
    for (const r of (await store.ocsfStreams?.()) ?? []) {
      const streams: unknown[] = Array.isArray(r.ocsf_streams) ? r.ocsf_streams : [];
      for (const s of streams) if (typeof s === 'string') ocsf.add(`${r.id}\u0000${s}`);
    }
    checkedAt = nowMs();
    if (generation < applied) return;
    applied = generation;
    snapshot = { definitions: definitions ?? snapshot.definitions, policies: policies ?? snapshot.policies, ocsf };
    seen = fingerprints;
  }

  return {
    /** Reloads if the last check is older than the refresh interval; concurrent callers share one reload. */
    async refreshIfStale(): Promise<void> {
      if (nowMs() - checkedAt < refreshMs) return;
      inFlight ??= refresh().finally(() => {
        inFlight = undefined;
      });
      await inFlight;
    },

    /**
     * Reloads now, on the caller's connection (it may run inside the caller's transaction):
     * a version published just before is then used.
     */
    async refresh(): Promise<void> {
      await refresh();
    },

    /**
     * The organization's own live mapping for the stream, else the built-in one, else (a stream
     * its connector or the integration's config declares already OCSF) the passthrough.
     */
    resolve(organizationId: number, platform: string, stream: string, integrationId?: number): Resolution {
      const own = snapshot.definitions.get(keyOf(organizationId, platform, stream));
      const builtin = snapshot.definitions.get(keyOf(null, platform, stream));
      // An own definition without a live version (created for the user to fill in) does not hide a built-in one.
      let mapping = own?.mapping ?? builtin?.mapping;
      // A stream whose records are another platform's (CloudTrail read from S3) takes that
      // platform's mapping, the organization's own first, when it has none of its own.
      const connector = mapping ? undefined : connectorFor(platform);
      const of = connector ? streamOf(connector, stream)?.mappingOf : undefined;
      if (of) {
        const alias =
          snapshot.definitions.get(keyOf(organizationId, of.platform, of.stream))?.mapping ??
          snapshot.definitions.get(keyOf(null, of.platform, of.stream))?.mapping;
        if (alias) return { mapping: alias, known: true };
      }
      if (!mapping && passthrough) {
        const declared =
          (connector !== undefined && streamOf(connector, stream)?.ocsf === true) ||
          (integrationId !== undefined && snapshot.ocsf.has(`${integrationId}\u0000${stream}`));
        if (declared) mapping = passthrough;
      }
      // known as without it: the stream's definition is still created, so a mapping can be published to win.
      const known = own !== undefined || builtin !== undefined || created.has(keyOf(organizationId, platform, stream));
      return { mapping, known };
    },

    policy(organizationId: number): OcsfPolicyMode {
      return snapshot.policies.get(organizationId) ?? 'strict';
    },

    /**
     * Creates (once per process) the organization's definition of a stream nobody has a
     * mapping for, so it is listed in the mappings API and a version can be published.
     */
    async ensureDefinition(organizationId: number, platform: string, stream: string): Promise<void> {
      const key = keyOf(organizationId, platform, stream);
      if (created.has(key)) return;
      await store.createDefinition(
        { id: newId(), organization_id: organizationId, platform, stream, name: `${platform} / ${stream}` },
        now(),
      );
      created.add(key);
    },
  };
}

export type MappingRegistry = ReturnType<typeof createMappingRegistry>;
