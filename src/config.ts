// Environment -> frozen, typed configuration. Read once at start; every setting is
// documented in README.md ("Configuration"). Invalid values stop the process with a
// message naming the variable, never a half-configured service. Each area's settings are
// read in src/config/<area>.ts; their types live with the code that uses them.

import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { CaseManagementConfig } from './modules/case/index.js';
import type { CollectionConfig } from './modules/collection/index.js';
import type { DeliveryConfig } from './modules/delivery/index.js';
import type { EmailConfig } from './modules/email/index.js';
import type { SearchConfig } from './modules/search/index.js';
import type { SyslogConfig } from './modules/syslog/index.js';
import type { TelemetryConfig } from './platform/telemetry/index.js';
import { bool, GiB, int, list, MiB, optional, pgSize, str, url, ConfigError, type Env } from './config/env.js';
import {
  buses,
  collection,
  delivery,
  ingest,
  normalize,
  syslog,
  type BusesConfig,
  type IngestConfig,
  type NormalizeConfig,
} from './config/pipeline.js';
import { caseManagement, email, search } from './config/search.js';
import { telemetry } from './config/telemetry.js';

export { ConfigError } from './config/env.js';

export type Role = 'all' | 'api' | 'worker' | 'dispatcher' | 'beat' | 'syslog' | 'migrate';
export const ROLES: readonly Role[] = ['all', 'api', 'worker', 'dispatcher', 'beat', 'syslog', 'migrate'];

export interface Config {
  port: number;
  host: string;
  dataDir: string;
  databaseUrl: string | undefined;
  /**
   * The body log's directory (WEIR_BODY_LOG_DIR, default <data dir>/bodies), or undefined when
   * it is off (WEIR_BODY_LOG=off; always with DATABASE_URL: the roles of a distributed Weir
   * share no disk). Embedded, the queue's and the outbox's compressed bodies live there.
   */
  bodyLogDir: string | undefined;
  /** The embedded database's shared buffers (WEIR_PGLITE_SHARED_BUFFERS; unset: platform/db's default, 16MB): resident memory of this process. */
  pgliteSharedBuffers: string | undefined;
  redisUrl: string | undefined;
  redisPrefix: string;
  logLevel: string;
  corsOrigins: readonly string[];
  /** The built console (web/ -> dist/web); an empty value turns the console off. */
  consoleDir: string | undefined;
  bodyLimitBytes: number;
  jsonMaxDepth: number;
  shutdownTimeoutMs: number;
  heartbeatIntervalMs: number;
  /** How long a job stays with a consumer that stopped renewing it (its process died). */
  queueLeaseMs: number;
  beatLockTtlMs: number;
  trustProxy: boolean;
  /** Master secret (32 bytes, hex or base64); generated into dataDir when absent (embedded). */
  secretKey: string | undefined;
  /** Earlier master secrets, still accepted for decryption (and token lookup) during a key rotation. */
  previousSecretKeys: readonly string[];
  /** Requests per minute per API token (sliding window). */
  tokenRateLimit: number;
  /** Free bytes of the data directory's filesystem under which new events are refused (503). */
  diskFloorBytes: number;
  /** What one event waiting for normalization will still write to the data directory (event store, body log): the disk guard counts it as used. */
  diskBytesPerEvent: number;
  /** Accept license tokens signed by the test key: false from loadConfig; only the test suite's set-up sets it. */
  trustTestLicenses: boolean;
  /** Deprecated shared key of the internal tenant endpoints (header X-Internal-Key); off when unset. */
  internalKey: string | undefined;
  telemetry: TelemetryConfig;
  ingest: IngestConfig;
  syslog: SyslogConfig;
  /** The message bus inputs (rabbitmq, nats integrations), run by the worker role. */
  buses: BusesConfig;
  normalize: NormalizeConfig;
  delivery: DeliveryConfig;
  collection: CollectionConfig;
  email: EmailConfig;
  search: SearchConfig;
  caseManagement: CaseManagementConfig;
}

/** dist/web of this package, found from src/ (tsx) or dist/src/ (built) alike. */
function defaultConsoleDir(): string {
  const here = path.dirname(fileURLToPath(import.meta.url));
  return path.basename(path.dirname(here)) === 'dist'
    ? path.resolve(here, '..', 'web')
    : path.resolve(here, '..', 'dist', 'web');
}

