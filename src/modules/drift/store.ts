// Drift fields: raw fields the live mapping does not read, recorded by the normalization
// worker per integration, stream and path; reviewed here. Every query is scope-filtered.
import { sql, type Kysely, type SqlBool } from 'kysely';
import type { OffsetPage } from '../../core/paging.js';
import type { Scope } from '../../core/scope.js';
import { executor } from '../../platform/db/ambient.js';
import type { DB } from '../../platform/db/index.js';
import { scoped } from '../../platform/db/scope.js';

export type DriftStatus = 'new' | 'ignored' | 'mapped';

export interface DriftRow {
  id: string;
  organization_id: number;
  integration_id: number;
  stream: string;
  path: string;
  value_type: string;
  status: DriftStatus;
  count: number;
  example: string | null;
  first_seen_at: Date;
  last_seen_at: Date;
}

export interface DriftFilter {
  organizationId?: number;
  integrationId?: number;
  stream?: string;
  status?: DriftStatus;
  pathPrefix?: string;
}

const COLUMNS = [
  'id',
  'organization_id',
  'integration_id',
  'stream',
  'path',
  'value_type',
  'status',
  'count',
  'example',
  'first_seen_at',
  'last_seen_at',
] as const;

export function createDriftStore(db: Kysely<DB>) {
  const q = () => executor(db);
  const inScope = (scope: Scope) => q().selectFrom('drift_fields').where(scoped(scope, 'drift_fields.organization_id'));

  return {
    /** Most recently seen first. */
    async list(scope: Scope, f: DriftFilter, page: OffsetPage): Promise<{ items: DriftRow[]; total: number }> {
      let base = inScope(scope);
      if (f.organizationId !== undefined) base = base.where('organization_id', '=', f.organizationId);
      if (f.integrationId !== undefined) base = base.where('integration_id', '=', f.integrationId);
      if (f.stream !== undefined) base = base.where('stream', '=', f.stream);
      if (f.status !== undefined) base = base.where('status', '=', f.status);
      // starts_with: the prefix is text, not a LIKE pattern (no escaping of % and _).
      if (f.pathPrefix !== undefined) base = base.where(sql<SqlBool>`starts_with(path, ${f.pathPrefix})`);
      const [items, count] = await Promise.all([
        base
          .select(COLUMNS)
          .orderBy('last_seen_at', 'desc')
          .orderBy('id')
          .limit(page.limit)
          .offset(page.offset)
          .execute(),
        base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
      ]);
      return { items, total: Number(count.n) };
    },

    /** The rows of these ids in scope, locked for the rest of the transaction. */
    async lock(scope: Scope, ids: string[]): Promise<DriftRow[]> {
      if (ids.length === 0) return [];
      return inScope(scope).select(COLUMNS).where('id', 'in', ids).orderBy('id').forUpdate().execute();
    },

    async setStatus(ids: string[], status: DriftStatus, now: Date): Promise<DriftRow[]> {
      if (ids.length === 0) return [];
      return q()
        .updateTable('drift_fields')
        .set({ status, updated_at: now })
        .where('id', 'in', ids)
        .returning(COLUMNS)
        .execute();
    },

    async remove(ids: string[]): Promise<number> {
      if (ids.length === 0) return 0;
      const res = await q().deleteFrom('drift_fields').where('id', 'in', ids).executeTakeFirst();
      return Number(res.numDeletedRows);
    },
  };
}

export type DriftStore = ReturnType<typeof createDriftStore>;
