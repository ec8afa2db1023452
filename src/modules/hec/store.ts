// HEC data channels and their acknowledgements (hec_channels, 0027), and the one question
// an acknowledgement asks of the pipeline: which of these ingest batches are processed.
import { sql, type Kysely } from 'kysely';
import { executor } from '../../platform/db/ambient.js';
import type { DB } from '../../platform/db/index.js';

export function createHecStore(db: Kysely<DB>) {
  const q = () => executor(db);
  return {
    /** How many acknowledgements of the channel are unanswered (0 for a new channel). */
    async pendingCount(integrationId: number, channel: string): Promise<number> {
      const { rows } = await sql<{ n: number }>`
        select (select count(*) from jsonb_object_keys(pending))::int as n
        from hec_channels where integration_id = ${integrationId} and channel = ${channel}`.execute(q());
      return rows[0]?.n ?? 0;
    },

    /**
     * Issues the channel's next ackId for these batches (0 for a new channel). One upsert:
     * concurrent requests on the channel, in any process, get distinct, increasing ids.
     */
    async issue(integrationId: number, channel: string, batchIds: string[], now: Date): Promise<number> {
      const batches = JSON.stringify(batchIds);
      const { rows } = await sql<{ ack_id: string | number }>`
        insert into hec_channels as c (integration_id, channel, next_ack_id, pending, used_at)
        values (${integrationId}, ${channel}, 1, jsonb_build_object('0', ${batches}::jsonb), ${now})
        on conflict (integration_id, channel) do update
          set next_ack_id = c.next_ack_id + 1,
              pending = c.pending || jsonb_build_object(c.next_ack_id::text, ${batches}::jsonb),
              used_at = excluded.used_at
        returning next_ack_id - 1 as ack_id`.execute(q());
      return Number(rows[0]!.ack_id);
    },

    /** The batch ids of the channel's unanswered acknowledgements among `ackIds`. */
    async pending(integrationId: number, channel: string, ackIds: number[]): Promise<Map<number, string[]>> {
      const row = await q()
        .selectFrom('hec_channels')
        .select('pending')
        .where('integration_id', '=', integrationId)
        .where('channel', '=', channel)
        .executeTakeFirst();
      const out = new Map<number, string[]>();
      for (const id of ackIds) {
        const batches = row?.pending[String(id)];
        if (batches) out.set(id, batches);
      }
      return out;
    },

    /** Forgets acknowledgements answered true (HEC answers each true once) and marks the channel used. */
    async settle(integrationId: number, channel: string, ackIds: number[], now: Date): Promise<void> {
      await sql`
        update hec_channels set pending = pending - ${ackIds.map(String)}::text[], used_at = ${now}
        where integration_id = ${integrationId} and channel = ${channel}`.execute(q());
    },

    /**
     * The batches among `batchIds` that are processed: normalized and routed, their events in
     * the delivery outbox of each destination a route sends them to, filtered or quarantined,
     * committed in one transaction (normalization/service.ts writes the batch's done mark).
     */
    async processed(batchIds: string[]): Promise<Set<string>> {
      if (batchIds.length === 0) return new Set();
      const rows = await q()
        .selectFrom('normalized_batches')
        .select('id')
        .where('id', 'in', batchIds)
        .where('route_state', '=', 'done')
        .execute();
      return new Set(rows.map((r) => r.id));
    },

    /** Deletes up to `limit` channels unused since `before` (their unanswered acknowledgements with them). */
    async expire(before: Date, limit: number): Promise<number> {
      const res = await sql`
        delete from hec_channels where (integration_id, channel) in (
          select integration_id, channel from hec_channels where used_at < ${before} limit ${limit})`.execute(q());
      return Number(res.numAffectedRows ?? 0);
    },
  };
}

export type HecStore = ReturnType<typeof createHecStore>;
