import { sql, type Kysely } from 'kysely';

// The history of one object (a mapping definition's publications and rollbacks, for
// GET /api/mappings/{id}/audit) reads the audit trail by target: an index keeps that read
// from scanning a growing trail.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create index audit_log_target on audit_log (target_type, target_id, seq)`.execute(db);
}
