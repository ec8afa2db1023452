// The little the bundle reads itself: the organization (exists, name), and a savepoint
// for dry runs. Everything else goes through the modules' own services.
import { sql, type Kysely } from 'kysely';
import { executor, inTransaction } from '../../platform/db/ambient.js';
import { organizationLookup } from '../../platform/db/organizations.js';
import type { DB } from '../../platform/db/index.js';

export function createBundleStore(db: Kysely<DB>) {
  const q = () => executor(db);
  return {
    ...organizationLookup(db),
    async organizationName(id: number): Promise<string> {
      const row = await q().selectFrom('organizations').select('name').where('id', '=', id).executeTakeFirst();
      return row?.name ?? '';
    },
    /** Runs fn in the open transaction (or a new one) and undoes its writes: a savepoint rolled back. */
    async rolledBack<T>(fn: () => Promise<T>): Promise<T> {
      return inTransaction(db, async () => {
        await sql`savepoint config_bundle_dry_run`.execute(q());
        try {
          return await fn();
        } finally {
          await sql`rollback to savepoint config_bundle_dry_run`.execute(q());
          await sql`release savepoint config_bundle_dry_run`.execute(q());
        }
      });
    },
  };
}
