import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { Kysely, Migrator, PostgresDialect, sql, type Transaction } from 'kysely';
import pg from 'pg';
import type { PGlite as PGliteInstance } from '@electric-sql/pglite';
import type { Logger } from 'pino';
import { migrations } from './migrations/index.js';
import { PGlitePool } from './pglite-pool.js';
import type { DB } from './schema.js';

export type { DB } from './schema.js';
/** What a store method runs its queries on: the database or an open transaction. */
export type Executor = Kysely<DB> | Transaction<DB>;

export interface Database {
  readonly db: Kysely<DB>;
  readonly kind: 'pglite' | 'postgres';
  ping(): Promise<void>;
  /** Embedded only: a dump of the whole database (templates for tests, backups). */
  snapshot(): Promise<Blob>;
  close(): Promise<void>;
}

export interface DatabaseOptions {
  /** postgres://... ; when absent, embedded PGlite. */
  url?: string | undefined;
  /** PGlite directory; `memory://` or undefined keeps it in memory (tests). */
  dataDir?: string | undefined;
  poolMax?: number;
  logger?: Logger;
  /** PGlite only: start from a dump of another database (PGlite.dumpDataDir), e.g. a migrated template. */
  snapshot?: Blob;
  /** PGlite only: its shared buffers (WEIR_PGLITE_SHARED_BUFFERS; default 16MB). */
  sharedBuffers?: string;
  /** PGlite only: create a new data directory in this thread (the worker that creates it). */
  createHere?: boolean;
}

// Timestamps without zone are read as UTC, int8 counts as numbers: the same values out
// of both drivers.
const INT8 = 20;
const TIMESTAMP = 1114;
const parseUtcTimestamp = (v: string) => new Date(`${v.replace(' ', 'T')}Z`);
pg.types.setTypeParser(INT8, (v: string) => Number(v));
pg.types.setTypeParser(TIMESTAMP, parseUtcTimestamp);

export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  if (options.url) {
    const pool = new pg.Pool({ connectionString: options.url, max: options.poolMax ?? 10 });
    pool.on('error', (err) => options.logger?.warn({ err }, 'idle database connection failed'));
    const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
    return database(db, 'postgres');
  }
  const { PGlite } = await import('@electric-sql/pglite');
  let dataDir: string | undefined;
  if (options.dataDir && options.dataDir !== 'memory://') {
    dataDir = path.resolve(options.dataDir);
    await mkdir(dataDir, { recursive: true });
  }
  // A new cluster is made (initdb, then every migration) in a worker thread that then exits:
  // initdb grows a WebAssembly heap by some 500 MB that a heap never gives back, and this
  // process would carry it for as long as it runs (bench/README.md, memory).
  if (dataDir && !options.createHere && !options.snapshot && !existsSync(path.join(dataDir, 'PG_VERSION')))
    await createInWorker(dataDir, options.sharedBuffers);
  const lite = await PGlite.create({
    ...(dataDir ? { dataDir } : {}),
    ...(options.snapshot ? { loadDataDir: options.snapshot } : {}),
    // PostgreSQL's 128MB of shared buffers are WebAssembly memory here, resident once touched;
    // the files under them stay in the kernel's page cache.
    postgresqlconf: [`shared_buffers=${options.sharedBuffers ?? DEFAULT_SHARED_BUFFERS}`],
    parsers: { [INT8]: (v: string) => Number(v), [TIMESTAMP]: parseUtcTimestamp },
  });
  const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool: new PGlitePool(lite) }) });
  return database(db, 'pglite', lite);
}

const DEFAULT_SHARED_BUFFERS = '16MB';

/** Creates and migrates a new embedded data directory in a worker thread; its memory goes with the thread. */
async function createInWorker(dataDir: string, sharedBuffers: string | undefined): Promise<void> {
  // Built code runs the compiled worker; tests run the TypeScript source through tsx.
  const source = import.meta.url.endsWith('.ts');
  const entry = new URL(source ? './pglite-create.ts' : './pglite-create.js', import.meta.url).href;
  // The TypeScript source (tests, `npm run dev`) needs tsx's loader in the thread, registered before the import.
  const load = source
    ? `import('tsx/esm/api').then(({ register }) => { register(); return import(${JSON.stringify(entry)}); })`
    : `import(${JSON.stringify(entry)})`;
  const worker = new Worker(load, { eval: true, workerData: { dataDir, sharedBuffers } });
  await new Promise<void>((resolve, reject) => {
    let failure: unknown;
    worker.once('error', (err) => (failure = err));
    worker.once('exit', (code) =>
      code === 0 && !failure
        ? resolve()
        : reject(failure ?? new Error(`creating the embedded database in ${dataDir} failed (worker exit ${code})`)),
    );
  });
}

function database(db: Kysely<DB>, kind: Database['kind'], lite?: PGliteInstance): Database {
  return {
    db,
    kind,
    async snapshot() {
      if (!lite) throw new Error('snapshots exist only for the embedded database');
      return lite.dumpDataDir('none');
    },
    async ping() {
      await sql`select 1`.execute(db);
    },
    async close() {
      await db.destroy();
    },
  };
}

/** Applies pending migrations. Safe when several processes start at once (advisory lock). */
export async function migrate(db: Kysely<DB>): Promise<string[]> {
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => migrations },
    migrationTableName: 'weir_migrations',
    migrationLockTableName: 'weir_migrations_lock',
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

/** Runs fn in one transaction: every store method given `trx` commits or rolls back together. */
export function transaction<T>(db: Kysely<DB>, fn: (trx: Transaction<DB>) => Promise<T>): Promise<T> {
  return db.transaction().execute(fn);
}
