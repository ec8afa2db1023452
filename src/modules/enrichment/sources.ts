// Enrichment sources: the GeoIP database shipped with Weir (built in, every organization's),
// uploaded MaxMind databases, HTTP lookup APIs and indicator feeds. A source belongs to an
// organization; sharing it with every organization needs Enterprise (403 otherwise). Only
// the owner changes, tests or deletes it; the credential is sealed and never returned.
import type { Actor } from '../../core/actor.js';
import type { Clock } from '../../core/clock.js';
import type { Credential } from '../../core/credentials.js';
import { AppError, errors } from '../../core/errors.js';
import { newId } from '../../core/ids.js';
import { inScope, scopeOf, type Scope } from '../../core/scope.js';
import type { CredentialCipher } from '../../platform/crypto/credentials.js';
import { validateFeedConfig } from '../../pipeline/enrich/feeds.js';
import { defaultGeoip, GEOIP_ATTRIBUTION, geoipVersion } from '../../pipeline/enrich/geoip.js';
import { validateHttpSourceConfig } from '../../pipeline/enrich/http-source.js';
import { MmdbError, mmdbInfo, openMmdb } from '../../pipeline/enrich/mmdb.js';
import type { SourceKind } from '../../pipeline/enrich/types.js';
import { setAuditTarget } from '../audit/service.js';
import { cleanName, createdBy, nameTaken, refuse, targetOrganization, type Activity, type Problem } from './common.js';
import type { EnrichmentStore, SourceRow } from './store.js';

/** The GeoIP database shipped with Weir: a source every organization's policies may use. */
export const BUILTIN_GEOIP_ID = 'builtin-geoip';

export interface SourceInput {
  organization_id?: number;
  name: string;
  description?: string;
  kind: Exclude<SourceKind, 'geoip'>;
  config?: Record<string, unknown>;
  /** http and feed: a secret header sent with each call ({header, value}). */
  credential?: { header: string; value: string } | null;
  shared?: boolean;
  enabled?: boolean;
  /** mmdb: the database file, base64. */
  mmdb_base64?: string;
}

export type SourcePatch = Partial<Omit<SourceInput, 'organization_id' | 'kind'>>;

export const sourceNotFound = () => errors.notFound('Enrichment source');

export function sourceOut(s: SourceRow) {
  return {
    id: s.id,
    organization_id: s.organization_id,
    name: s.name,
    description: s.description,
    kind: s.kind,
    builtin: false,
    config: s.config,
    has_credential: s.credential !== null,
    shared: s.shared,
    enabled: s.enabled,
    database: s.blob_info,
    table_id: s.table_id,
    status: s.status,
    next_fetch_at: s.next_fetch_at,
    version: s.version,
    created_at: s.created_at,
    updated_at: s.updated_at,
  };
}

export function builtinGeoipOut() {
  return {
    id: BUILTIN_GEOIP_ID,
    organization_id: null,
    name: 'GeoIP (built in)',
    description: `Country and autonomous system of public IP addresses. ${GEOIP_ATTRIBUTION}`,
    kind: 'geoip',
    builtin: true,
    config: {},
    has_credential: false,
    shared: true,
    enabled: true,
    database: geoipVersion(),
    table_id: null,
    status: {},
    next_fetch_at: null,
    version: 1,
    created_at: null,
    updated_at: null,
  };
}

function decodeMmdb(b64: string): { bytes: Uint8Array; info: Record<string, unknown> } {
  const bytes = new Uint8Array(Buffer.from(b64, 'base64'));
  try {
    openMmdb(bytes);
    return { bytes, info: { ...mmdbInfo(bytes), bytes: bytes.length } };
  } catch (e) {
    refuse('enrichment.invalid_source', [
      { path: 'mmdb_base64', message: e instanceof MmdbError ? e.message : 'not a MaxMind database (.mmdb)' },
    ]);
  }
}

/** What a configuration may leave out: an HTTP source's method (GET), a feed's format (auto). */
function withDefaults(kind: string, config: Record<string, unknown>): Record<string, unknown> {
  if (kind === 'http') return { method: 'GET', ...config };
  if (kind === 'feed') return { format: 'auto', ...config };
  return config;
}

function configProblems(kind: string, config: unknown): Problem[] {
  const found = kind === 'http' ? validateHttpSourceConfig(config) : kind === 'feed' ? validateFeedConfig(config) : [];
  return found.map((p) => ({ path: `config${p.at ? `.${p.at.replace(/^\/?/, '')}` : ''}`, message: p.message }));
}

