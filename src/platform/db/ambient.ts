// The unit of work of a request or a job: one transaction that every store joins without
// passing it around. A mutating request runs in one (platform/http/routes.ts), so its
// changes and its audit entry commit or roll back together. On PGlite, a single
// connection, this also keeps a store from waiting on the connection its own request holds.
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Kysely, Transaction } from 'kysely';
import type { DB } from './schema.js';

interface Unit {
  trx: Transaction<DB>;
  /** Work that must see the committed state (cache invalidation, notifications). */
  afterCommit: (() => Promise<void>)[];
  /** Work for when the transaction has ended, committed or not (releasing what it pinned). */
  settled: (() => void)[];
}

const current = new AsyncLocalStorage<Unit>();

/** The open transaction of this unit of work, or the database itself. */
export function executor(db: Kysely<DB>): Kysely<DB> {
  return current.getStore()?.trx ?? db;
}

/** Runs fn in a transaction, or in the one already open (nested calls join it). */
export async function inTransaction<T>(db: Kysely<DB>, fn: () => Promise<T>): Promise<T> {
  if (current.getStore()) return fn();
  const hooks: Unit['afterCommit'] = [];
  const settled: Unit['settled'] = [];
  let result: T;
  try {
    result = await db.transaction().execute((trx) => current.run({ trx, afterCommit: hooks, settled }, fn));
  } finally {
    for (const hook of settled) hook();
  }
  for (const hook of hooks) await hook();
  return result;
}

/**
 * Runs fn in one read-only REPEATABLE READ transaction: every query of fn reads the same
 * snapshot, so counts read by separate queries (the ledger's terms) agree with each other
 * whatever commits meanwhile. Inside an open unit of work fn joins it instead.
 */
export async function inSnapshot<T>(db: Kysely<DB>, fn: () => Promise<T>): Promise<T> {
  if (current.getStore()) return fn();
  return db
    .transaction()
    .setIsolationLevel('repeatable read')
    .setAccessMode('read only')
    .execute((trx) => current.run({ trx, afterCommit: [], settled: [] }, fn));
}

/**
 * Runs fn once the open transaction has committed (never if it rolls back), or at once
 * outside a transaction. Its failure surfaces to the caller of inTransaction.
 */
export async function afterCommit(fn: () => Promise<void>): Promise<void> {
  const unit = current.getStore();
  if (unit) unit.afterCommit.push(fn);
  else await fn();
}

/** Runs fn once the open transaction has ended, committed or rolled back, or at once outside a transaction. */
export function afterSettle(fn: () => void): void {
  const unit = current.getStore();
  if (unit) unit.settled.push(fn);
  else fn();
}

/** Runs fn outside any open transaction (e.g. recording a failure after a rollback). */
export function outsideTransaction<T>(fn: () => Promise<T>): Promise<T> {
  return current.exit(fn);
}
