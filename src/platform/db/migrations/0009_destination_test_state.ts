import type { Kysely } from 'kysely';

// The last connection test of a destination (POST .../test), beside its last delivery: a
// successful test after failures is news that the destination works again, so health stops
// showing the old error as current even when no event is waiting to prove it.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('destination_state')
    .addColumn('last_test_at', 'timestamptz')
    .addColumn('last_test_ok', 'boolean')
    .execute();
}
