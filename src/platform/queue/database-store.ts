// The SQL of the database queue. Every time is the database's now(), never the process
// clock, so several processes agree on what is due and what has expired.
//
// Lock order, which keeps the repeat machinery free of deadlocks: a claim locks job rows
// (SKIP LOCKED) and then, for a first start of a repeat occurrence, its schedule row.
// repeat() and removeRepeat() lock the schedule row first and never wait on a job row
// (SKIP LOCKED, and no insert that could wait on a row a claim holds).
import { sql, type Kysely, type RawBuilder } from 'kysely';
import { newId } from '../../core/ids.js';
import { BODY_REF_PREFIX, type BodyLog } from '../bodylog/log.js';
import { keepBytes } from '../bodylog/stored.js';
import type { DB, Executor } from '../db/index.js';
import type { JobCounts } from './port.js';
import type { ResolvedJobOptions } from './options.js';
import { encodePayload } from './payload-codec.js';

export interface ClaimedRow {
  id: string;
  name: string;
  payload: unknown;
  payload_gz: string | null;
  attempts_made: number;
  max_attempts: number;
  repeat_key: string | null;
  run_at: Date;
}

const interval = (ms: number | RawBuilder<unknown>) => sql`(${ms}::float8 * interval '1 millisecond')`;
/** Exponential backoff, capped so the interval stays in range whatever the attempt count. */
const RETRY_AT = sql`now() + least(backoff_ms * power(2, attempts_made - 1), 2592000000) * interval '1 millisecond'`;

export async function insertJob(
  db: Executor,
  queue: string,
  name: string,
  payload: unknown,
  options: ResolvedJobOptions,
  bodies?: BodyLog,
): Promise<string> {
  const id = options.jobId ?? newId();
  const encoded = await encodePayload(payload);
  const gz = encoded.gz ? await keepBytes(bodies, encoded.gz) : null;
  await sql`
    insert into jobs (queue, id, name, payload, payload_gz, state, max_attempts, backoff_ms, run_at)
    values (${queue}, ${id}, ${name}, ${encoded.json}::jsonb, ${gz}, 'waiting', ${options.attempts}, ${options.backoffMs},
            now() + ${interval(options.delayMs)})
    on conflict (queue, id) do nothing`.execute(db);
  return id;
}

/** Takes up to `limit` due jobs; starting a repeat occurrence schedules the next one. */
export async function claim(
  db: Kysely<DB>,
  queue: string,
  limit: number,
  consumer: string,
  leaseMs: number,
): Promise<ClaimedRow[]> {
  return db.transaction().execute(async (trx) => {
    const { rows } = await sql<ClaimedRow>`
      with due as materialized (
        select id from jobs
        where queue = ${queue} and state = 'waiting' and run_at <= now()
        order by run_at
        limit ${limit}
        for update skip locked
      )
      update jobs set state = 'active', locked_by = ${consumer}, locked_until = now() + ${interval(leaseMs)},
                      attempts_made = attempts_made + 1
      from due
      where jobs.queue = ${queue} and jobs.id = due.id
      returning jobs.id, jobs.name, jobs.payload, jobs.payload_gz, jobs.attempts_made, jobs.max_attempts, jobs.repeat_key, jobs.run_at`.execute(
      trx,
    );
    for (const row of rows) {
      if (row.repeat_key !== null && row.attempts_made === 1) await scheduleNext(trx, queue, row.id);
    }
    return rows.sort((a, b) => a.run_at.getTime() - b.run_at.getTime());
  });
}

// The next slot is the first run_at + k*every (k >= 1) after now: a schedule that was down
// for a while runs once on return instead of catching up on every missed slot. A schedule
// deleted meanwhile matches no row, so nothing is inserted.
async function scheduleNext(trx: Executor, queue: string, occurrenceId: string): Promise<void> {
  await sql`
    with s as (
      update job_schedules s
      set next_run_at = j.run_at + ${interval(sql`s.every_ms * (floor(extract(epoch from (now() - j.run_at)) * 1000 / s.every_ms) + 1)`)},
          updated_at = now()
      from jobs j
      where j.queue = ${queue} and j.id = ${occurrenceId} and s.queue = j.queue and s.key = j.repeat_key
      returning s.queue, s.key, s.name, s.payload, s.next_run_at, j.max_attempts, j.backoff_ms
    )
    insert into jobs (queue, id, name, payload, state, max_attempts, backoff_ms, run_at, repeat_key)
    select queue, ${newId()}, name, payload, 'waiting', max_attempts, backoff_ms, next_run_at, key from s
    on conflict do nothing`.execute(trx);
}

