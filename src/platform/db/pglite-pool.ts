// A pg-Pool-shaped adapter over PGlite so that Kysely's own PostgresDialect drives both
// deployments with one SQL dialect. PGlite is a single connection: the pool hands it
// out to one holder at a time, so a Kysely transaction owns it until commit/rollback.
// (Why not a published dialect package: see docs/decisions/0002-pglite-dialect.md.)

import type { PGlite } from '@electric-sql/pglite';
import type { PostgresPool, PostgresPoolClient, PostgresQueryResult } from 'kysely';

type Command = PostgresQueryResult<unknown>['command'];
const COMMANDS = new Set<string>(['UPDATE', 'DELETE', 'INSERT', 'SELECT', 'MERGE']);

function commandOf(sqlText: string): Command {
  const word = /^\s*(\w+)/.exec(sqlText)?.[1]?.toUpperCase() ?? 'SELECT';
  return (COMMANDS.has(word) ? word : 'SELECT') as Command;
}

export class PGlitePool implements PostgresPool {
  #tail: Promise<void> = Promise.resolve();
  readonly #db: PGlite;

  constructor(db: PGlite) {
    this.#db = db;
  }

  async connect(): Promise<PostgresPoolClient> {
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const previous = this.#tail;
    this.#tail = previous.then(() => held);
    await previous;
    const db = this.#db;
    let released = false;
    const client = {
      async query<R>(sqlText: string, parameters: ReadonlyArray<unknown>): Promise<PostgresQueryResult<R>> {
        const result = await db.query<R>(sqlText, parameters as unknown[]);
        return { command: commandOf(sqlText), rowCount: result.affectedRows ?? result.rows.length, rows: result.rows };
      },
      release() {
        if (released) return;
        released = true;
        release();
      },
    };
    return client as PostgresPoolClient;
  }

  async end(): Promise<void> {
    await this.#tail;
    await this.#db.close();
  }
}
