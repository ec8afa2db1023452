import { sql, type Kysely } from 'kysely';

// An outbox row keeps the W3C traceparent of the batch that wrote it, so that each delivery
// attempt's span joins the batch's trace (docs/observability.md, Traces). Null when the batch
// was not traced.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table delivery_batches add column trace_parent text`.execute(db);
}
