// Mapping definitions and their versions, plus the raw samples and policies the mapping
// tools read. A definition is visible when it is built-in (organization_id null) or its
// organization is in the caller's scope; every query goes through `visible(scope)`.
import { sql, type Kysely, type Selectable, type SqlBool } from 'kysely';
import type { OffsetPage } from '../../core/paging.js';
import type { Scope } from '../../core/scope.js';
import { executor } from '../../platform/db/ambient.js';
import type { DB } from '../../platform/db/index.js';
import type { MappingVersionsTable } from '../../platform/db/schema.js';
import { scoped } from '../../platform/db/scope.js';

export interface DefinitionRow {
  id: string;
  organization_id: number | null;
  platform: string;
  stream: string;
  name: string;
  description: string;
  builtin: boolean;
  live_version_id: string | null;
  live_version: number | null;
  live_created_at: Date | null;
  versions_count: number;
  created_at: Date;
  updated_at: Date;
}

export type VersionRow = Selectable<MappingVersionsTable>;
export type VersionSummary = Omit<VersionRow, 'document'>;

export interface DefinitionFilter {
  platform?: string;
  stream?: string;
  builtin?: boolean;
  organizationId?: number;
}

export interface NewVersion {
  id: string;
  definition_id: string;
  document: Record<string, unknown>;
  checksum: string;
  comment: string;
  builtin: boolean;
  created_by: number | null;
}

export interface SampleRow {
  id: string;
  organization_id: number;
  integration_id: number;
  stream: string;
  received_at: Date;
  raw: Record<string, unknown>;
}

const SUMMARY_COLUMNS = [
  'id',
  'definition_id',
  'version',
  'checksum',
  'comment',
  'builtin',
  'created_by',
  'created_at',
] as const;

