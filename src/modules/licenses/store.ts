// License rows: at most one without removed_at is the active license; earlier ones stay
// as history (who activated what, when, and when it was replaced).
import type { Kysely } from 'kysely';
import { executor } from '../../platform/db/ambient.js';
import type { DB } from '../../platform/db/index.js';

export interface ActiveLicenseRow {
  id: number;
  token: string;
}

export interface NewLicense {
  token: string;
  edition: string;
  claims: object;
  activated_by: number | null;
  now: Date;
}

export function createLicenseStore(db: Kysely<DB>) {
  return {
    async active(): Promise<ActiveLicenseRow | undefined> {
      return executor(db)
        .selectFrom('licenses')
        .select(['id', 'token'])
        .where('removed_at', 'is', null)
        .orderBy('id', 'desc')
        .limit(1)
        .executeTakeFirst();
    },

    /** Replaces the active license with a new one; returns the new row's id. */
    async activate(l: NewLicense): Promise<number> {
      const x = executor(db);
      await x.updateTable('licenses').set({ removed_at: l.now }).where('removed_at', 'is', null).execute();
      const row = await x
        .insertInto('licenses')
        .values({
          token: l.token,
          edition: l.edition,
          claims: JSON.stringify(l.claims),
          activated_by: l.activated_by,
          activated_at: l.now,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      return row.id;
    },

    /** Marks the active license removed; returns how many rows changed (0 or 1). */
    async removeActive(now: Date): Promise<number> {
      const res = await executor(db)
        .updateTable('licenses')
        .set({ removed_at: now })
        .where('removed_at', 'is', null)
        .executeTakeFirst();
      return Number(res.numUpdatedRows);
    },
  };
}

export type LicenseStore = ReturnType<typeof createLicenseStore>;
