// The postgres sink's connection pool: a small pg.Pool per sink, pointed at the address the
// SSRF guard resolved (and resolved again after a connection failure), with queries cut off
// when the delivery's signal aborts.
import { isIP } from 'node:net';
// The postgres sink is a PostgreSQL client by nature: this adapter is the one pipeline file that uses pg.
// eslint-disable-next-line no-restricted-imports
import pg from 'pg';
import type { Redactor } from '../../../core/redaction.js';
import { isDuplicateTable, isUniqueViolation } from '../../../platform/db/errors.js';
import type { Logger } from '../../../platform/logger.js';
import type { NetPolicy } from '../../../platform/net/policy.js';
import { DeliveryError, type TestResult } from '../types.js';
import { pgError, qualified } from './sql.js';

export interface PgSettings {
  host: string;
  port: number;
  database: string;
  user: string;
  password?: string;
  schema: string;
  table: string;
  ssl: 'disable' | 'require' | 'verify-full';
  sslCa?: string;
}

export interface PgConnection {
  query(sql: string, params: unknown[], signal: AbortSignal): Promise<void>;
  /** Creates the table when it is missing (nothing when it exists: CREATE on the schema is not needed then). */
  ddl(statements: string[], signal: AbortSignal): Promise<void>;
  /** `select 1`, then the table's existence and the role's privileges. */
  check(createTable: boolean, signal: AbortSignal): Promise<Omit<TestResult, 'latency_ms'>>;
  close(): Promise<void>;
}

const timeout = () => new DeliveryError('timeout', 'PostgreSQL delivery timed out');

/** Settles with `work` unless the signal aborts first; then `cancel` runs and the result is dropped. */
function race<T>(work: Promise<T>, signal: AbortSignal, cancel: () => void): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => {
      cancel();
      reject(timeout());
    };
    if (signal.aborted) {
      work.catch(() => undefined);
      return onAbort();
    }
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      },
    );
  });
}

export function createPgConnection(s: PgSettings, net: NetPolicy, logger: Logger, redact: Redactor): PgConnection {
  let pool: Promise<pg.Pool> | null = null;
  const table = qualified(s.schema, s.table);

  async function build(): Promise<pg.Pool> {
    const { address } = await net.resolve(s.host);
    // Certificates are checked against the configured name while the socket goes to the approved address.
    const servername = isIP(s.host) ? undefined : s.host;
    const ssl =
      s.ssl === 'disable'
        ? false
        : s.ssl === 'require'
          ? { rejectUnauthorized: false, servername }
          : { rejectUnauthorized: true, servername, ca: s.sslCa };
    const p = new pg.Pool({
      host: address,
      port: s.port,
      database: s.database,
      user: s.user,
      password: s.password,
      ssl,
      max: 4,
      idleTimeoutMillis: 30_000,
      connectionTimeoutMillis: 15_000,
      keepAlive: true,
      application_name: 'weir',
      allowExitOnIdle: true,
    });
    // An idle client's error (server restart) must not crash the dispatcher.
    p.on('error', (err) =>
      logger.warn({ err: pgError(err, redact).message }, 'postgres destination: idle connection failed'),
    );
    return p;
  }

  function getPool(): Promise<pg.Pool> {
    pool ??= build().catch((err: unknown) => {
      pool = null;
      throw err;
    });
    return pool;
  }

  /** After a connection failure the next use resolves the host again and opens fresh connections. */
  function dropPool(p: pg.Pool): void {
    void pool?.then((current) => {
      if (current !== p) return;
      pool = null;
      p.end().catch(() => undefined);
    });
  }

  async function withClient<T>(signal: AbortSignal, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    if (signal.aborted) throw timeout();
    let p: pg.Pool;
    try {
      p = await getPool();
    } catch (err) {
      throw pgError(err, redact);
    }
    let client: pg.PoolClient;
    try {
      const connecting = p.connect();
      client = await race(
        connecting,
        signal,
        () =>
          void connecting.then(
            (c) => c.release(true),
            () => undefined,
          ),
      );
    } catch (err) {
      const e = pgError(err, redact);
      if (e.kind === 'connection' || e.kind === 'dns') dropPool(p);
      throw e;
    }
    let destroyed = false;
    const destroy = () => {
      if (destroyed) return;
      destroyed = true;
      // A server busy with the statement (waiting on a lock, say) does not notice a closed socket:
      // cancel it so it does not commit long after the engine gave up (a late commit would only
      // be a duplicate the next insert skips, but it holds locks and a connection meanwhile).
      const pid = (client as unknown as { processID?: number }).processID;
      if (typeof pid === 'number') p.query('select pg_cancel_backend($1)', [pid]).catch(() => undefined);
      client.release(true);
    };
    try {
      return await race(work(client), signal, destroy);
    } catch (err) {
      const e = pgError(err, redact);
      if (e.kind === 'connection' || e.kind === 'timeout') destroy();
      throw e;
    } finally {
      if (!destroyed) client.release();
    }
  }

  return {
    async query(sql, params, signal) {
      await withClient(signal, (c) => c.query(sql, params).then(() => undefined));
    },
    async ddl(statements, signal) {
      await withClient(signal, async (c) => {
        const { rows } = await c.query<{ exists: boolean }>('select to_regclass($1) is not null as exists', [table]);
        if (rows[0]?.exists) return;
        for (const statement of statements) {
          try {
            await c.query(statement);
          } catch (err) {
            // Two dispatchers creating the same table at once: the loser sees a duplicate, which is fine.
            if (!isUniqueViolation(err) && !isDuplicateTable(err)) throw err;
          }
        }
      });
    },
    async check(createTable, signal) {
      return withClient(signal, async (c) => {
        await c.query('select 1');
        const { rows } = await c.query<{
          who: string;
          schema_exists: boolean;
          table_exists: boolean;
          can_insert: boolean | null;
          can_create: boolean | null;
        }>(
          `select current_user as who,
             exists (select 1 from pg_namespace where nspname = $2) as schema_exists,
             to_regclass($1) is not null as table_exists,
             case when to_regclass($1) is not null then has_table_privilege(to_regclass($1), 'INSERT') end as can_insert,
             case when exists (select 1 from pg_namespace where nspname = $2) then has_schema_privilege($2, 'CREATE') end as can_create`,
          [table, s.schema],
        );
        const r = rows[0]!;
        const name = `${s.schema}.${s.table}`;
        if (!r.schema_exists)
          return { ok: false, detail: `schema ${s.schema} does not exist`, error_kind: 'config' as const };
        if (r.table_exists) {
          return r.can_insert
            ? { ok: true, detail: `connected as ${r.who}; table ${name} exists and accepts INSERT` }
            : { ok: false, detail: `role ${r.who} may not INSERT into ${name}`, error_kind: 'config' as const };
        }
        if (!createTable)
          return {
            ok: false,
            detail: `table ${name} does not exist and create_table is off`,
            error_kind: 'config' as const,
          };
        return r.can_create
          ? {
              ok: true,
              detail: `connected as ${r.who}; table ${name} does not exist yet and will be created at the first delivery`,
            }
          : {
              ok: false,
              detail: `table ${name} does not exist and role ${r.who} may not create it in schema ${s.schema}`,
              error_kind: 'config' as const,
            };
      });
    },
    async close() {
      const p = pool;
      pool = null;
      if (p)
        await p
          .then(
            (x) => x.end(),
            () => undefined,
          )
          .catch(() => undefined);
    },
  };
}
