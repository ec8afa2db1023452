import { sql, type Kysely } from 'kysely';

// Forward-only: there is no down(). A mistake is fixed by a later migration.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('jobs')
    .addColumn('id', 'uuid', (c) => c.primaryKey())
    .addColumn('queue', 'text', (c) => c.notNull())
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
    .execute();
  // Claiming scans only runnable rows of one queue, oldest first.
  await sql`create index jobs_runnable on jobs (queue, run_at) where state = 'waiting'`.execute(db);
  await sql`create index jobs_leased on jobs (locked_until) where state = 'active'`.execute(db);
  // One pending occurrence per repeating schedule and slot.
  await sql`create unique index jobs_repeat_slot on jobs (repeat_key, run_at) where repeat_key is not null`.execute(db);

  await db.schema
    .createTable('job_schedules')
    .addColumn('key', 'text', (c) => c.primaryKey())
    .addColumn('queue', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('payload', 'jsonb', (c) => c.notNull())
    .addColumn('every_ms', 'integer', (c) => c.notNull())
    .addColumn('next_run_at', 'timestamptz', (c) => c.notNull())
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
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
