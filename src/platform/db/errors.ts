/**
 * PostgreSQL reports what went wrong as an SQLSTATE in `code`; pg and PGlite both pass it on,
 * so one check serves both deployments (and a sink's remote database).
 */
function sqlState(err: unknown): unknown {
  return typeof err === 'object' && err !== null ? (err as { code?: unknown }).code : undefined;
}

/** A unique index refused the row: the caller usually turns it into a typed conflict. */
export function isUniqueViolation(err: unknown): boolean {
  return sqlState(err) === '23505';
}

/** CREATE TABLE lost a race with another creator of the same table. */
export function isDuplicateTable(err: unknown): boolean {
  return sqlState(err) === '42P07';
}
