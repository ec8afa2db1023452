// OCSF policies (one row per organization that changed the default) and the compliance
// counters the normalization worker writes per organization, integration, class and day.
import { sql, type Kysely } from 'kysely';
import type { Scope } from '../../core/scope.js';
import { executor } from '../../platform/db/ambient.js';
import type { DB } from '../../platform/db/index.js';
import { scoped } from '../../platform/db/scope.js';

export type PolicyMode = 'strict' | 'lenient';

export interface PolicyRow {
  organization_id: number;
  organization_name: string;
  mode: PolicyMode | null;
  updated_at: Date | null;
}

export interface ComplianceRow {
  organization_id: number;
  integration_id: number;
  integration_name: string | null;
  class_uid: number;
  valid: number;
  invalid: number;
  last_error: string | null;
  last_invalid_at: Date | null;
}

export interface ComplianceFilter {
  /** First UTC day of the window, YYYY-MM-DD. */
  sinceDay: string;
  organizationId?: number;
  integrationId?: number;
}

export function createOcsfPolicyStore(db: Kysely<DB>) {
  const q = () => executor(db);
  const policies = (scope: Scope) =>
    q()
      .selectFrom('organizations as o')
      .leftJoin('ocsf_policies as p', 'p.organization_id', 'o.id')
      .where(scoped(scope, 'o.id'))
      .select(['o.id as organization_id', 'o.name as organization_name', 'p.mode', 'p.updated_at']);

  return {
    async list(scope: Scope): Promise<PolicyRow[]> {
      return policies(scope).orderBy('o.id').execute();
    },

    async get(scope: Scope, organizationId: number): Promise<PolicyRow | undefined> {
      return policies(scope).where('o.id', '=', organizationId).executeTakeFirst();
    },

    /**
     * clock_timestamp(), not the transaction's now(): workers watch max(updated_at), and the
     * statement's own time is later than every change already committed.
     */
    async upsert(organizationId: number, mode: PolicyMode, updatedBy: number | null): Promise<void> {
      await q()
        .insertInto('ocsf_policies')
        .values({
          organization_id: organizationId,
          mode,
          updated_by: updatedBy,
          updated_at: sql<Date>`clock_timestamp()`,
        })
        .onConflict((oc) =>
          oc
            .column('organization_id')
            .doUpdateSet({ mode, updated_by: updatedBy, updated_at: sql<Date>`clock_timestamp()` }),
        )
        .execute();
    },

    async compliance(scope: Scope, f: ComplianceFilter): Promise<ComplianceRow[]> {
      let query = q()
        .selectFrom('ocsf_compliance as c')
        .leftJoin('integrations as i', 'i.id', 'c.integration_id')
        .where(scoped(scope, 'c.organization_id'))
        .where('c.day', '>=', f.sinceDay);
      if (f.organizationId !== undefined) query = query.where('c.organization_id', '=', f.organizationId);
      if (f.integrationId !== undefined) query = query.where('c.integration_id', '=', f.integrationId);
      return query
        .select([
          'c.organization_id',
          'c.integration_id',
          'i.name as integration_name',
          'c.class_uid',
          sql<number>`sum(c.valid)::int8`.as('valid'),
          sql<number>`sum(c.invalid)::int8`.as('invalid'),
          sql<
            string | null
          >`(array_agg(c.last_error order by c.last_invalid_at desc nulls last) filter (where c.last_error is not null))[1]`.as(
            'last_error',
          ),
          sql<Date | null>`max(c.last_invalid_at)`.as('last_invalid_at'),
        ])
        .groupBy(['c.organization_id', 'c.integration_id', 'i.name', 'c.class_uid'])
        .orderBy('c.organization_id')
        .orderBy('c.integration_id')
        .orderBy('c.class_uid')
        .execute();
    },
  };
}

export type OcsfPolicyStore = ReturnType<typeof createOcsfPolicyStore>;
