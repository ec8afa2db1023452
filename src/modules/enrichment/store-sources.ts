// Enrichment sources: feeds, lookup services, uploaded databases (their blob kept aside).
import { sql, type Kysely } from 'kysely';
import type { Scope } from '../../core/scope.js';
import { executor } from '../../platform/db/ambient.js';
import type { DB } from '../../platform/db/index.js';
import { scoped } from '../../platform/db/scope.js';

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

/** The source queries of the enrichment store. */
export function sourceQueries(db: Kysely<DB>) {
  const q = () => executor(db);

  return {
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
  };
}
