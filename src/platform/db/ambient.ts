// The unit of work of a request or a job: one transaction that every store joins without
// passing it around. A mutating request runs in one (platform/http/routes.ts), so its
// changes and its audit entry commit or roll back together. On PGlite, a single
// connection, this also keeps a store from waiting on the connection its own request holds.
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Kysely, Transaction } from 'kysely';
import type { DB } from './schema.js';

const current = new AsyncLocalStorage<Transaction<DB>>();

/** The open transaction of this unit of work, or the database itself. */
export function executor(db: Kysely<DB>): Kysely<DB> {
  return current.getStore() ?? db;
}

/** Runs fn in a transaction, or in the one already open (nested calls join it). */
export function inTransaction<T>(db: Kysely<DB>, fn: () => Promise<T>): Promise<T> {
  if (current.getStore()) return fn();
  return db.transaction().execute((trx) => current.run(trx, fn));
}

/** Runs fn outside any open transaction (e.g. recording a failure after a rollback). */
export function outsideTransaction<T>(fn: () => Promise<T>): Promise<T> {
  return current.exit(fn);
}
