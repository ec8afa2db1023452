// Enrichment tables and their versions (the data of each kept whole, read back by version).
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

/** The table queries of the enrichment store. */
export function tableQueries(db: Kysely<DB>) {
  const q = () => executor(db);

  return {
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
      return Number(row?.v ?? 0);
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
  };
}