export interface SourcesDeps {
  store: EnrichmentStore;
  clock: Clock;
  activity: Activity;
  cipher: CredentialCipher;
  editions: { isEnterprise(): Promise<boolean> };
  /** Creates the table a new feed fills (the tables service). */
  createFeedTable(actor: Actor, organizationId: number, name: string): Promise<string>;
}

export function createSourcesService(deps: SourcesDeps) {
  const { store, clock, activity, cipher, editions } = deps;

  async function checkSharing(shared: boolean | undefined): Promise<void> {
    if (shared && !(await editions.isEnterprise())) {
      throw new AppError('enrichment.source_sharing_requires_enterprise', {
        detail: 'Sharing a source across organizations needs the Enterprise edition',
      });
    }
  }

  /** A source the caller owns (changes, tests, deletion); a shared source of another organization is not found. */
  async function owned(actor: Actor, id: string): Promise<SourceRow> {
    if (id === BUILTIN_GEOIP_ID)
      throw new AppError('enrichment.builtin_source', {
        detail: 'The built-in GeoIP source cannot be changed or deleted',
      });
    const row = await store.getSource(id);
    if (!row || !inScope(scopeOf(actor), row.organization_id)) throw sourceNotFound();
    setAuditTarget({ type: 'enrichment_sources', id, organizationId: row.organization_id });
    return row;
  }

  function seal(id: string, credential: SourceInput['credential']) {
    if (!credential) return { credential: null, credential_key_id: null };
    const sealed = cipher.seal(id, { header: credential.header, value: credential.value });
    return { credential: sealed.ciphertext, credential_key_id: sealed.keyId };
  }

  function credentialOf(row: SourceRow): { header: string; value: string } | undefined {
    if (!row.credential) return undefined;
    const c: Credential = cipher.open(row.id, { ciphertext: row.credential, keyId: row.credential_key_id });
    return typeof c.header === 'string' && typeof c.value === 'string'
      ? { header: c.header, value: c.value }
      : undefined;
  }

  return {
    owned,

    /** The credential of a source, opened (for calls; never returned). */
    credentialOf,

    /**
     * What the configuration export needs of an owned source beyond its listing: the name of
     * its credential's header (never the value) and an mmdb source's file (base64).
     */
    async exportable(
      scope: Scope,
      id: string,
    ): Promise<{ credentialHeader: string | null; mmdbBase64: string | null }> {
      // Not owned(): a read, so the request's audit target stays the export's.
      const row = await store.getSource(id);
      if (!row || !inScope(scope, row.organization_id)) throw sourceNotFound();
      return {
        credentialHeader: credentialOf(row)?.header ?? null,
        mmdbBase64: row.kind === 'mmdb' ? ((await store.sourceBlob(id)) ?? null) : null,
      };
    },

    async list(scope: Scope, organizationId?: number) {
      const rows = (await store.listSources(scope, organizationId)).map(sourceOut);
      return [builtinGeoipOut(), ...rows];
    },

    async create(actor: Actor, input: SourceInput) {
      const organizationId = await targetOrganization(store, scopeOf(actor), input.organization_id);
      await store.lockOrganization(organizationId);
      const name = cleanName(input.name);
      const config = withDefaults(input.kind, input.config ?? {});
      const problems = configProblems(input.kind, config);
      if (input.kind === 'mmdb' && !input.mmdb_base64)
        problems.push({ path: 'mmdb_base64', message: 'an mmdb source needs the database file (base64)' });
      if (input.kind !== 'mmdb' && input.mmdb_base64)
        problems.push({ path: 'mmdb_base64', message: `a ${input.kind} source takes no database file` });
      if (input.kind === 'mmdb' && input.credential)
        problems.push({ path: 'credential', message: 'an mmdb source takes no credential' });
      if (problems.length > 0) refuse('enrichment.invalid_source', problems);
      await checkSharing(input.shared);
      if (await store.sourceNameExists(organizationId, name)) throw nameTaken('source', name);
      const db = input.kind === 'mmdb' ? decodeMmdb(input.mmdb_base64!) : undefined;
      const id = newId();
      const tableId =
        input.kind === 'feed'
          ? await deps.createFeedTable(actor, organizationId, String(config.table_name ?? `${name} (feed)`))
          : null;
      const now = clock.now();
      await store.insertSource(
        {
          id,
          organization_id: organizationId,
          name,
          description: input.description ?? '',
          kind: input.kind,
          config,
          ...seal(id, input.credential),
          shared: input.shared ?? false,
          enabled: input.enabled ?? true,
          blob: input.mmdb_base64 && db ? input.mmdb_base64 : null,
          blob_info: db?.info ?? null,
          table_id: tableId,
          status: {},
          next_fetch_at: input.kind === 'feed' ? now : null,
          created_by: createdBy(actor),
        },
        now,
      );
      await activity({
        organization_id: organizationId,
        kind: 'source.created',
        subject_type: 'source',
        subject_id: id,
        message: `${input.kind} source "${name}" created`,
        actor,
      });
      setAuditTarget({
        type: 'enrichment_sources',
        id,
        organizationId,
        details: { kind: input.kind, shared: input.shared ?? false, config },
      });
      return sourceOut((await store.getSource(id))!);
    },

    async update(actor: Actor, id: string, patch: SourcePatch) {
      const row = await owned(actor, id);
      await store.lockOrganization(row.organization_id);
      if (patch.config !== undefined) patch = { ...patch, config: withDefaults(row.kind, patch.config) };
      const problems = patch.config !== undefined ? configProblems(row.kind, patch.config) : [];
      if (patch.mmdb_base64 !== undefined && row.kind !== 'mmdb')
        problems.push({ path: 'mmdb_base64', message: `a ${row.kind} source takes no database file` });
      if (patch.credential && row.kind === 'mmdb')
        problems.push({ path: 'credential', message: 'an mmdb source takes no credential' });
      if (problems.length > 0) refuse('enrichment.invalid_source', problems);
      if (patch.shared && !row.shared) await checkSharing(true);
      const name = patch.name !== undefined ? cleanName(patch.name) : row.name;
      if (name !== row.name && (await store.sourceNameExists(row.organization_id, name, id)))
        throw nameTaken('source', name);
      const db = patch.mmdb_base64 !== undefined ? decodeMmdb(patch.mmdb_base64) : undefined;
      await store.updateSource(
        id,
        {
          name,
          ...(patch.description !== undefined ? { description: patch.description } : {}),
          ...(patch.config !== undefined ? { config: patch.config } : {}),
          ...(patch.credential !== undefined ? seal(id, patch.credential) : {}),
          ...(patch.shared !== undefined ? { shared: patch.shared } : {}),
          ...(patch.enabled !== undefined ? { enabled: patch.enabled } : {}),
          ...(db ? { blob: patch.mmdb_base64!, blob_info: db.info } : {}),
          ...(patch.config !== undefined && row.kind === 'feed' ? { next_fetch_at: clock.now() } : {}),
          version: row.version + 1,
        },
        clock.now(),
      );
      const changed = Object.keys(patch).filter((k) => k !== 'credential' && k !== 'mmdb_base64');
      if (patch.credential !== undefined) changed.push('credential');
      if (db) changed.push('database');
      await activity({
        organization_id: row.organization_id,
        kind: 'source.updated',
        subject_type: 'source',
        subject_id: id,
        message: `source "${name}" changed: ${changed.join(', ') || 'nothing'}`,
        actor,
      });
      setAuditTarget({ type: 'enrichment_sources', id, organizationId: row.organization_id, details: { changed } });
      return sourceOut((await store.getSource(id))!);
    },

    async remove(actor: Actor, id: string) {
      const row = await owned(actor, id);
      await store.lockOrganization(row.organization_id);
      const users = await store.policiesUsing(row.shared ? 'all' : [row.organization_id], { source_id: id });
      if (users.length > 0) {
        // Policies of organizations the caller cannot see are counted, never named.
        const visible = users.filter((p) => inScope(scopeOf(actor), p.organization_id));
        const others = users.length - visible.length;
        const names = [
          ...visible.map((p) => `policy "${p.name}"`),
          ...(others > 0 ? [`${others} polic${others > 1 ? 'ies' : 'y'} of other organizations`] : []),
        ];
        throw new AppError('enrichment.in_use', {
          detail: `The source is used by ${names.join(', ')}: disable ${users.length > 1 ? 'them' : 'it'} or publish a version that looks elsewhere first`,
          details: { policies: visible.map((p) => ({ id: p.id, name: p.name })), other_organizations_policies: others },
        });
      }
      await store.deleteSource(id);
      await activity({
        organization_id: row.organization_id,
        kind: 'source.deleted',
        subject_type: 'source',
        subject_id: id,
        message: `source "${row.name}" deleted`,
        actor,
      });
    },

    /** Feeds using a table (a table a feed fills cannot be deleted before the feed). */
    async feedsUsing(tableId: string) {
      const rows = await store.feedsOfTable(tableId);
      return rows.map((r) => ({ id: r.id, name: r.name }));
    },

    /** The built-in GeoIP, for the source test. */
    geoipLookup: (key: string) => defaultGeoip().get(key),
  };
}

export type SourcesService = ReturnType<typeof createSourcesService>;
