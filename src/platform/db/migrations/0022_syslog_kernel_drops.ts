import { sql, type Kysely } from 'kysely';

// UDP syslog listeners report what the kernel dropped before Weir read it (the socket's drop
// counter: its receive buffer was full) and the receive buffer the kernel granted.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table syslog_listeners add column dropped_kernel bigint not null default 0`.execute(db);
  await sql`alter table syslog_listeners add column receive_buffer_bytes integer`.execute(db);
}
