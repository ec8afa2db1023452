import { sql, type Kysely } from 'kysely';

// The event store (docs/search.md, decision 0035): an organization's normalized events kept for
// its retention and searched. One table partitioned by UTC day of the event's time; partitions
// are created when a batch first needs one (modules/search/partitions.ts) and dropped by
// retention. The columns queries filter on most sit beside the whole OCSF event (jsonb).
// Indexes were chosen by bench/search.ts (bench/README.md, search): an organization's time
// range, the class within it, and a lookup by event id.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table events (
      time timestamptz not null,
      organization_id integer not null,
      integration_id integer not null,
      stream text not null,
      class_uid integer,
      category_uid integer,
      activity_id integer,
      severity_id integer,
      event_id uuid not null,
      event jsonb not null
    ) partition by range (time)`.execute(db);
  await sql`create index events_org_time on events (organization_id, time)`.execute(db);
  await sql`create index events_org_class_time on events (organization_id, class_uid, time)`.execute(db);
  await sql`create index events_event_id on events (event_id)`.execute(db);
  // The cidr operator's cast of a text that looks like an address (modules/search/query-sql.ts):
  // null instead of an error for one that is not.
  await sql`
    create function weir_try_inet(t text) returns inet language plpgsql immutable strict parallel safe as $$
    begin
      return t::inet;
    exception when others then
      return null;
    end $$`.execute(db);

  // Saved queries (/api/queries/): a query definition (docs/search.md) under a name.
  await db.schema
    .createTable('saved_queries')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'integer', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('query', 'jsonb', (c) => c.notNull())
    .addColumn('created_by', 'integer')
    .addColumn('updated_by', 'integer')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await sql`create unique index saved_queries_name on saved_queries (organization_id, lower(name))`.execute(db);

  // Schedules (/api/schedules/): a saved query run on a cron expression or an interval by the beat.
  await db.schema
    .createTable('schedules')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'integer', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('query_id', 'text', (c) => c.notNull().references('saved_queries.id').onDelete('restrict'))
    .addColumn('cron', 'text')
    .addColumn('timezone', 'text', (c) => c.notNull().defaultTo('UTC'))
    .addColumn('interval_seconds', 'integer')
    .addColumn('notify', 'jsonb', (c) => c.notNull())
    .addColumn('enabled', 'boolean', (c) => c.notNull().defaultTo(true))
    // The slot of the last run enqueued: the next is the first slot after it.
    .addColumn('last_slot', 'timestamptz')
    .addColumn('next_run_at', 'timestamptz', (c) => c.notNull())
    .addColumn('created_by', 'integer')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await sql`create unique index schedules_name on schedules (organization_id, lower(name))`.execute(db);
  await sql`create index schedules_due on schedules (next_run_at) where enabled`.execute(db);

  // Search history (/api/search/history): one row per run, its result and CSV (encoded
  // base64(gzip), pipeline/batch-codec) kept until they expire (the CSV first); the row itself
  // stays for the history's days.
  await db.schema
    .createTable('search_runs')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'integer', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('user_id', 'integer')
    .addColumn('actor', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull()) // interactive, scheduled
    .addColumn('query_id', 'text')
    .addColumn('schedule_id', 'text')
    .addColumn('slot', 'timestamptz')
    .addColumn('query', 'jsonb', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull()) // queued, running, completed, failed, cancelled
    .addColumn('progress', 'real', (c) => c.notNull().defaultTo(0))
    .addColumn('cancel_requested', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('matched', 'bigint')
    .addColumn('returned', 'integer')
    .addColumn('capped', 'boolean')
    .addColumn('took_ms', 'integer')
    .addColumn('error', 'text')
    .addColumn('result', 'text')
    .addColumn('csv', 'text')
    .addColumn('notified', 'jsonb')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('started_at', 'timestamptz')
    .addColumn('finished_at', 'timestamptz')
    .addColumn('result_expires_at', 'timestamptz')
    .addColumn('csv_expires_at', 'timestamptz')
    .execute();
  await sql`create index search_runs_user on search_runs (user_id, created_at desc)`.execute(db);
  await sql`create index search_runs_org on search_runs (organization_id, created_at desc)`.execute(db);
  await sql`create index search_runs_schedule on search_runs (schedule_id, created_at desc) where schedule_id is not null`.execute(
    db,
  );
  // One run per schedule and slot, however many beats enqueue it.
  await sql`create unique index search_runs_slot on search_runs (schedule_id, slot) where schedule_id is not null`.execute(
    db,
  );
  await sql`create index search_runs_result_expiry on search_runs (result_expires_at) where result is not null`.execute(
    db,
  );
  await sql`create index search_runs_csv_expiry on search_runs (csv_expires_at) where csv is not null`.execute(db);

  // Replays: stored events matching a query re-delivered to one destination, as a job.
  await db.schema
    .createTable('replays')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'integer', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('destination_id', 'text', (c) => c.notNull())
    .addColumn('query', 'jsonb', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull()) // queued, running, completed, failed, cancelled
    .addColumn('cancel_requested', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('total', 'bigint')
    .addColumn('replayed', 'bigint', (c) => c.notNull().defaultTo(0))
    // Keyset position of the last event replayed (time, event id): a retried job resumes after it.
    .addColumn('cursor_time', 'timestamptz')
    .addColumn('cursor_id', 'uuid')
    .addColumn('error', 'text')
    .addColumn('created_by', 'integer')
    .addColumn('actor', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('finished_at', 'timestamptz')
    .execute();
  await sql`create index replays_org on replays (organization_id, created_at desc)`.execute(db);

  // A scheduled search's CSV travels with its e-mail: JSON [{filename, content_type, content}]
  // (text content), dropped with the body once the delivery is final.
  await sql`alter table email_deliveries add column attachments text`.execute(db);
}