export function createMappingStore(db: Kysely<DB>) {
  const q = () => executor(db);
  const visible = (scope: Scope) => sql<SqlBool>`(d.organization_id is null or ${scoped(scope, 'd.organization_id')})`;

  function definitions(scope: Scope) {
    return q()
      .selectFrom('mapping_definitions as d')
      .leftJoin('mapping_versions as lv', 'lv.id', 'd.live_version_id')
      .where(visible(scope));
  }

  function selectDefinition(base: ReturnType<typeof definitions>) {
    return base.select((eb) => [
      'd.id',
      'd.organization_id',
      'd.platform',
      'd.stream',
      'd.name',
      'd.description',
      'd.builtin',
      'd.live_version_id',
      'd.created_at',
      'd.updated_at',
      'lv.version as live_version',
      'lv.created_at as live_created_at',
      eb
        .selectFrom('mapping_versions as v')
        .select((c) => c.fn.countAll<number>().as('n'))
        .whereRef('v.definition_id', '=', 'd.id')
        .as('versions_count'),
    ]);
  }

  const asDefinition = (
    r: Omit<DefinitionRow, 'versions_count'> & { versions_count: number | string | bigint | null },
  ): DefinitionRow => ({
    ...r,
    versions_count: Number(r.versions_count ?? 0),
  });

  return {
    async listDefinitions(
      scope: Scope,
      f: DefinitionFilter,
      page: OffsetPage,
    ): Promise<{ items: DefinitionRow[]; total: number }> {
      let base = definitions(scope);
      if (f.platform !== undefined) base = base.where('d.platform', '=', f.platform);
      if (f.stream !== undefined) base = base.where('d.stream', '=', f.stream);
      if (f.builtin === true) base = base.where('d.organization_id', 'is', null);
      if (f.builtin === false) base = base.where('d.organization_id', 'is not', null);
      if (f.organizationId !== undefined) base = base.where('d.organization_id', '=', f.organizationId);
      const [rows, count] = await Promise.all([
        selectDefinition(base)
          .orderBy('d.platform')
          .orderBy('d.stream')
          .orderBy(sql`coalesce(d.organization_id, 0)`)
          .orderBy('d.id')
          .limit(page.limit)
          .offset(page.offset)
          .execute(),
        base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
      ]);
      return { items: rows.map(asDefinition), total: Number(count.n) };
    },

    async getDefinition(scope: Scope, id: string): Promise<DefinitionRow | undefined> {
      const row = await selectDefinition(definitions(scope).where('d.id', '=', id)).executeTakeFirst();
      return row ? asDefinition(row) : undefined;
    },

    /** Row lock on the definition for the rest of the transaction: publications and rollbacks queue up. */
    async lockDefinition(id: string): Promise<void> {
      await q().selectFrom('mapping_definitions').select('id').where('id', '=', id).forUpdate().execute();
    },

    async listVersions(definitionId: string, page: OffsetPage): Promise<{ items: VersionSummary[]; total: number }> {
      const base = q().selectFrom('mapping_versions').where('definition_id', '=', definitionId);
      const [items, count] = await Promise.all([
        base
          .select([...SUMMARY_COLUMNS])
          .orderBy('version', 'desc')
          .limit(page.limit)
          .offset(page.offset)
          .execute(),
        base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
      ]);
      return { items, total: Number(count.n) };
    },

    async getVersion(definitionId: string, versionId: string): Promise<VersionRow | undefined> {
      return q()
        .selectFrom('mapping_versions')
        .selectAll()
        .where('definition_id', '=', definitionId)
        .where('id', '=', versionId)
        .executeTakeFirst();
    },

    async getVersionByNumber(definitionId: string, version: number): Promise<VersionRow | undefined> {
      return q()
        .selectFrom('mapping_versions')
        .selectAll()
        .where('definition_id', '=', definitionId)
        .where('version', '=', version)
        .executeTakeFirst();
    },

    /** The newest version the built-in seeding added, or undefined. */
    async newestBuiltinVersion(definitionId: string): Promise<VersionSummary | undefined> {
      return q()
        .selectFrom('mapping_versions')
        .select([...SUMMARY_COLUMNS])
        .where('definition_id', '=', definitionId)
        .where('builtin', '=', true)
        .orderBy('version', 'desc')
        .limit(1)
        .executeTakeFirst();
    },

    /** Stores the next version number of the definition (callers hold lockDefinition). */
    async insertVersion(v: NewVersion, now: Date): Promise<VersionRow> {
      const max = await q()
        .selectFrom('mapping_versions')
        .select((eb) => eb.fn.max<number | null>('version').as('m'))
        .where('definition_id', '=', v.definition_id)
        .executeTakeFirstOrThrow();
      return q()
        .insertInto('mapping_versions')
        .values({ ...v, version: Number(max.m ?? 0) + 1, document: JSON.stringify(v.document), created_at: now })
        .returningAll()
        .executeTakeFirstOrThrow();
    },

    /** Makes a version live; the new updated_at is what workers poll to reload. */
    async setLive(definitionId: string, versionId: string, now: Date): Promise<void> {
      await q()
        .updateTable('mapping_definitions')
        .set({ live_version_id: versionId, updated_at: now })
        .where('id', '=', definitionId)
        .execute();
    },

    /**
     * Creates the definition of (organization, platform, stream) when missing and returns
     * it; safe when several processes do it at once (the unique key decides, no error).
     */
    async ensureDefinition(
      values: {
        id: string;
        organization_id: number | null;
        platform: string;
        stream: string;
        name: string;
        description: string;
        builtin: boolean;
      },
      now: Date,
    ): Promise<{ id: string; name: string; description: string; live_version_id: string | null; created: boolean }> {
      const inserted = await q()
        .insertInto('mapping_definitions')
        .values({ ...values, created_at: now, updated_at: now })
        .onConflict((oc) => oc.expression(sql`(coalesce(organization_id, 0)), platform, stream`).doNothing())
        .returning('id')
        .executeTakeFirst();
      const row = await q()
        .selectFrom('mapping_definitions')
        .select(['id', 'name', 'description', 'live_version_id'])
        .where(sql<SqlBool>`coalesce(organization_id, 0) = ${values.organization_id ?? 0}`)
        .where('platform', '=', values.platform)
        .where('stream', '=', values.stream)
        .executeTakeFirstOrThrow();
      return { ...row, created: inserted !== undefined };
    },

    async describeDefinition(id: string, name: string, description: string): Promise<void> {
      await q().updateTable('mapping_definitions').set({ name, description }).where('id', '=', id).execute();
    },

    /** The integration in scope, or undefined. */
    async integration(
      scope: Scope,
      id: number,
    ): Promise<{ id: number; organization_id: number; platform: string } | undefined> {
      return q()
        .selectFrom('integrations')
        .select(['id', 'organization_id', 'platform'])
        .where('id', '=', id)
        .where(scoped(scope, 'integrations.organization_id'))
        .executeTakeFirst();
    },

    async samples(
      integrationId: number,
      stream: string | undefined,
      page: OffsetPage,
    ): Promise<{ items: SampleRow[]; total: number }> {
      let base = q().selectFrom('raw_samples').where('integration_id', '=', integrationId);
      if (stream !== undefined) base = base.where('stream', '=', stream);
      const [items, count] = await Promise.all([
        base
          .selectAll()
          .orderBy('received_at', 'desc')
          .orderBy('id', 'desc')
          .limit(page.limit)
          .offset(page.offset)
          .execute(),
        base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
      ]);
      return { items: items as SampleRow[], total: Number(count.n) };
    },

    /**
     * The newest raw samples of a platform/stream: of one organization (its own definition)
     * or of every organization in scope (a built-in), optionally of one integration.
     */
    async samplesOfStream(f: {
      scope: Scope;
      organizationId: number | null;
      platform: string;
      stream: string;
      integrationId?: number;
      limit: number;
    }): Promise<SampleRow[]> {
      let base = q()
        .selectFrom('raw_samples as s')
        .innerJoin('integrations as i', 'i.id', 's.integration_id')
        .where('i.platform', '=', f.platform)
        .where('s.stream', '=', f.stream)
        .where(scoped(f.scope, 's.organization_id'));
      if (f.organizationId !== null) base = base.where('s.organization_id', '=', f.organizationId);
      if (f.integrationId !== undefined) base = base.where('s.integration_id', '=', f.integrationId);
      const rows = await base
        .select(['s.id', 's.organization_id', 's.integration_id', 's.stream', 's.received_at', 's.raw'])
        .orderBy('s.received_at', 'desc')
        .orderBy('s.id', 'desc')
        .limit(f.limit)
        .execute();
      return rows as SampleRow[];
    },

    /** The organization's OCSF policy mode; strict when it has set none. */
    async policyMode(organizationId: number): Promise<'strict' | 'lenient'> {
      const row = await q()
        .selectFrom('ocsf_policies')
        .select('mode')
        .where('organization_id', '=', organizationId)
        .executeTakeFirst();
      return row?.mode === 'lenient' ? 'lenient' : 'strict';
    },
  };
}

export type MappingStore = ReturnType<typeof createMappingStore>;
