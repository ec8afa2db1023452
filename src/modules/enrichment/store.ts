// Enrichment tables (and their versions' data), sources, policies (and versions), the
// per-policy live series and the activity list. Every query that a caller's scope limits
// takes the scope; the pass's reads (live.ts) are per organization.
import { sql, type Kysely } from 'kysely';
import type { Scope } from '../../core/scope.js';
import { executor } from '../../platform/db/ambient.js';
import type { DB } from '../../platform/db/index.js';
import { scoped } from '../../platform/db/scope.js';

export interface TableRow {
  id: string;
  organization_id: number;
  name: string;
  description: string;
  key_column: string;
  match: string;
  version: number;
  live_version_id: string | null;
  row_count: number;
  created_by: number | null;
  created_at: Date;
  updated_at: Date;
}

export interface TableVersionMeta {
  id: string;
  table_id: string;
  version: number;
  kind: string;
  row_count: number;
  columns: string[];
  checksum: string;
  comment: string;
  created_by: number | null;
  created_at: Date;
}

export interface SourceRow {
  id: string;
  organization_id: number;
  name: string;
  description: string;
  kind: string;
  config: Record<string, unknown>;
  credential: string | null;
  credential_key_id: string | null;
  shared: boolean;
  enabled: boolean;
  blob_info: Record<string, unknown> | null;
  table_id: string | null;
  status: Record<string, unknown>;
  next_fetch_at: Date | null;
  version: number;
  created_by: number | null;
  created_at: Date;
  updated_at: Date;
}

export interface PolicyRow {
  id: string;
  organization_id: number;
  name: string;
  enabled: boolean;
  version: number;
  definition: Record<string, unknown>;
  created_by: number | null;
  created_at: Date;
  updated_at: Date;
}

export interface PolicyVersionRow {
  id: string;
  policy_id: string;
  version: number;
  definition: Record<string, unknown>;
  comment: string;
  created_by: number | null;
  created_at: Date;
}

export interface MetricsRow {
  policy_id: string;
  minute: Date;
  seen: number;
  hits: number;
  misses: number;
  errors: number;
  unanswered: number;
  micros: number;
}

const TABLE_COLUMNS = [
  'id',
  'organization_id',
  'name',
  'description',
  'key_column',
  'match',
  'version',
  'live_version_id',
  'row_count',
  'created_by',
  'created_at',
  'updated_at',
] as const;
const VERSION_META = [
  'id',
  'table_id',
  'version',
  'kind',
  'row_count',
  'columns',
  'checksum',
  'comment',
  'created_by',
  'created_at',
] as const;
const SOURCE_COLUMNS = [
  'id',
  'organization_id',
  'name',
  'description',
  'kind',
  'config',
  'credential',
  'credential_key_id',
  'shared',
  'enabled',
  'blob_info',
  'table_id',
  'status',
  'next_fetch_at',
  'version',
  'created_by',
  'created_at',
  'updated_at',
] as const;
const POLICY_COLUMNS = [
  'id',
  'organization_id',
  'name',
  'enabled',
  'version',
  'definition',
  'created_by',
  'created_at',
  'updated_at',
] as const;

const num = (v: unknown) => Number(v ?? 0);

