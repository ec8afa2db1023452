// The dead-letter queue's reads and the writes a reprocess makes: the outbox rows, the marks,
// the ledger and lineage changes, all in the caller's transaction.
import { sql, type Kysely } from 'kysely';
import type { OffsetPage } from '../../core/paging.js';
import type { Scope } from '../../core/scope.js';
import type { BodyLog } from '../../platform/bodylog/log.js';
import { keepBodies } from '../../platform/bodylog/stored.js';
import { afterCommit, executor } from '../../platform/db/ambient.js';
import type { DB } from '../../platform/db/index.js';
import { scoped } from '../../platform/db/scope.js';
import { addLedger, type LedgerDelta } from '../delivery/ledger.js';
import type { DlqFilter, DlqRow, NewDeliveryBatch } from './store.js';

/** The DLQ queries of the delivery status store (createDeliveryStatusStore's arguments). */
export function dlqQueries(db: Kysely<DB>, bodies?: BodyLog, outboxWritten?: () => void) {
  const q = () => executor(db);

  return {
    async dlqList(
      scope: Scope,
      destinationId: string,
      f: DlqFilter,
      page: OffsetPage,
    ): Promise<{ items: DlqRow[]; total: number }> {
      let base = q()
        .selectFrom('dlq_events')
        .where('destination_id', '=', destinationId)
        .where(scoped(scope, 'dlq_events.organization_id'));
      if (f.status !== undefined) base = base.where('status', '=', f.status);
      if (f.errorKind !== undefined) base = base.where('error_kind', '=', f.errorKind);
      if (f.organizationId !== undefined) base = base.where('organization_id', '=', f.organizationId);
      if (f.integrationId !== undefined) base = base.where('integration_id', '=', f.integrationId);
      if (f.stream !== undefined) base = base.where('stream', '=', f.stream);
      if (f.since !== undefined) base = base.where('created_at', '>=', f.since);
      if (f.until !== undefined) base = base.where('created_at', '<', f.until);
      const [items, total] = await Promise.all([
        base
          .selectAll()
          .orderBy('created_at', 'desc')
          .orderBy('id', 'desc')
          .limit(page.limit)
          .offset(page.offset)
          .execute(),
        base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
      ]);
      return { items, total: Number(total.n ?? 0) };
    },

    /** The rows of these ids in scope, locked for the rest of the transaction. */
    async lockDlq(scope: Scope, destinationId: string, ids: string[]): Promise<DlqRow[]> {
      if (ids.length === 0) return [];
      return q()
        .selectFrom('dlq_events')
        .selectAll()
        .where('destination_id', '=', destinationId)
        .where(scoped(scope, 'dlq_events.organization_id'))
        .where('id', 'in', ids)
        .orderBy('id')
        .forUpdate()
        .execute();
    },

    /** The oldest dead rows in scope; rows another reprocess holds are skipped, not waited for. */
    async lockDead(
      scope: Scope,
      destinationId: string,
      errorKind: string | undefined,
      limit: number,
    ): Promise<DlqRow[]> {
      let base = q()
        .selectFrom('dlq_events')
        .selectAll()
        .where('destination_id', '=', destinationId)
        .where('status', '=', 'dead')
        .where(scoped(scope, 'dlq_events.organization_id'));
      if (errorKind !== undefined) base = base.where('error_kind', '=', errorKind);
      return base.orderBy('created_at').orderBy('id').limit(limit).forUpdate().skipLocked().execute();
    },

    async countDead(scope: Scope, destinationId: string, errorKind: string | undefined): Promise<number> {
      let base = q()
        .selectFrom('dlq_events')
        .where('destination_id', '=', destinationId)
        .where('status', '=', 'dead')
        .where(scoped(scope, 'dlq_events.organization_id'));
      if (errorKind !== undefined) base = base.where('error_kind', '=', errorKind);
      return Number((await base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n ?? 0);
    },

    async insertBatches(rows: NewDeliveryBatch[]): Promise<void> {
      if (rows.length === 0) return;
      const events = await keepBodies(
        bodies,
        rows.map((r) => r.events),
      );
      await q()
        .insertInto('delivery_batches')
        .values(rows.map((r, i) => ({ ...r, events: events[i]!, kind: 'reprocess' as const, attempts: 0 })))
        .execute();
      if (outboxWritten) await afterCommit(async () => outboxWritten());
    },

    async markReprocessed(ids: string[], now: Date): Promise<void> {
      if (ids.length === 0) return;
      await q()
        .updateTable('dlq_events')
        .set({ status: 'reprocessed', reprocessed_at: now })
        .where('id', 'in', ids)
        .execute();
    },

    /** Joins the open transaction: the ledger changes with the rows it counts. */
    addLedger(deltas: LedgerDelta[], at: Date): Promise<void> {
      return addLedger(db, deltas, at);
    },

    /** Lineage of the copies a reprocess made, for the events lineage knows. */
    async addLineageCopies(
      copies: { event_id: string; destination_id: string; delivery_batch_id: string }[],
      now: Date,
    ): Promise<void> {
      if (copies.length === 0) return;
      await sql`
        insert into lineage_copies (event_id, destination_id, delivery_batch_id, route_id, kind, created_at)
        select v.event_id, v.destination_id, v.delivery_batch_id, null, 'reprocess', ${now}::timestamptz
        from jsonb_to_recordset(${JSON.stringify(copies)}::jsonb) as v(event_id text, destination_id text, delivery_batch_id text)
        where exists (select 1 from lineage_events e where e.event_id = v.event_id)
        on conflict (event_id, delivery_batch_id) do nothing`.execute(q());
    },
  };
}
