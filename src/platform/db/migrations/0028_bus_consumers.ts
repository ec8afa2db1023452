import type { Kysely } from 'kysely';

// The message bus inputs' consumers (RabbitMQ queues, NATS JetStream durable consumers) as
// each process runs them: state (consuming, or the error that keeps one from consuming) and
// counters since the process started (received, accepted, rejected with the last reason,
// released back to the broker), written every few seconds by the process and read by
// GET /api/ingest/integrations/{id}. Rows of a deleted integration go with it.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('bus_consumers')
    .addColumn('integration_id', 'integer', (c) => c.notNull().references('integrations.id').onDelete('cascade'))
    .addColumn('process', 'text', (c) => c.notNull()) // hostname:pid
    .addColumn('platform', 'text', (c) => c.notNull()) // rabbitmq | nats
    .addColumn('source', 'text', (c) => c.notNull()) // the queue, or stream/consumer
    .addColumn('state', 'text', (c) => c.notNull()) // consuming | error | stopped
    .addColumn('error', 'text')
    .addColumn('received', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('accepted', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('rejected', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('released', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('last_rejection', 'text')
    .addColumn('last_message_at', 'timestamptz')
    .addColumn('started_at', 'timestamptz', (c) => c.notNull())
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
    .addPrimaryKeyConstraint('bus_consumers_pk', ['integration_id', 'process'])
    .execute();
}