export function createEnrichmentStore(db: Kysely<DB>) {
  const q = () => executor(db);

  return {
    async organizationExists(id: number): Promise<boolean> {
      return (await q().selectFrom('organizations').select('id').where('id', '=', id).executeTakeFirst()) !== undefined;
    },

    /** Row lock on the organization until the transaction ends: enrichment writes of one organization queue up. */
    async lockOrganization(id: number): Promise<void> {
      await q().selectFrom('organizations').select('id').where('id', '=', id).forUpdate().executeTakeFirst();
    },

    /** Live mapping documents that apply to the organization: its own, and built-ins of platforms it has integrations of. */
    async liveMappingDocuments(organizationId: number): Promise<unknown[]> {
      const platforms = q().selectFrom('integrations').select('platform').where('organization_id', '=', organizationId);
      const rows = await q()
        .selectFrom('mapping_definitions as d')
        .innerJoin('mapping_versions as v', 'v.id', 'd.live_version_id')
        .select('v.document')
        .where((e) =>
          e.or([
            e('d.organization_id', '=', organizationId),
            e.and([e('d.organization_id', 'is', null), e('d.platform', 'in', platforms)]),
          ]),
        )
        .execute();
      return rows.map((r) => r.document);
    },

    /** Everything of an organization's enrichment (its data deletion); rows deleted. */
    async deleteOrganization(organizationId: number): Promise<number> {
      let rows = 0;
      for (const table of [
        'enrichment_policies',
        'enrichment_sources',
        'enrichment_tables',
        'enrichment_metrics',
        'enrichment_activity',
      ] as const) {
        const res = await q().deleteFrom(table).where('organization_id', '=', organizationId).executeTakeFirst();
        rows += Number(res.numDeletedRows);
      }
      return rows;
    },

    // Tables.
    async listTables(scope: Scope, organizationId?: number): Promise<TableRow[]> {
      let base = q()
        .selectFrom('enrichment_tables')
        .select([...TABLE_COLUMNS])
        .where(scoped(scope, 'organization_id'));
      if (organizationId !== undefined) base = base.where('organization_id', '=', organizationId);
      return (await base.orderBy('organization_id').orderBy('name').execute()) as TableRow[];
    },
    async getTable(id: string): Promise<TableRow | undefined> {
      return (await q()
        .selectFrom('enrichment_tables')
        .select([...TABLE_COLUMNS])
        .where('id', '=', id)
        .executeTakeFirst()) as TableRow | undefined;
    },
    async tablesOf(organizationId: number, ids: string[]): Promise<TableRow[]> {
      if (ids.length === 0) return [];
      return (await q()
        .selectFrom('enrichment_tables')
        .select([...TABLE_COLUMNS])
        .where('organization_id', '=', organizationId)
        .where('id', 'in', ids)
        .execute()) as TableRow[];
    },
    async tableNameExists(organizationId: number, name: string, exceptId?: string): Promise<boolean> {
      let base = q()
        .selectFrom('enrichment_tables')
        .select('id')
        .where('organization_id', '=', organizationId)
        .where(sql`lower(name)`, '=', name.toLowerCase());
      if (exceptId) base = base.where('id', '!=', exceptId);
      return (await base.executeTakeFirst()) !== undefined;
    },
    async insertTable(row: Omit<TableRow, 'created_at' | 'updated_at'>, at: Date): Promise<void> {
      await q()
        .insertInto('enrichment_tables')
        .values({ ...row, created_at: at, updated_at: at })
        .execute();
    },
    async setTableLive(
      id: string,
      version: number,
      versionId: string,
      rowCount: number,
      match: string,
      at: Date,
    ): Promise<void> {
      await q()
        .updateTable('enrichment_tables')
        .set({ version, live_version_id: versionId, row_count: rowCount, match, updated_at: at })
        .where('id', '=', id)
        .execute();
    },
    async deleteTable(id: string): Promise<void> {
      await q().deleteFrom('enrichment_tables').where('id', '=', id).execute();
    },
    async insertTableVersion(row: TableVersionMeta & { data: string }): Promise<void> {
      await q()
        .insertInto('enrichment_table_versions')
        .values({ ...row, columns: JSON.stringify(row.columns) })
        .execute();
    },
    async tableVersions(tableId: string): Promise<TableVersionMeta[]> {
      return (await q()
        .selectFrom('enrichment_table_versions')
        .select([...VERSION_META])
        .where('table_id', '=', tableId)
        .orderBy('version', 'desc')
        .execute()) as TableVersionMeta[];
    },
    /** The live version's metadata (without its data). */
    async liveVersionMeta(tableId: string): Promise<TableVersionMeta | undefined> {
      return (await q()
        .selectFrom('enrichment_table_versions as v')
        .innerJoin('enrichment_tables as t', 't.live_version_id', 'v.id')
        .select(VERSION_META.map((c) => `v.${c}` as const))
        .where('t.id', '=', tableId)
        .executeTakeFirst()) as TableVersionMeta | undefined;
    },
    async maxTableVersion(tableId: string): Promise<number> {
      const row = await q()
        .selectFrom('enrichment_table_versions')
        .select((e) => e.fn.max('version').as('v'))
        .where('table_id', '=', tableId)
        .executeTakeFirst();
      return num(row?.v);
    },
    async tableVersion(tableId: string, version: number): Promise<(TableVersionMeta & { data: string }) | undefined> {
      return (await q()
        .selectFrom('enrichment_table_versions')
        .select([...VERSION_META, 'data'])
        .where('table_id', '=', tableId)
        .where('version', '=', version)
        .executeTakeFirst()) as (TableVersionMeta & { data: string }) | undefined;
    },
    async versionData(versionId: string): Promise<string | undefined> {
      return (
        await q().selectFrom('enrichment_table_versions').select('data').where('id', '=', versionId).executeTakeFirst()
      )?.data;
    },

    // Sources.
    async listSources(scope: Scope, organizationId?: number): Promise<SourceRow[]> {
      let base = q()
        .selectFrom('enrichment_sources')
        .select([...SOURCE_COLUMNS])
        .where((e) => e.or([scoped(scope, 'organization_id'), e('shared', '=', true)]));
      if (organizationId !== undefined)
        base = base.where((e) => e.or([e('organization_id', '=', organizationId), e('shared', '=', true)]));
      return (await base.orderBy('organization_id').orderBy('name').execute()) as SourceRow[];
    },
    async getSource(id: string): Promise<SourceRow | undefined> {
      return (await q()
        .selectFrom('enrichment_sources')
        .select([...SOURCE_COLUMNS])
        .where('id', '=', id)
        .executeTakeFirst()) as SourceRow | undefined;
    },
    async sourceBlob(id: string): Promise<string | null | undefined> {
      return (await q().selectFrom('enrichment_sources').select('blob').where('id', '=', id).executeTakeFirst())?.blob;
    },
    async sourceNameExists(organizationId: number, name: string, exceptId?: string): Promise<boolean> {
      let base = q()
        .selectFrom('enrichment_sources')
        .select('id')
        .where('organization_id', '=', organizationId)
        .where(sql`lower(name)`, '=', name.toLowerCase());
      if (exceptId) base = base.where('id', '!=', exceptId);
      return (await base.executeTakeFirst()) !== undefined;
    },
    async insertSource(
      row: Omit<SourceRow, 'created_at' | 'updated_at' | 'version'> & { blob: string | null },
      at: Date,
    ): Promise<void> {
      await q()
        .insertInto('enrichment_sources')
        .values({
          ...row,
          config: JSON.stringify(row.config),
          status: JSON.stringify(row.status),
          blob_info: row.blob_info ? JSON.stringify(row.blob_info) : null,
          created_at: at,
          updated_at: at,
        })
        .execute();
    },
    async updateSource(
      id: string,
      set: Partial<Omit<SourceRow, 'id' | 'organization_id' | 'created_at'>> & { blob?: string | null },
      at: Date,
    ): Promise<void> {
      const values: Record<string, unknown> = { ...set, updated_at: at };
      if (set.config) values.config = JSON.stringify(set.config);
      if (set.status) values.status = JSON.stringify(set.status);
      if (set.blob_info) values.blob_info = JSON.stringify(set.blob_info);
      await q().updateTable('enrichment_sources').set(values).where('id', '=', id).execute();
    },
    async deleteSource(id: string): Promise<void> {
      await q().deleteFrom('enrichment_sources').where('id', '=', id).execute();
    },
    async feedsOfTable(tableId: string): Promise<{ id: string; name: string }[]> {
      return q().selectFrom('enrichment_sources').select(['id', 'name']).where('table_id', '=', tableId).execute();
    },
    /** Feeds due for a fetch (the beat's tick). */
    async dueFeeds(now: Date): Promise<SourceRow[]> {
      return (await q()
        .selectFrom('enrichment_sources')
        .select([...SOURCE_COLUMNS])
        .where('kind', '=', 'feed')
        .where('enabled', '=', true)
        .where((e) => e.or([e('next_fetch_at', 'is', null), e('next_fetch_at', '<=', now)]))
        .execute()) as SourceRow[];
    },

    // Policies.
    async listPolicies(scope: Scope, organizationId?: number): Promise<PolicyRow[]> {
      let base = q()
        .selectFrom('enrichment_policies')
        .select([...POLICY_COLUMNS])
        .where(scoped(scope, 'organization_id'));
      if (organizationId !== undefined) base = base.where('organization_id', '=', organizationId);
      return (await base
        .orderBy('organization_id')
        .orderBy(sql`(definition->>'order')::int`)
        .orderBy('id')
        .execute()) as PolicyRow[];
    },
    async orgPolicies(organizationId: number): Promise<PolicyRow[]> {
      return (await q()
        .selectFrom('enrichment_policies')
        .select([...POLICY_COLUMNS])
        .where('organization_id', '=', organizationId)
        .orderBy('id')
        .execute()) as PolicyRow[];
    },
    async getPolicy(id: string): Promise<PolicyRow | undefined> {
      return (await q()
        .selectFrom('enrichment_policies')
        .select([...POLICY_COLUMNS])
        .where('id', '=', id)
        .executeTakeFirst()) as PolicyRow | undefined;
    },
    async policyNameExists(organizationId: number, name: string, exceptId?: string): Promise<boolean> {
      let base = q()
        .selectFrom('enrichment_policies')
        .select('id')
        .where('organization_id', '=', organizationId)
        .where(sql`lower(name)`, '=', name.toLowerCase());
      if (exceptId) base = base.where('id', '!=', exceptId);
      return (await base.executeTakeFirst()) !== undefined;
    },
    async insertPolicy(row: Omit<PolicyRow, 'created_at' | 'updated_at'>, at: Date): Promise<void> {
      await q()
        .insertInto('enrichment_policies')
        .values({ ...row, definition: JSON.stringify(row.definition), created_at: at, updated_at: at })
        .execute();
    },
    async updatePolicy(
      id: string,
      set: { name?: string; enabled?: boolean; version?: number; definition?: Record<string, unknown> },
      at: Date,
    ): Promise<void> {
      const values: Record<string, unknown> = { ...set, updated_at: at };
      if (set.definition) values.definition = JSON.stringify(set.definition);
      await q().updateTable('enrichment_policies').set(values).where('id', '=', id).execute();
    },
    async insertPolicyVersion(row: Omit<PolicyVersionRow, 'created_at'>, at: Date): Promise<void> {
      await q()
        .insertInto('enrichment_policy_versions')
        .values({ ...row, definition: JSON.stringify(row.definition), created_at: at })
        .execute();
    },
    async policyVersions(policyId: string): Promise<PolicyVersionRow[]> {
      return (await q()
        .selectFrom('enrichment_policy_versions')
        .selectAll()
        .where('policy_id', '=', policyId)
        .orderBy('version', 'desc')
        .execute()) as PolicyVersionRow[];
    },
    async policyVersion(
      policyId: string,
      by: { id?: string; version?: number },
    ): Promise<PolicyVersionRow | undefined> {
      let base = q().selectFrom('enrichment_policy_versions').selectAll().where('policy_id', '=', policyId);
      if (by.id !== undefined) base = base.where('id', '=', by.id);
      if (by.version !== undefined) base = base.where('version', '=', by.version);
      return (await base.executeTakeFirst()) as PolicyVersionRow | undefined;
    },
    /** Enabled policies whose live definition looks up in a table or source. */
    async policiesUsing(
      organizationIds: number[] | 'all',
      ref: { table_id: string } | { source_id: string },
    ): Promise<{ id: string; name: string; organization_id: number }[]> {
      const [key, value] = 'table_id' in ref ? ['table_id', ref.table_id] : ['source_id', ref.source_id];
      let base = q()
        .selectFrom('enrichment_policies')
        .select(['id', 'name', 'organization_id'])
        .where('enabled', '=', true)
        .where(sql`definition->'lookup'->>${key}`, '=', value);
      if (organizationIds !== 'all')
        base = base.where('organization_id', 'in', organizationIds.length ? organizationIds : [-1]);
      return base.orderBy('name').execute();
    },

    // The live series and activity.
    async addMetrics(
      organizationId: number,
      minute: Date,
      rows: {
        policy_id: string;
        seen: number;
        hits: number;
        misses: number;
        errors: number;
        unanswered: number;
        micros: number;
      }[],
    ): Promise<void> {
      if (rows.length === 0) return;
      await q()
        .insertInto('enrichment_metrics')
        .values(rows.map((r) => ({ ...r, minute, organization_id: organizationId })))
        .onConflict((oc) =>
          oc.columns(['policy_id', 'minute']).doUpdateSet({
            seen: sql`enrichment_metrics.seen + excluded.seen`,
            hits: sql`enrichment_metrics.hits + excluded.hits`,
            misses: sql`enrichment_metrics.misses + excluded.misses`,
            errors: sql`enrichment_metrics.errors + excluded.errors`,
            unanswered: sql`enrichment_metrics.unanswered + excluded.unanswered`,
            micros: sql`enrichment_metrics.micros + excluded.micros`,
          }),
        )
        .execute();
    },
    async metrics(
      scope: Scope,
      since: Date,
      organizationId?: number,
      policyId?: string,
    ): Promise<(MetricsRow & { organization_id: number })[]> {
      let base = q()
        .selectFrom('enrichment_metrics')
        .selectAll()
        .where(scoped(scope, 'organization_id'))
        .where('minute', '>=', since);
      if (organizationId !== undefined) base = base.where('organization_id', '=', organizationId);
      if (policyId !== undefined) base = base.where('policy_id', '=', policyId);
      const rows = await base.orderBy('minute').execute();
      return rows.map((r) => ({
        ...r,
        seen: num(r.seen),
        hits: num(r.hits),
        misses: num(r.misses),
        errors: num(r.errors),
        unanswered: num(r.unanswered),
        micros: num(r.micros),
      })) as (MetricsRow & {
        organization_id: number;
      })[];
    },
    async pruneMetrics(before: Date): Promise<number> {
      const res = await q().deleteFrom('enrichment_metrics').where('minute', '<', before).executeTakeFirst();
      return Number(res.numDeletedRows);
    },
    async addActivity(row: {
      id: string;
      organization_id: number;
      at: Date;
      kind: string;
      subject_type: string;
      subject_id: string;
      message: string;
      actor_id: number | null;
    }): Promise<void> {
      await q().insertInto('enrichment_activity').values(row).execute();
    },
    async activity(scope: Scope, page: { limit: number; offset: number }, organizationId?: number) {
      let base = q().selectFrom('enrichment_activity').where(scoped(scope, 'organization_id'));
      if (organizationId !== undefined) base = base.where('organization_id', '=', organizationId);
      const [items, total] = await Promise.all([
        base.selectAll().orderBy('at', 'desc').orderBy('id', 'desc').limit(page.limit).offset(page.offset).execute(),
        base.select((e) => e.fn.countAll().as('n')).executeTakeFirst(),
      ]);
      return { items, total: num(total?.n) };
    },
  };
}

export type EnrichmentStore = ReturnType<typeof createEnrichmentStore>;
