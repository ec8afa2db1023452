import type { Executor } from '../../platform/db/index.js';

export interface HeartbeatRow {
  id: string;
  role: string;
  hostname: string;
  pid: number;
  started_at: Date;
  last_seen_at: Date;
  queue_backend: string;
  /** platform/queue/identity.ts brokerKey(); null for rows written before it was recorded. */
  broker?: string | null;
}

export function createProcessStore(db: Executor) {
  return {
    async beat(row: HeartbeatRow): Promise<void> {
      await db
        .insertInto('process_heartbeats')
        .values(row)
        .onConflict((oc) =>
          oc.column('id').doUpdateSet({
            last_seen_at: row.last_seen_at,
            queue_backend: row.queue_backend,
            broker: row.broker ?? null,
          }),
        )
        .execute();
    },
    async remove(id: string): Promise<void> {
      await db.deleteFrom('process_heartbeats').where('id', '=', id).execute();
    },
    async list(): Promise<HeartbeatRow[]> {
      return db.selectFrom('process_heartbeats').selectAll().orderBy('role').orderBy('started_at').execute();
    },
    async pruneOlderThan(cutoff: Date): Promise<number> {
      const r = await db.deleteFrom('process_heartbeats').where('last_seen_at', '<', cutoff).executeTakeFirst();
      return Number(r.numDeletedRows);
    },
  };
}

export type ProcessStore = ReturnType<typeof createProcessStore>;
