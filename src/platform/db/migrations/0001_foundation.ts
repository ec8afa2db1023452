import { sql, type Kysely } from 'kysely';

// Forward-only: there is no down(). A mistake is fixed by a later migration.
export async function up(db: Kysely<unknown>): Promise<void> {
  // The database queue (platform/queue/database.ts). The id is text so a caller-given jobId
  // (idempotent enqueue) can be the id; it is unique per queue, as in BullMQ.
  await db.schema
    .createTable('jobs')
    .addColumn('queue', 'text', (c) => c.notNull())
    .addColumn('id', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('payload', 'jsonb', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('attempts_made', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('max_attempts', 'integer', (c) => c.notNull())
    .addColumn('backoff_ms', 'integer', (c) => c.notNull())
    .addColumn('run_at', 'timestamptz', (c) => c.notNull())
    .addColumn('locked_by', 'text')
    .addColumn('locked_until', 'timestamptz')
    .addColumn('last_error', 'text')
    .addColumn('repeat_key', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('finished_at', 'timestamptz')
    .addPrimaryKeyConstraint('jobs_pkey', ['queue', 'id'])
    .addCheckConstraint('jobs_state', sql`state in ('waiting', 'active', 'completed', 'failed')`)
    .execute();
  // Claiming scans only runnable rows of one queue, oldest first.
  await sql`create index jobs_runnable on jobs (queue, run_at) where state = 'waiting'`.execute(db);
  // The stalled-job sweep looks only at leases that ran out.
  await sql`create index jobs_leased on jobs (locked_until) where state = 'active'`.execute(db);
  // Pruning finished jobs by age.
  await sql`create index jobs_finished on jobs (finished_at) where state in ('completed', 'failed')`.execute(db);
  // At most one not-yet-started occurrence per repeating schedule: the claim that starts an
  // occurrence inserts the next one, and this index turns a racing second insert into a no-op.
  // Retries and stall recoveries (attempts_made > 0) are outside it.
  await sql`create unique index jobs_repeat_pending on jobs (queue, repeat_key)
    where repeat_key is not null and state = 'waiting' and attempts_made = 0`.execute(db);

  await db.schema
    .createTable('job_schedules')
    .addColumn('queue', 'text', (c) => c.notNull())
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('payload', 'jsonb', (c) => c.notNull())
    .addColumn('every_ms', 'integer', (c) => c.notNull())
    .addColumn('next_run_at', 'timestamptz', (c) => c.notNull())
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('job_schedules_pkey', ['queue', 'key'])
    .execute();

  await db.schema
    .createTable('process_heartbeats')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('role', 'text', (c) => c.notNull())
    .addColumn('hostname', 'text', (c) => c.notNull())
    .addColumn('pid', 'integer', (c) => c.notNull())
    .addColumn('started_at', 'timestamptz', (c) => c.notNull())
    .addColumn('last_seen_at', 'timestamptz', (c) => c.notNull())
    .addColumn('queue_backend', 'text', (c) => c.notNull())
    .execute();
}
