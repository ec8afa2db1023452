// Quarantined events: written by the normalization worker, read and acted on here. Every
// query is filtered by the caller's scope.
import { sql, type Kysely, type Selectable } from 'kysely';
import type { OffsetPage } from '../../core/paging.js';
import type { Scope } from '../../core/scope.js';
import { executor } from '../../platform/db/ambient.js';
import type { DB } from '../../platform/db/index.js';
import type { QuarantineEventsTable } from '../../platform/db/schema.js';
import { scoped } from '../../platform/db/scope.js';

export type QuarantineRow = Selectable<QuarantineEventsTable>;
export type QuarantineEntryRow = Omit<QuarantineRow, 'raw'>;

export interface QuarantineFilter {
  organizationId?: number;
  integrationId?: number;
  stream?: string;
  errorKind?: string;
  /** undefined: every status. */
  status?: 'quarantined' | 'reprocessed';
  since?: Date;
  until?: Date;
}

/** The outcome of one reprocessing attempt, to be written back to its row. */
export interface AttemptOutcome {
  id: string;
  ok: boolean;
  error_kind?: string;
  error_detail?: string;
  mapping_version_id: string | null;
}

const ENTRY_COLUMNS = [
  'id',
  'organization_id',
  'integration_id',
  'stream',
  'received_at',
  'error_kind',
  'error_detail',
  'mapping_version_id',
  'status',
  'attempts',
  'created_at',
  'updated_at',
  'reprocessed_at',
] as const;

export function createQuarantineStore(db: Kysely<DB>) {
  const q = () => executor(db);
  const inScope = (scope: Scope) =>
    q().selectFrom('quarantine_events').where(scoped(scope, 'quarantine_events.organization_id'));

  function filtered(scope: Scope, f: QuarantineFilter) {
    let base = inScope(scope);
    if (f.organizationId !== undefined) base = base.where('organization_id', '=', f.organizationId);
    if (f.integrationId !== undefined) base = base.where('integration_id', '=', f.integrationId);
    if (f.stream !== undefined) base = base.where('stream', '=', f.stream);
    if (f.errorKind !== undefined) base = base.where('error_kind', '=', f.errorKind);
    if (f.status !== undefined) base = base.where('status', '=', f.status);
    if (f.since !== undefined) base = base.where('created_at', '>=', f.since);
    if (f.until !== undefined) base = base.where('created_at', '<', f.until);
    return base;
  }

  const count = async (base: ReturnType<typeof filtered>) =>
    Number((await base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);

  return {
    /** Newest first; ids (time-ordered UUIDs) break ties. */
    async list(
      scope: Scope,
      f: QuarantineFilter,
      page: OffsetPage,
    ): Promise<{ items: QuarantineEntryRow[]; total: number }> {
      const base = filtered(scope, f);
      const [items, total] = await Promise.all([
        base
          .select(ENTRY_COLUMNS)
          .orderBy('created_at', 'desc')
          .orderBy('id', 'desc')
          .limit(page.limit)
          .offset(page.offset)
          .execute(),
        count(base),
      ]);
      return { items, total };
    },

    async ids(scope: Scope, f: QuarantineFilter, max: number): Promise<{ ids: string[]; total: number }> {
      const base = filtered(scope, f);
      const [rows, total] = await Promise.all([
        base.select('id').orderBy('created_at', 'desc').orderBy('id', 'desc').limit(max).execute(),
        count(base),
      ]);
      return { ids: rows.map((r) => r.id), total };
    },

    async get(scope: Scope, id: string): Promise<QuarantineRow | undefined> {
      return inScope(scope).selectAll().where('id', '=', id).executeTakeFirst();
    },

    async getEntry(scope: Scope, id: string): Promise<QuarantineEntryRow | undefined> {
      return inScope(scope).select(ENTRY_COLUMNS).where('id', '=', id).executeTakeFirst();
    },

    /** The rows of these ids in scope, locked for the rest of the transaction. */
    async lock(scope: Scope, ids: string[]): Promise<QuarantineRow[]> {
      if (ids.length === 0) return [];
      return inScope(scope).selectAll().where('id', 'in', ids).orderBy('id').forUpdate().execute();
    },

    async remove(ids: string[]): Promise<number> {
      if (ids.length === 0) return 0;
      const res = await q().deleteFrom('quarantine_events').where('id', 'in', ids).executeTakeFirst();
      return Number(res.numDeletedRows);
    },

    /**
     * Writes every attempt back in one statement: a success marks the row reprocessed; a
     * failure records the new error and counts the attempt, and the row stays quarantined.
     */
    async recordAttempts(outcomes: AttemptOutcome[], now: Date): Promise<void> {
      if (outcomes.length === 0) return;
      const values = JSON.stringify(
        outcomes.map((o) => ({
          id: o.id,
          ok: o.ok,
          error_kind: o.error_kind ?? null,
          error_detail: o.error_detail ?? null,
          mapping_version_id: o.mapping_version_id,
        })),
      );
      await sql`
        update quarantine_events as q set
          status = case when v.ok then 'reprocessed' else 'quarantined' end,
          reprocessed_at = case when v.ok then ${now}::timestamptz else null end,
          error_kind = case when v.ok then q.error_kind else coalesce(v.error_kind, q.error_kind) end,
          error_detail = case when v.ok then q.error_detail else coalesce(v.error_detail, q.error_detail) end,
          attempts = q.attempts + 1,
          mapping_version_id = v.mapping_version_id,
          updated_at = ${now}::timestamptz
        from jsonb_to_recordset(${values}::jsonb)
          as v(id text, ok boolean, error_kind text, error_detail text, mapping_version_id text)
        where q.id = v.id`.execute(q());
    },
  };
}

export type QuarantineStore = ReturnType<typeof createQuarantineStore>;
