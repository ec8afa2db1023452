import type { Kysely } from 'kysely';

// The syslog receiver's listeners as each process runs them: state (listening, or the error
// that keeps one from listening) and counters since the process started (received, accepted,
// dropped UDP datagrams, refused frames), written every few seconds by the process and read by
// GET /api/ingest/integrations/{id}. Rows of a deleted integration go with it.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('syslog_listeners')
    .addColumn('integration_id', 'integer', (c) => c.notNull().references('integrations.id').onDelete('cascade'))
    .addColumn('protocol', 'text', (c) => c.notNull())
    .addColumn('port', 'integer', (c) => c.notNull())
    .addColumn('process', 'text', (c) => c.notNull()) // hostname:pid
    .addColumn('state', 'text', (c) => c.notNull()) // listening | error | stopped
    .addColumn('error', 'text')
    .addColumn('received', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('accepted', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('dropped', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('refused', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('connections', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('started_at', 'timestamptz', (c) => c.notNull())
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
    .addPrimaryKeyConstraint('syslog_listeners_pk', ['integration_id', 'protocol', 'port', 'process'])
    .execute();
}
