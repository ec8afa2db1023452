// Organizations: the tenants themselves. Scoping filters on the organization's own id;
// data-deletion requests are recorded in org_data_deletions.
import { sql, type Kysely, type Selectable } from 'kysely';
import type { OffsetPage } from '../../core/paging.js';
import type { Scope } from '../../core/scope.js';
import { executor } from '../../platform/db/ambient.js';
import type { DB } from '../../platform/db/index.js';
import type { OrganizationsTable, OrgDataDeletionsTable } from '../../platform/db/schema.js';
import { scoped } from '../../platform/db/scope.js';

export type OrganizationRow = Selectable<OrganizationsTable>;
export type DeletionRow = Selectable<OrgDataDeletionsTable>;

export interface OrganizationPatch {
  name?: string;
  is_active?: boolean;
  retention_days?: number;
  case_customer_id?: string | null;
  updated_at: Date;
}

export interface DeletionUpdate {
  state: string;
  detail?: Record<string, unknown>;
  finished_at?: Date | null;
}

/** Serialises organization creation so two requests cannot both take the last slot. */
const CREATE_LOCK = 0x6f726763; // "orgc"

export function createOrganizationStore(db: Kysely<DB>) {
  const q = () => executor(db);
  const inScope = (scope: Scope) => q().selectFrom('organizations').where(scoped(scope, 'organizations.id'));

  return {
    async list(scope: Scope, page: OffsetPage): Promise<{ items: OrganizationRow[]; total: number }> {
      const base = inScope(scope);
      const items = await base.selectAll().orderBy('id').limit(page.limit).offset(page.offset).execute();
      const count = await base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
      return { items, total: Number(count.n) };
    },

    async get(scope: Scope, id: number): Promise<OrganizationRow | undefined> {
      return inScope(scope).selectAll().where('id', '=', id).executeTakeFirst();
    },

    async findInScope(scope: Scope, ids: number[]): Promise<OrganizationRow[]> {
      if (ids.length === 0) return [];
      return inScope(scope).selectAll().where('id', 'in', ids).execute();
    },

    async byCaseCustomer(scope: Scope, caseCustomerId: string): Promise<OrganizationRow | undefined> {
      return inScope(scope).selectAll().where('case_customer_id', '=', caseCustomerId).executeTakeFirst();
    },

    async byPartnerTenant(scope: Scope, externalId: string): Promise<OrganizationRow | undefined> {
      return inScope(scope)
        .selectAll()
        .where(sql<boolean>`partner_tenant_ids @> ${JSON.stringify([externalId])}::jsonb`)
        .orderBy('id')
        .executeTakeFirst();
    },

    async nameExists(name: string, exceptId?: number): Promise<boolean> {
      let query = q()
        .selectFrom('organizations')
        .select('id')
        .where(sql<boolean>`lower(name) = lower(${name})`);
      if (exceptId !== undefined) query = query.where('id', '<>', exceptId);
      return Boolean(await query.executeTakeFirst());
    },

    /** Held until the transaction ends (the request's unit of work). */
    async lockCreation(): Promise<void> {
      await sql`select pg_advisory_xact_lock(${CREATE_LOCK})`.execute(q());
    },

    async count(): Promise<number> {
      const row = await q()
        .selectFrom('organizations')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow();
      return Number(row.n);
    },

    async insert(name: string, now: Date): Promise<OrganizationRow> {
      return q()
        .insertInto('organizations')
        .values({ name, partner_tenant_ids: JSON.stringify([]), created_at: now, updated_at: now })
        .returningAll()
        .executeTakeFirstOrThrow();
    },

    async update(id: number, patch: OrganizationPatch): Promise<OrganizationRow | undefined> {
      return q().updateTable('organizations').set(patch).where('id', '=', id).returningAll().executeTakeFirst();
    },

    async deactivate(ids: number[], now: Date): Promise<number> {
      if (ids.length === 0) return 0;
      const res = await q()
        .updateTable('organizations')
        .set({ is_active: false, updated_at: now })
        .where('id', 'in', ids)
        .where('is_active', '=', true)
        .executeTakeFirst();
      return Number(res.numUpdatedRows);
    },

    /** Deletes the organization; its users, accounts, tokens and data go by foreign key. */
    async delete(id: number): Promise<boolean> {
      const res = await q().deleteFrom('organizations').where('id', '=', id).executeTakeFirst();
      return Number(res.numDeletedRows) > 0;
    },

    async principalsOf(id: number): Promise<{ users: number[]; serviceAccounts: number[] }> {
      const users = await q().selectFrom('users').select('id').where('organization_id', '=', id).execute();
      const accounts = await q()
        .selectFrom('service_accounts')
        .select('id')
        .where('organization_id', '=', id)
        .execute();
      return { users: users.map((r) => r.id), serviceAccounts: accounts.map((r) => r.id) };
    },

    async insertDeletion(d: {
      id: string;
      organization_id: number;
      requested_by: number | null;
      now: Date;
    }): Promise<void> {
      await q()
        .insertInto('org_data_deletions')
        .values({
          id: d.id,
          organization_id: d.organization_id,
          requested_by: d.requested_by,
          state: 'queued',
          detail: JSON.stringify({}),
          created_at: d.now,
        })
        .execute();
    },

    async getDeletion(id: string): Promise<DeletionRow | undefined> {
      return q().selectFrom('org_data_deletions').selectAll().where('id', '=', id).executeTakeFirst();
    },

    async updateDeletion(id: string, u: DeletionUpdate): Promise<void> {
      await q()
        .updateTable('org_data_deletions')
        .set({
          state: u.state,
          ...(u.detail !== undefined ? { detail: JSON.stringify(u.detail) } : {}),
          ...(u.finished_at !== undefined ? { finished_at: u.finished_at } : {}),
        })
        .where('id', '=', id)
        .execute();
    },

    /** The organization's integrations (children first would not matter: parent_id cascades). */
    async deleteIntegrations(organizationId: number): Promise<number> {
      const res = await q().deleteFrom('integrations').where('organization_id', '=', organizationId).executeTakeFirst();
      return Number(res.numDeletedRows);
    },
  };
}

export type OrganizationStore = ReturnType<typeof createOrganizationStore>;
