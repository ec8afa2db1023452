// The two organization reads every module that places a new object in an organization needs
// (core/scope.ts targetOrganization): whether one exists, and the few that do.
import type { Kysely } from 'kysely';
import type { OrganizationLookup } from '../../core/scope.js';
import { executor } from './ambient.js';
import type { DB } from './schema.js';

export function organizationLookup(db: Kysely<DB>): OrganizationLookup {
  const q = () => executor(db);
  return {
    async organizationExists(id: number): Promise<boolean> {
      return (await q().selectFrom('organizations').select('id').where('id', '=', id).executeTakeFirst()) !== undefined;
    },
    async organizationIds(limit: number): Promise<number[]> {
      const rows = await q().selectFrom('organizations').select('id').orderBy('id').limit(limit).execute();
      return rows.map((r) => r.id);
    },
  };
}
