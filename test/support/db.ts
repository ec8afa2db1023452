// Test databases: embedded PGlite in memory by default; with DATABASE_URL set, a fresh
// PostgreSQL database per call, dropped afterwards. The same tests run on both.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { KyselyPlugin } from 'kysely';
import pg from 'pg';
import { inject } from 'vitest';
import { openDatabase, migrate, type Database } from '../../src/platform/db/index.js';

export const usingPostgres = Boolean(process.env.DATABASE_URL);

export interface TestDatabase {
  database: Database;
  /** The URL of the fresh PostgreSQL database, when on PostgreSQL. */
  url: string | undefined;
  close(): Promise<void>;
}

async function adminQuery(baseUrl: string, text: string): Promise<void> {
  const client = new pg.Client({ connectionString: baseUrl });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

/** A fresh, empty PostgreSQL database; returns its URL and a drop function. */
export async function freshPostgresDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const base = process.env.DATABASE_URL;
  if (!base) throw new Error('DATABASE_URL is not set');
  const name = `weir_t_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
  await adminQuery(base, `create database ${name}`);
  const url = new URL(base);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: () => adminQuery(base, `drop database if exists ${name} with (force)`),
  };
}

let snapshot: Blob | undefined;
/** The migrated template made once per run by global-setup.ts (embedded only). */
function migratedSnapshot(): Blob | undefined {
  if (snapshot) return snapshot;
  const file = inject('pgliteSnapshot');
  if (file) snapshot = new Blob([readFileSync(file)]);
  return snapshot;
}

export async function createTestDatabase(options: { migrate?: boolean } = {}): Promise<TestDatabase> {
  let url: string | undefined;
  let drop: (() => Promise<void>) | undefined;
  if (usingPostgres) {
    ({ url, drop } = await freshPostgresDatabase());
  }
  const template = usingPostgres || options.migrate === false ? undefined : migratedSnapshot();
  const database = await openDatabase({ url, dataDir: 'memory://', poolMax: 5, snapshot: template });
  if (options.migrate !== false) await migrate(database.db);
  return {
    database,
    url,
    async close() {
      await database.close();
      await drop?.();
    },
  };
}

/** A Kysely plugin counting every statement sent through the database it is added to (`db.withPlugin(counter.plugin)`). */
export function statementCounter(): { plugin: KyselyPlugin; count(): number; reset(): void } {
  let n = 0;
  return {
    plugin: {
      transformQuery: (args) => {
        n += 1;
        return args.node;
      },
      transformResult: async (args) => args.result,
    },
    count: () => n,
    reset: () => void (n = 0),
  };
}
