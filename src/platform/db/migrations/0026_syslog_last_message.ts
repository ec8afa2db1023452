import { sql, type Kysely } from 'kysely';

// A syslog listener reports when it last received a message (the console shows it beside the
// counters; docs/decisions/0040-syslog-receiver.md).
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table syslog_listeners add column last_message_at timestamptz`.execute(db);
}
