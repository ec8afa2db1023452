import { sql, type Kysely } from 'kysely';

// The dispatcher's routing stage is retired (docs/decisions/0064-retire-routing-stage.md):
// the one pass routes every batch it normalizes. Normalized batches an earlier version left
// `route_state = 'pending'` are handed to it here, one job each on the database queue's
// `delivery` queue (modules/delivery/leftovers.ts, ROUTE_LEFTOVER_JOB), which routes the
// batch with the pass's routing and marks it done in the same transaction. The rows stay
// pending until then, so the ledger, the dashboard and the health answers count their
// events as pending, as before. Routing needs compiled routes, which a migration may not
// import: only the job's name and payload are shared, and a test holds them equal.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    insert into jobs (queue, id, name, payload, state, max_attempts, backoff_ms, run_at)
    select 'delivery', 'route-leftover:' || id, 'delivery.route_leftover', jsonb_build_object('batch_id', id),
           'waiting', 10, 1000, now()
    from normalized_batches where route_state = 'pending'
    on conflict do nothing`.execute(db);
  // Nothing writes a pending batch any more: a row written without a state is a done mark.
  await sql`alter table normalized_batches alter column route_state set default 'done'`.execute(db);
}
