// Which message broker this process uses, without credentials: every process records it
// in its heartbeat, so the backfill diagnostics can tell whether the API and the workers
// talk to the same broker (a job accepted with 201 that never runs usually means they do
// not). BullMQ: the Redis host, port, database and key prefix from REDIS_URL (user and
// password dropped). Database queue: the database itself, named by the server, since the
// jobs table is the broker and a worker whose heartbeat we can read shares it.
import { sql, type Kysely } from 'kysely';
import type { DB } from '../db/index.js';

export interface BrokerIdentity {
  backend: 'database' | 'bullmq';
  /** bullmq: redis or rediss; database: postgres or pglite. */
  scheme: string;
  host: string | null;
  port: number | null;
  /** Redis database number, or the PostgreSQL database name. */
  db: string;
  /** BullMQ key prefix (null for the database queue). */
  prefix: string | null;
}

export interface BrokerIdentityOptions {
  backend: 'database' | 'bullmq';
  redisUrl?: string | undefined;
  redisPrefix: string;
  db: Kysely<DB>;
  databaseKind: 'pglite' | 'postgres';
}

export function redisBroker(redisUrl: string, prefix: string): BrokerIdentity {
  const url = new URL(redisUrl);
  const db = url.pathname.replace(/^\/+/, '') || '0';
  return {
    backend: 'bullmq',
    scheme: url.protocol.replace(/:$/, ''),
    host: url.hostname.toLowerCase() || 'localhost',
    port: url.port ? Number(url.port) : 6379,
    db,
    prefix,
  };
}

export async function brokerIdentity(options: BrokerIdentityOptions): Promise<BrokerIdentity> {
  if (options.backend === 'bullmq' && options.redisUrl) return redisBroker(options.redisUrl, options.redisPrefix);
  const row = await sql<{ name: string }>`select current_database() as name`.execute(options.db);
  return {
    backend: 'database',
    scheme: options.databaseKind,
    host: null,
    port: null,
    db: row.rows[0]?.name ?? 'unknown',
    prefix: null,
  };
}

/** The comparable text of an identity (what heartbeats store). */
export function brokerKey(b: BrokerIdentity): string {
  return JSON.stringify({
    backend: b.backend,
    scheme: b.scheme,
    host: b.host,
    port: b.port,
    db: b.db,
    prefix: b.prefix,
  });
}

/** Parses what brokerKey() wrote; null for anything else (processes started before brokers were recorded). */
export function parseBrokerKey(text: string | null | undefined): BrokerIdentity | null {
  if (!text) return null;
  try {
    const v = JSON.parse(text) as Partial<BrokerIdentity>;
    if ((v.backend !== 'database' && v.backend !== 'bullmq') || typeof v.db !== 'string') return null;
    return {
      backend: v.backend,
      scheme: String(v.scheme ?? ''),
      host: v.host ?? null,
      port: v.port ?? null,
      db: v.db,
      prefix: v.prefix ?? null,
    };
  } catch {
    return null;
  }
}