export async function complete(
  db: Executor,
  queue: string,
  id: string,
  consumer: string,
  attempt: number,
): Promise<boolean> {
  // A completed job's payload is never read again: its body in the log may go.
  const { rows } = await sql`
    update jobs set state = 'completed', finished_at = now(), locked_by = null, locked_until = null,
      payload_gz = case when payload_gz like ${`${BODY_REF_PREFIX}%`} then null else payload_gz end
    where queue = ${queue} and id = ${id} and state = 'active' and locked_by = ${consumer} and attempts_made = ${attempt}
    returning 1`.execute(db);
  return rows.length > 0;
}

/** Back to waiting with backoff while attempts remain, else failed. Returns the new state. */
export async function fail(
  db: Executor,
  queue: string,
  id: string,
  consumer: string,
  attempt: number,
  error: string,
): Promise<'waiting' | 'failed' | undefined> {
  const { rows } = await sql<{ state: 'waiting' | 'failed' }>`
    update jobs set
      state = case when attempts_made < max_attempts then 'waiting' else 'failed' end,
      run_at = case when attempts_made < max_attempts then ${RETRY_AT} else run_at end,
      finished_at = case when attempts_made < max_attempts then null else now() end,
      last_error = ${error}, locked_by = null, locked_until = null
    where queue = ${queue} and id = ${id} and state = 'active' and locked_by = ${consumer} and attempts_made = ${attempt}
    returning state`.execute(db);
  return rows[0]?.state;
}

/** Heartbeat: extends the leases this consumer holds; returns the ids still held. */
export async function renew(
  db: Executor,
  queue: string,
  ids: string[],
  consumer: string,
  leaseMs: number,
): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const { rows } = await sql<{ id: string }>`
    update jobs set locked_until = now() + ${interval(leaseMs)}
    where queue = ${queue} and id = any(${ids}::text[]) and state = 'active' and locked_by = ${consumer}
    returning id`.execute(db);
  return new Set(rows.map((r) => r.id));
}

/**
 * Stalled-job recovery: active jobs whose lease ran out (their consumer died or hung) go
 * back to waiting, or to failed when they have no attempt left. Any consumer runs it.
 */
export async function sweep(db: Executor, limit = 100): Promise<string[]> {
  const { rows } = await sql<{ queue: string }>`
    with expired as materialized (
      select queue, id from jobs
      where state = 'active' and locked_until < now()
      limit ${limit}
      for update skip locked
    )
    update jobs set
      state = case when attempts_made < max_attempts then 'waiting' else 'failed' end,
      run_at = case when attempts_made < max_attempts then now() else run_at end,
      finished_at = case when attempts_made < max_attempts then null else now() end,
      last_error = 'stalled', locked_by = null, locked_until = null
    from expired
    where jobs.queue = expired.queue and jobs.id = expired.id
    returning jobs.queue`.execute(db);
  return rows.map((r) => r.queue);
}

/** Milliseconds until the earliest waiting job of the queue is due; null when none waits. */
export async function msUntilNextDue(db: Executor, queue: string): Promise<number | null> {
  const { rows } = await sql<{ wait_ms: number | null }>`
    select (extract(epoch from (min(run_at) - now())) * 1000)::float8 as wait_ms
    from jobs where queue = ${queue} and state = 'waiting'`.execute(db);
  const ms = rows[0]?.wait_ms;
  return ms === null || ms === undefined ? null : Number(ms);
}

export async function counts(db: Executor, queue: string): Promise<JobCounts> {
  const { rows } = await sql<JobCounts>`
    select
      count(*) filter (where state = 'waiting' and run_at <= now())::int as waiting,
      count(*) filter (where state = 'active')::int as active,
      count(*) filter (where state = 'waiting' and run_at > now())::int as delayed,
      count(*) filter (where state = 'completed')::int as completed,
      count(*) filter (where state = 'failed')::int as failed
    from jobs where queue = ${queue}`.execute(db);
  return rows[0] ?? { waiting: 0, active: 0, delayed: 0, completed: 0, failed: 0 };
}

/** The body-log segments the queue's rows name. */
export async function bodySegments(db: Executor): Promise<number[]> {
  const { rows } = await sql<{ seq: number }>`
    select distinct split_part(payload_gz, ':', 2)::int as seq from jobs where payload_gz like ${`${BODY_REF_PREFIX}%`}`.execute(
    db,
  );
  return rows.map((r) => r.seq);
}

/** Deletes finished jobs older than the cutoff, in batches so no statement holds locks long. */
export async function prune(db: Executor, olderThanMs: number, batch = 5000): Promise<number> {
  let total = 0;
  for (;;) {
    const { rows } = await sql`
      delete from jobs where (queue, id) in (
        select queue, id from jobs
        where state in ('completed', 'failed') and finished_at < now() - ${interval(olderThanMs)}
        limit ${batch}
      )
      returning 1`.execute(db);
    total += rows.length;
    if (rows.length < batch) return total;
  }
}

export function json(value: unknown): string {
  return JSON.stringify(value === undefined ? null : value);
}
