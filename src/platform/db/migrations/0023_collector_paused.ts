import { sql, type Kysely } from 'kysely';

// Why a stream's collection waits for the pipeline (the disk under its floor, a destination
// over its backlog budget): set when a cycle pauses, cleared by the next cycle that runs.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table collector_state add column paused_reason text`.execute(db);
}
