import { sql, type Kysely, type Selectable } from 'kysely';
import type { Scope } from '../../core/scope.js';
import { executor } from '../../platform/db/ambient.js';
import type { DB } from '../../platform/db/index.js';
import type { ServiceAccountsTable } from '../../platform/db/schema.js';
import { scoped } from '../../platform/db/scope.js';

export type ServiceAccountRow = Selectable<ServiceAccountsTable>;
export type ServiceAccountWithCount = ServiceAccountRow & { token_count: number };

export function createServiceAccountStore(db: Kysely<DB>) {
  const q = () => executor(db);
  // Tokens not revoked, counted in the same query as the accounts (no N+1).
  const withCount = () =>
    q()
      .selectFrom('service_accounts')
      .selectAll('service_accounts')
      .select(
        sql<number>`(select count(*)::int from api_tokens t where t.service_account_id = service_accounts.id and t.revoked_at is null)`.as(
          'token_count',
        ),
      );

  return {
    /** Platform accounts (no organization) are visible to a global scope only. */
    list: (scope: Scope): Promise<ServiceAccountWithCount[]> =>
      withCount().where(scoped(scope, 'service_accounts.organization_id')).orderBy('service_accounts.id').execute(),

    inScope: (scope: Scope, id: number): Promise<ServiceAccountWithCount | undefined> =>
      withCount()
        .where('service_accounts.id', '=', id)
        .where(scoped(scope, 'service_accounts.organization_id'))
        .executeTakeFirst(),

    insert: (values: { name: string; role: string; organization_id: number | null; created_by: number | null }) =>
      q().insertInto('service_accounts').values(values).returning('id').executeTakeFirstOrThrow(),

    update: (id: number, values: Partial<Pick<ServiceAccountRow, 'name' | 'role' | 'is_active'>>, at: Date) =>
      q()
        .updateTable('service_accounts')
        .set({ ...values, updated_at: at })
        .where('id', '=', id)
        .execute(),

    /** Its tokens go with it (foreign key cascade). */
    remove: (id: number) => q().deleteFrom('service_accounts').where('id', '=', id).execute(),

    organizationInScope: (scope: Scope, id: number) =>
      q()
        .selectFrom('organizations')
        .select('id')
        .where('id', '=', id)
        .where(scoped(scope, 'organizations.id'))
        .executeTakeFirst(),
  };
}

export type ServiceAccountStore = ReturnType<typeof createServiceAccountStore>;
