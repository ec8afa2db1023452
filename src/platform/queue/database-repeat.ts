// Repeating jobs of the database queue: a job_schedules row plus exactly one not-yet-started
// occurrence in `jobs` (unique index jobs_repeat_pending). The claim that starts an
// occurrence inserts the next one (database-store.ts), so the schedule survives restarts and
// many consumers without a scheduler process. Lock order: see database-store.ts.
import { sql, type Kysely } from 'kysely';
import { newId } from '../../core/ids.js';
import type { DB, Executor } from '../db/index.js';
import { DEFAULT_ATTEMPTS, DEFAULT_BACKOFF_MS } from './options.js';
import { json } from './database-store.js';

const PENDING = sql`repeat_key is not null and state = 'waiting' and attempts_made = 0`;

/**
 * Upserts the schedule. A new schedule, or one whose interval changed, runs now and then
 * every `everyMs`; re-registering the same interval (every start of the process does)
 * keeps the pending slot and only replaces name and payload.
 */
export async function upsertSchedule(
  db: Kysely<DB>,
  queue: string,
  key: string,
  name: string,
  payload: unknown,
  everyMs: number,
): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const old = await sql<{ every_ms: number }>`
      select every_ms from job_schedules where queue = ${queue} and key = ${key} for update`.execute(trx);
    const sameInterval = old.rows[0]?.every_ms === everyMs;
    await sql`
      insert into job_schedules (queue, key, name, payload, every_ms, next_run_at)
      values (${queue}, ${key}, ${name}, ${json(payload)}::jsonb, ${everyMs}, now())
      on conflict (queue, key) do update
      set name = excluded.name, payload = excluded.payload, every_ms = excluded.every_ms, updated_at = now()`.execute(
      trx,
    );

    const visible = await pendingIds(trx, queue, key, false);
    const lockable = await pendingIds(trx, queue, key, true);
    // A pending occurrence we cannot lock is being claimed right now; that claim inserts
    // the next occurrence from this (updated) schedule as soon as we commit. Inserting one
    // here would wait on its row while it waits on our schedule row: a deadlock.
    if (visible.length > 0 && lockable.length === 0) return;
    if (lockable.length > 0 && sameInterval) {
      await sql`
        update jobs set name = ${name}, payload = ${json(payload)}::jsonb
        where queue = ${queue} and repeat_key = ${key} and ${PENDING}`.execute(trx);
      return;
    }
    if (lockable.length > 0) {
      await sql`delete from jobs where queue = ${queue} and id = any(${lockable}::text[])`.execute(trx);
    }
    // Same interval but no pending occurrence (it went missing): resume at the next slot of
    // the existing cadence rather than running at once.
    const runAt = sameInterval
      ? sql`next_run_at + (every_ms * (floor(greatest(extract(epoch from (now() - next_run_at)), 0) * 1000 / every_ms) + 1)) * interval '1 millisecond'`
      : sql`now()`;
    await sql`
      with s as (
        update job_schedules set next_run_at = ${runAt}
        where queue = ${queue} and key = ${key}
        returning queue, key, name, payload, next_run_at
      )
      insert into jobs (queue, id, name, payload, state, max_attempts, backoff_ms, run_at, repeat_key)
      select queue, ${newId()}, name, payload, 'waiting', ${DEFAULT_ATTEMPTS}, ${DEFAULT_BACKOFF_MS}, next_run_at, key from s
      on conflict do nothing`.execute(trx);
  });
}

/** Deletes the schedule and its waiting occurrences (a retry waiting for its backoff included). */
export async function deleteSchedule(db: Kysely<DB>, queue: string, key: string): Promise<void> {
  await db.transaction().execute(async (trx) => {
    // Holding the schedule row first means no claim can add an occurrence after our delete;
    // an occurrence being claimed right now (locked, skipped) still runs once.
    await sql`delete from job_schedules where queue = ${queue} and key = ${key}`.execute(trx);
    await sql`
      delete from jobs where queue = ${queue} and id in (
        select id from jobs where queue = ${queue} and repeat_key = ${key} and state = 'waiting'
        for update skip locked
      )`.execute(trx);
  });
}

async function pendingIds(trx: Executor, queue: string, key: string, lock: boolean): Promise<string[]> {
  const { rows } = await sql<{ id: string }>`
    select id from jobs where queue = ${queue} and repeat_key = ${key} and ${PENDING}
    ${lock ? sql`for update skip locked` : sql``}`.execute(trx);
  return rows.map((r) => r.id);
}