function bodyLogDir(env: Env): string | undefined {
  const distributed = Boolean(env.DATABASE_URL?.trim());
  if (!bool(env, 'WEIR_BODY_LOG', !distributed)) return undefined;
  if (distributed) {
    throw new ConfigError(
      'WEIR_BODY_LOG=on keeps queue and outbox bodies in files one process owns, which the roles of a distributed Weir cannot share: unset it with DATABASE_URL',
    );
  }
  return path.resolve(env.WEIR_BODY_LOG_DIR?.trim() || path.join(str(env, 'WEIR_DATA_DIR', './data'), 'bodies'));
}

/** Local development origins: any port on localhost and the loopback addresses. */
export const DEFAULT_CORS_ORIGINS = ['http://localhost:*', 'http://127.0.0.1:*', 'http://[::1]:*'];

export function loadConfig(env: Env = process.env): Readonly<Config> {
  const cors = optional(env, 'WEIR_CORS_ORIGINS');
  const config: Config = {
    port: int(env, 'PORT', 8080, 0, 65535),
    host: str(env, 'HOST', '127.0.0.1'),
    dataDir: path.resolve(str(env, 'WEIR_DATA_DIR', './data')),
    databaseUrl: url(env, 'DATABASE_URL', ['postgres:', 'postgresql:']),
    bodyLogDir: bodyLogDir(env),
    pgliteSharedBuffers: pgSize(env, 'WEIR_PGLITE_SHARED_BUFFERS'),
    redisUrl: url(env, 'REDIS_URL', ['redis:', 'rediss:']),
    redisPrefix: str(env, 'WEIR_REDIS_PREFIX', 'weir'),
    logLevel: str(env, 'LOG_LEVEL', 'info'),
    corsOrigins: Object.freeze(
      cors
        ? cors
            .split(',')
            .map((s) => s.trim())
            .filter(Boolean)
        : DEFAULT_CORS_ORIGINS,
    ),
    consoleDir: env.WEIR_CONSOLE_DIR === undefined ? defaultConsoleDir() : env.WEIR_CONSOLE_DIR.trim() || undefined,
    bodyLimitBytes: int(env, 'WEIR_BODY_LIMIT_BYTES', 1_048_576, 1024, 1_073_741_824),
    jsonMaxDepth: int(env, 'WEIR_JSON_MAX_DEPTH', 32, 2, 1000),
    shutdownTimeoutMs: int(env, 'WEIR_SHUTDOWN_TIMEOUT_MS', 25_000, 0, 600_000),
    heartbeatIntervalMs: int(env, 'WEIR_HEARTBEAT_INTERVAL_MS', 10_000, 100, 600_000),
    queueLeaseMs: int(env, 'WEIR_QUEUE_LEASE_MS', 30_000, 1_000, 600_000),
    beatLockTtlMs: int(env, 'WEIR_BEAT_LOCK_TTL_MS', 15_000, 500, 600_000),
    trustProxy: bool(env, 'WEIR_TRUST_PROXY', false),
    secretKey: optional(env, 'WEIR_SECRET_KEY'),
    previousSecretKeys: Object.freeze(list(env, 'WEIR_SECRET_KEY_PREVIOUS')),
    tokenRateLimit: int(env, 'WEIR_TOKEN_RATE_LIMIT', 60, 1, 1_000_000),
    diskFloorBytes: int(env, 'WEIR_DISK_FLOOR_BYTES', 512 * MiB, 0, 1024 * GiB),
    diskBytesPerEvent: int(env, 'WEIR_DISK_BYTES_PER_EVENT', 4096, 0, 16 * MiB),
    // Never from the environment: only the test suite's own set-up trusts the test key (test/support/app.ts).
    trustTestLicenses: false,
    internalKey: optional(env, 'WEIR_INTERNAL_KEY'),
    caseManagement: caseManagement(env),
    telemetry: telemetry(env),
    ingest: ingest(env),
    syslog: syslog(env),
    buses: buses(env),
    normalize: normalize(env),
    delivery: delivery(env),
    collection: collection(env),
    email: email(env),
    search: search(env),
  };
  return Object.freeze(config);
}

/** True when the deployment can run roles as separate processes. */
export function isDistributed(config: Config): boolean {
  return config.databaseUrl !== undefined && config.redisUrl !== undefined;
}
