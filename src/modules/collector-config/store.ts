// Collector settings (one row) and live capture sessions with their events. Every read of a
// session is filtered by the caller's scope; the recorder's writes are scoped by the batch.
import { sql, type Insertable, type Kysely, type Selectable } from 'kysely';
import type { OffsetPage } from '../../core/paging.js';
import type { Scope } from '../../core/scope.js';
import { executor } from '../../platform/db/ambient.js';
import type { DB } from '../../platform/db/index.js';
import type { CaptureEventsTable, CaptureSessionsTable } from '../../platform/db/schema.js';
import { scoped } from '../../platform/db/scope.js';

export type SessionRow = Selectable<CaptureSessionsTable>;
export type CaptureEventRow = Selectable<CaptureEventsTable>;
export type SessionStatus = SessionRow['status'];

export interface SessionFilter {
  /** Effective status: an active session past expires_at counts as expired before the beat marks it. */
  status?: SessionStatus;
  integrationId?: number;
  organizationId?: number;
}

export interface ActiveSession {
  id: string;
  organization_id: number;
  integration_id: number;
  stream: string | null;
  expires_at: Date;
}

// Required: every column is written (captured_at has no default).
export type NewCaptureEvent = Required<Insertable<CaptureEventsTable>>;

export function createCollectorConfigStore(db: Kysely<DB>) {
  const q = () => executor(db);
  const sessions = (scope: Scope) =>
    q().selectFrom('capture_sessions').where(scoped(scope, 'capture_sessions.organization_id'));

  function filtered(scope: Scope, f: SessionFilter, now: Date) {
    let base = sessions(scope);
    if (f.integrationId !== undefined) base = base.where('integration_id', '=', f.integrationId);
    if (f.organizationId !== undefined) base = base.where('organization_id', '=', f.organizationId);
    if (f.status === 'active') base = base.where('status', '=', 'active').where('expires_at', '>', now);
    else if (f.status === 'expired')
      base = base.where((eb) =>
        eb.or([eb('status', '=', 'expired'), eb.and([eb('status', '=', 'active'), eb('expires_at', '<=', now)])]),
      );
    else if (f.status !== undefined) base = base.where('status', '=', f.status);
    return base;
  }

  return {
    async settingsRow() {
      return q().selectFrom('collector_settings').selectAll().where('id', '=', 1).executeTakeFirst();
    },

    /** The settings row locked for the rest of the transaction (created empty when absent). */
    async lockSettings(now: Date) {
      await q()
        .insertInto('collector_settings')
        .values({ id: 1, settings: '{}', updated_by: null, updated_at: now })
        .onConflict((oc) => oc.column('id').doNothing())
        .execute();
      return q().selectFrom('collector_settings').selectAll().where('id', '=', 1).forUpdate().executeTakeFirstOrThrow();
    },

    async writeSettings(settings: Record<string, unknown>, updatedBy: number | null, now: Date): Promise<void> {
      await q()
        .updateTable('collector_settings')
        .set({ settings: JSON.stringify(settings), updated_by: updatedBy, updated_at: now })
        .where('id', '=', 1)
        .execute();
    },

    /** The integration (id, organization, platform, name) when it is in scope. */
    async integration(scope: Scope, id: number) {
      return q()
        .selectFrom('integrations')
        .select(['id', 'organization_id', 'platform', 'name'])
        .where('id', '=', id)
        .where(scoped(scope, 'integrations.organization_id'))
        .executeTakeFirst();
    },

    async countActive(integrationId: number, now: Date): Promise<number> {
      const row = await q()
        .selectFrom('capture_sessions')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('integration_id', '=', integrationId)
        .where('status', '=', 'active')
        .where('expires_at', '>', now)
        .executeTakeFirstOrThrow();
      return Number(row.n);
    },

    async insertSession(row: Omit<SessionRow, 'events_captured'>): Promise<SessionRow> {
      return q().insertInto('capture_sessions').values(row).returningAll().executeTakeFirstOrThrow();
    },

    async session(scope: Scope, id: string): Promise<SessionRow | undefined> {
      return sessions(scope).selectAll().where('id', '=', id).executeTakeFirst();
    },

    /** Newest first; ids (UUIDv7) break ties. */
    async listSessions(
      scope: Scope,
      f: SessionFilter,
      page: OffsetPage,
      now: Date,
    ): Promise<{ items: SessionRow[]; total: number }> {
      const base = filtered(scope, f, now);
      const items = await base
        .selectAll()
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .limit(page.limit)
        .offset(page.offset)
        .execute();
      const total = await base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
      return { items, total: Number(total.n) };
    },

    /** active -> stopped, only while it is still active and unexpired; undefined otherwise. */
    async stopSession(scope: Scope, id: string, now: Date): Promise<SessionRow | undefined> {
      return q()
        .updateTable('capture_sessions')
        .set({ status: 'stopped', stopped_at: now })
        .where('id', '=', id)
        .where('status', '=', 'active')
        .where('expires_at', '>', now)
        .where(scoped(scope, 'capture_sessions.organization_id'))
        .returningAll()
        .executeTakeFirst();
    },

    /** Removes the session and its events; false when it is not in scope. */
    async deleteSession(scope: Scope, id: string): Promise<boolean> {
      const found = await sessions(scope).select('id').where('id', '=', id).forUpdate().executeTakeFirst();
      if (!found) return false;
      await q().deleteFrom('capture_events').where('session_id', '=', id).execute();
      await q().deleteFrom('capture_sessions').where('id', '=', id).execute();
      return true;
    },

    /** Oldest first (capture order), so paging is stable while a capture is running. */
    async listEvents(sessionId: string, page: OffsetPage): Promise<{ items: CaptureEventRow[]; total: number }> {
      const base = q().selectFrom('capture_events').where('session_id', '=', sessionId);
      const items = await base
        .selectAll()
        .orderBy('captured_at', 'asc')
        .orderBy('id', 'asc')
        .limit(page.limit)
        .offset(page.offset)
        .execute();
      const total = await base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
      return { items, total: Number(total.n) };
    },

    async event(sessionId: string, eventId: string): Promise<CaptureEventRow | undefined> {
      return q()
        .selectFrom('capture_events')
        .selectAll()
        .where('session_id', '=', sessionId)
        .where('id', '=', eventId)
        .executeTakeFirst();
    },

    /** The raw events of a session in capture order, in chunks (an export never holds them all). */
    async *scanEvents(sessionId: string, chunk = 500): AsyncGenerator<CaptureEventRow['raw'][]> {
      let after: { at: Date; id: string } | undefined;
      for (;;) {
        let query = q()
          .selectFrom('capture_events')
          .select(['id', 'captured_at', 'raw'])
          .where('session_id', '=', sessionId);
        if (after) {
          const { at, id } = after;
          query = query.where((eb) =>
            eb.or([eb('captured_at', '>', at), eb.and([eb('captured_at', '=', at), eb('id', '>', id)])]),
          );
        }
        const rows = await query.orderBy('captured_at', 'asc').orderBy('id', 'asc').limit(chunk).execute();
        if (rows.length === 0) return;
        yield rows.map((r) => r.raw);
        const last = rows[rows.length - 1]!;
        after = { at: last.captured_at, id: last.id };
        if (rows.length < chunk) return;
      }
    },

    // --- the recorder ---

    /** Past expires_at included: the recorder marks them expired when their next batch comes. */
    async activeSessions(): Promise<ActiveSession[]> {
      return q()
        .selectFrom('capture_sessions')
        .select(['id', 'organization_id', 'integration_id', 'stream', 'expires_at'])
        .where('status', '=', 'active')
        .execute();
    },

    /**
     * Takes up to `wanted` of the session's remaining capacity, atomically (the row is locked
     * for the statement): concurrent batches never capture more than max_events between them.
     * Returns how many were granted and the session's status after; undefined when the
     * session is no longer active (stopped, full, expired, deleted).
     */
    async reserve(
      id: string,
      wanted: number,
      now: Date,
    ): Promise<{ granted: number; status: SessionStatus } | undefined> {
      const res = await sql<{ before: number; after: number; status: SessionStatus }>`
        with s as (
          select id, events_captured as before from capture_sessions
          where id = ${id} and status = 'active' and expires_at > ${now}
          for update)
        update capture_sessions c
        set events_captured = least(c.max_events, s.before + ${wanted}::int),
            status = case when s.before + ${wanted}::int >= c.max_events then 'full' else c.status end,
            stopped_at = case when s.before + ${wanted}::int >= c.max_events then ${now}::timestamptz else c.stopped_at end
        from s where c.id = s.id
        returning s.before as before, c.events_captured as after, c.status as status`.execute(q());
      const row = res.rows[0];
      return row ? { granted: Number(row.after) - Number(row.before), status: row.status } : undefined;
    },

    async insertEvents(rows: NewCaptureEvent[]): Promise<void> {
      if (rows.length > 0) await q().insertInto('capture_events').values(rows).execute();
    },

    /** Active sessions past expires_at become expired; returns their ids. */
    async expireSessions(now: Date, ids?: string[]): Promise<string[]> {
      let query = q()
        .updateTable('capture_sessions')
        .set({ status: 'expired', stopped_at: sql<Date>`expires_at` })
        .where('status', '=', 'active')
        .where('expires_at', '<=', now);
      if (ids) {
        if (ids.length === 0) return [];
        query = query.where('id', 'in', ids);
      }
      return (await query.returning('id').execute()).map((r) => r.id);
    },

    /** Up to `limit` sessions that ended before `before` (their events go with them). */
    async endedBefore(before: Date, limit: number): Promise<string[]> {
      const rows = await q()
        .selectFrom('capture_sessions')
        .select('id')
        .where('status', '!=', 'active')
        .where(sql<boolean>`coalesce(stopped_at, expires_at) < ${before}`)
        .orderBy('created_at')
        .limit(limit)
        .execute();
      return rows.map((r) => r.id);
    },

    async deleteEventsOf(sessionId: string, limit: number): Promise<number> {
      const res = await q()
        .deleteFrom('capture_events')
        .where('id', 'in', (eb) =>
          eb.selectFrom('capture_events').select('id').where('session_id', '=', sessionId).limit(limit),
        )
        .executeTakeFirst();
      return Number(res.numDeletedRows);
    },

    async deleteSessionRow(id: string): Promise<void> {
      await q().deleteFrom('capture_sessions').where('id', '=', id).execute();
    },

    /** An organization's capture data (organization data deletion). */
    async deleteOrganization(organizationId: number): Promise<number> {
      const events = await q()
        .deleteFrom('capture_events')
        .where('organization_id', '=', organizationId)
        .executeTakeFirst();
      const rows = await q()
        .deleteFrom('capture_sessions')
        .where('organization_id', '=', organizationId)
        .executeTakeFirst();
      return Number(events.numDeletedRows) + Number(rows.numDeletedRows);
    },
  };
}

export type CollectorConfigStore = ReturnType<typeof createCollectorConfigStore>;
