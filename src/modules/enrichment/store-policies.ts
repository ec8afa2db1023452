// Enrichment policies and their versions.
import { sql, type Kysely } from 'kysely';
import type { Scope } from '../../core/scope.js';
import { executor } from '../../platform/db/ambient.js';
import type { DB } from '../../platform/db/index.js';
import { scoped } from '../../platform/db/scope.js';

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

/** The policy queries of the enrichment store. */
export function policyQueries(db: Kysely<DB>) {
  const q = () => executor(db);

  return {
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
  };
}
