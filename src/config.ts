// Environment -> frozen, typed configuration. Read once at start; every setting is
// documented in README.md ("Configuration"). Invalid values stop the process with a
// message naming the variable, never a half-configured service.

import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export type Role = 'all' | 'api' | 'worker' | 'dispatcher' | 'beat' | 'syslog' | 'migrate';
export const ROLES: readonly Role[] = ['all', 'api', 'worker', 'dispatcher', 'beat', 'syslog', 'migrate'];

export interface TelemetryConfig {
  enabled: boolean;
  endpoint: string | undefined;
  serviceName: string;
  metricExportIntervalMs: number;
  tracesSamplerRatio: number;
  logsEnabled: boolean;
  /** Prometheus text format at /metrics (the API listener; other roles listen on prometheusPort). */
  prometheusEnabled: boolean;
  prometheusPort: number;
}

/** Push ingestion (POST /api/ingest/{stream}): body limits, batch sizes, backpressure. */
export interface IngestConfig {
  /** Largest request body as sent (compressed or not); 413 beyond. */
  maxBodyBytes: number;
  /** Largest body after decompression (zip-bomb bound); 413 beyond. */
  maxDecodedBytes: number;
  /** Events one push request may carry (413 beyond). */
  maxEventsPerRequest: number;
  /** Most events in one queue batch. */
  batchMaxEvents: number;
  /** About the most bytes of events in one queue batch. */
  batchMaxBytes: number;
  /** Body bytes being read, parsed and enqueued at once in this process; 429 beyond. */
  maxInflightBytes: number;
  /** Batches waiting in the normalize queue beyond which pushes get 503. */
  maxPendingBatches: number;
  /** Events accepted and not yet normalized (the ledger's pending_normalization) beyond which new events are refused. */
  maxPendingEvents: number;
}

/** The syslog receiver (syslog role, and weir all): docs/decisions/0040-syslog-receiver.md. */
export interface SyslogConfig {
  /** Address the listeners bind to. */
  host: string;
  /** WEIR_SYSLOG_PORTS as written: the ports integrations may declare. */
  ports: string;
  /** How often the receiver applies changed syslog integrations. */
  refreshMs: number;
  /** How long a batch that is not full waits for more messages before it is accepted. */
  lingerMs: number;
  /** Messages held (received, not yet durably accepted) beyond which UDP datagrams are dropped and counted. */
  maxPendingEvents: number;
  /** SO_RCVBUF asked for each UDP listener; the kernel caps it at net.core.rmem_max (and doubles it). */
  udpReceiveBufferBytes: number;
}

/** The normalization stage (worker role). */
export interface NormalizeConfig {
  /** Ingest batches one worker process normalizes at once. */
  concurrency: number;
  /** How often a worker checks for newly published mappings and changed OCSF policies. */
  mappingRefreshMs: number;
  /**
   * WEIR_PASS_THREADS: worker threads that run the one pass. undefined: the role decides
   * (`all`: every core but one, at least 1; `worker`: 0); 0: on the consumer's own thread.
   */
  passThreads: number | undefined;
}

/** Routing and delivery (dispatcher role). */
export interface DeliveryConfig {
  /** How often an idle dispatcher looks for new work (normalized batches, due deliveries, changed routes). */
  pollMs: number;
  /** How long a dispatcher holds a claimed batch; a killed dispatcher's batches come back after it. */
  leaseMs: number;
  /** Normalized batches one dispatcher process routes at once. */
  routeConcurrency: number;
  /** Record lineage per event (off by default: one row per event and copy). */
  lineageEnabled: boolean;
  /** Days lineage is kept (about 7, spec). */
  lineageDays: number;
  /** Days dead-lettered events are kept. */
  dlqDays: number;
  /**
   * Address ranges outbound connections (destination test and delivery) may reach although
   * they are loopback, link-local or metadata addresses (SSRF guard); CIDR list, empty by default.
   */
  outboundAllowCidrs: readonly string[];
  /** Root of the file destinations' paths (WEIR_FILE_SINK_ROOT, default <data dir>/sinks). */
  fileRoot: string;
  /**
   * An open file of a file destination untouched this long belongs to a dead writer and is
   * finished by another process (WEIR_FILE_SINK_STALE_SECONDS, default 60 s).
   */
  fileStaleMs: number;
}

/** Pull collection (connectors, scheduler, backfill): docs/collection.md. */
export interface CollectionConfig {
  /** How often the beat looks for streams whose cycle is due (WEIR_COLLECT_SCHEDULE_MS). */
  scheduleMs: number;
  /** Lease of a stream's lock; renewed after every page, so a dead worker frees it after this (WEIR_COLLECT_LOCK_TTL_MS). */
  lockTtlMs: number;
  /** Longest wait on a vendor's Retry-After inside a cycle; longer ends the cycle and retries later (WEIR_COLLECT_MAX_RETRY_WAIT_MS). */
  maxRetryWaitMs: number;
  /** Timeout of one vendor request (WEIR_COLLECT_REQUEST_TIMEOUT_MS). */
  requestTimeoutMs: number;
  /** Collection jobs one worker runs at once (WEIR_COLLECT_CONCURRENCY). */
  concurrency: number;
  /** Outbound addresses allowed to vendors besides public ones (the same setting as destinations: WEIR_OUTBOUND_ALLOW_CIDRS). */
  outboundAllowCidrs: readonly string[];
}

/** The case-management system (DFIR-IRIS): unset URL = not configured, a valid state. */
export interface CaseManagementConfig {
  /** WEIR_CASE_URL: base URL of the DFIR-IRIS instance. */
  url: string | undefined;
  /** WEIR_CASE_API_KEY, or the first line of the file WEIR_CASE_API_KEY_FILE names. */
  apiKey: string | undefined;
  /** WEIR_CASE_TIMEOUT_MS: per request (default 5 s). */
  timeoutMs: number;
}

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
  normalize: NormalizeConfig;
  delivery: DeliveryConfig;
  collection: CollectionConfig;
  email: EmailConfig;
  search: SearchConfig;
  caseManagement: CaseManagementConfig;
}

/** Search (docs/search.md): results, their expiry, and how long one statement may run. */
export interface SearchConfig {
  /** Most rows a result keeps (a query's limit is at most this). */
  maxRows: number;
  /** Hours a result stays readable. */
  resultHours: number;
  /** Hours its CSV stays downloadable (at most resultHours). */
  csvHours: number;
  /** Days a run stays in the search history. */
  historyDays: number;
  /** Longest one statement of a search may run. */
  statementTimeoutMs: number;
  /** Searches and replays one worker process runs at once. */
  concurrency: number;
  /** Base URL of the console and API as users reach it, for links in e-mails (none: no links). */
  publicUrl: string | undefined;
  /** Least time between two detection e-mails to one organization. */
  detectionNotifyMs: number;
  /** Most vendor pages one live query reads (docs/live-queries.md). */
  liveMaxPages: number;
  /**
   * The event store's size budget (WEIR_SEARCH_MAX_BYTES): the bytes of event text (each stored
   * event's JSON text in UTF-8) it may hold; over it, retention removes the events received
   * first. 0: no budget, only the organizations' retention days.
   */
  maxBytes: number;
  /**
   * The event store's engine (WEIR_EVENT_STORE): DuckDB in a file beside the embedded database,
   * or the PostgreSQL database's `events` table. Unset: DuckDB with the embedded database,
   * PostgreSQL with an external one (several processes share it).
   */
  eventStore: 'duckdb' | 'postgres' | undefined;
  /** DuckDB's file (WEIR_EVENT_STORE_PATH, default <data dir>/events.duckdb; ':memory:' keeps nothing). */
  eventStorePath: string;
  /** DuckDB's memory limit (WEIR_EVENT_STORE_MEMORY, default 128MB) and threads (WEIR_EVENT_STORE_THREADS, default 2). */
  eventStoreMemory: string;
  eventStoreThreads: number;
  /** Where POST /api/search/export writes (WEIR_EXPORT_ROOT, default <data dir>/exports). */
  exportRoot: string;
}

/** Sending e-mail (docs/email.md): the queue's retries and the SMTP timeouts. */
export interface EmailConfig {
  /** Attempts of a send job, the first included (transient failures only). */
  attempts: number;
  /** Base of the exponential backoff between attempts: base * 2^(attempt-1). */
  backoffMs: number;
  /** Connection, greeting and socket timeout of one SMTP session (the test send included). */
  timeoutMs: number;
}

export class ConfigError extends Error {}

type Env = Record<string, string | undefined>;

function str(env: Env, name: string, fallback: string): string {
  const v = env[name];
  return v === undefined || v === '' ? fallback : v;
}

/** dist/web of this package, found from src/ (tsx) or dist/src/ (built) alike. */
function defaultConsoleDir(): string {
  const here = path.dirname(fileURLToPath(import.meta.url));
  return path.basename(path.dirname(here)) === 'dist'
    ? path.resolve(here, '..', 'web')
    : path.resolve(here, '..', 'dist', 'web');
}

function optional(env: Env, name: string): string | undefined {
  const v = env[name];
  return v === undefined || v.trim() === '' ? undefined : v.trim();
}

function int(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw.trim())) throw new ConfigError(`${name} must be an integer, got "${raw}"`);
  const n = Number(raw);
  if (n < min || n > max) throw new ConfigError(`${name} must be between ${min} and ${max}, got ${n}`);
  return n;
}

/** The ports syslog integrations may declare: `514,5140-5199` (checked here, read by modules/syslog/config.ts). */
function syslogPorts(env: Env): string {
  const v = str(env, 'WEIR_SYSLOG_PORTS', '514,601,1514,5140-5199,6514,20514');
  for (const part of v
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p !== '')) {
    const m = /^(\d{1,5})(?:-(\d{1,5}))?$/.exec(part);
    const lo = Number(m?.[1]);
    const hi = Number(m?.[2] ?? m?.[1]);
    if (!m || lo < 1 || hi > 65535 || lo > hi)
      throw new ConfigError(
        `WEIR_SYSLOG_PORTS must list ports and ranges from 1 to 65535 (514,5140-5199), got "${part}"`,
      );
  }
  return v;
}

function bool(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const v = raw.trim().toLowerCase();
  if (['1', 'true', 'yes', 'on'].includes(v)) return true;
  if (['0', 'false', 'no', 'off'].includes(v)) return false;
  throw new ConfigError(`${name} must be true or false, got "${raw}"`);
}

function ratio(env: Env, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < 0 || n > 1)
    throw new ConfigError(`${name} must be a number from 0 to 1, got "${raw}"`);
  return n;
}

function url(env: Env, name: string, schemes: string[]): string | undefined {
  const v = optional(env, name);
  if (v === undefined) return undefined;
  let parsed: URL;
  try {
    parsed = new URL(v);
  } catch {
    throw new ConfigError(`${name} is not a valid URL`);
  }
  if (!schemes.includes(parsed.protocol)) {
    throw new ConfigError(`${name} must use one of ${schemes.join(', ')}`);
  }
  return v;
}

/** A secret given inline (NAME) or in a file (NAME_FILE), never both; the file's content is trimmed. */
function secret(env: Env, name: string): string | undefined {
  const inline = optional(env, name);
  const file = optional(env, `${name}_FILE`);
  if (inline !== undefined && file !== undefined) throw new ConfigError(`set ${name} or ${name}_FILE, not both`);
  if (file === undefined) return inline;
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new ConfigError(`${name}_FILE cannot be read: ${(err as NodeJS.ErrnoException).code ?? 'error'}`);
  }
  const value = text.trim();
  if (!value) throw new ConfigError(`${name}_FILE is empty`);
  return value;
}

function caseManagement(env: Env): CaseManagementConfig {
  const caseUrl = url(env, 'WEIR_CASE_URL', ['http:', 'https:']);
  const apiKey = secret(env, 'WEIR_CASE_API_KEY');
  if (caseUrl !== undefined && apiKey === undefined)
    throw new ConfigError('WEIR_CASE_URL needs WEIR_CASE_API_KEY or WEIR_CASE_API_KEY_FILE');
  return Object.freeze({ url: caseUrl, apiKey, timeoutMs: int(env, 'WEIR_CASE_TIMEOUT_MS', 5_000, 100, 60_000) });
}

/** A memory size as PostgreSQL reads it: digits and kB, MB or GB. */
function pgSize(env: Env, name: string): string | undefined {
  const v = env[name]?.trim();
  if (!v) return undefined;
  if (!/^\d+(kB|MB|GB)$/.test(v))
    throw new ConfigError(`${name} must be a size such as 16MB or 128MB (kB, MB or GB), not ${JSON.stringify(v)}`);
  return v;
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

function eventStoreKind(env: Env): 'duckdb' | 'postgres' | undefined {
  const v = env.WEIR_EVENT_STORE?.trim();
  if (v === undefined || v === '') return undefined;
  if (v === 'duckdb' || v === 'postgres') return v;
  throw new ConfigError(`WEIR_EVENT_STORE must be duckdb or postgres, not ${JSON.stringify(v)}`);
}

function eventStorePath(env: Env): string {
  const v = env.WEIR_EVENT_STORE_PATH?.trim();
  if (v === ':memory:') return v;
  return path.resolve(v || path.join(str(env, 'WEIR_DATA_DIR', './data'), 'events.duckdb'));
}

/** A memory size as DuckDB reads it: digits and a unit (KB, MB, GB; KiB, MiB, GiB). */
function memorySize(env: Env, name: string, fallback: string): string {
  const v = env[name]?.trim() || fallback;
  if (!/^\d+(\.\d+)?\s*(KB|MB|GB|KiB|MiB|GiB)$/i.test(v))
    throw new ConfigError(`${name} must be a size such as 256MB or 1GB, not ${JSON.stringify(v)}`);
  return v;
}

const BYTE_UNITS: Record<string, number> = {
  '': 1,
  kb: 1e3,
  mb: 1e6,
  gb: 1e9,
  tb: 1e12,
  kib: 2 ** 10,
  mib: 2 ** 20,
  gib: 2 ** 30,
  tib: 2 ** 40,
};

/** A number of bytes: digits, or digits and a unit (KB, MB, GB, TB in powers of 1000; KiB, MiB, GiB, TiB in powers of 1024). */
function byteSize(env: Env, name: string, fallback: number): number {
  const v = env[name]?.trim();
  if (v === undefined || v === '') return fallback;
  const m = /^(\d+)\s*([kmgt]i?b)?$/i.exec(v);
  const n = m ? Number(m[1]) * BYTE_UNITS[(m[2] ?? '').toLowerCase()]! : NaN;
  if (!Number.isSafeInteger(n))
    throw new ConfigError(
      `${name} must be a number of bytes such as 0 (none), 50000000000 or 50GB (KB, MB, GB, TB; KiB, MiB, GiB, TiB), not ${JSON.stringify(v)}`,
    );
  return n;
}

function search(env: Env): SearchConfig {
  const resultHours = int(env, 'WEIR_SEARCH_RESULT_HOURS', 168, 1, 24 * 3650);
  const csvHours = int(env, 'WEIR_SEARCH_CSV_HOURS', 24, 1, 24 * 3650);
  if (csvHours > resultHours)
    throw new ConfigError(
      `WEIR_SEARCH_CSV_HOURS (${csvHours}) must not exceed WEIR_SEARCH_RESULT_HOURS (${resultHours}): the CSV expires before the result`,
    );
  return Object.freeze({
    maxRows: int(env, 'WEIR_SEARCH_MAX_ROWS', 10_000, 1, 1_000_000),
    resultHours,
    csvHours,
    historyDays: int(env, 'WEIR_SEARCH_HISTORY_DAYS', 90, 1, 3650),
    statementTimeoutMs: int(env, 'WEIR_SEARCH_STATEMENT_TIMEOUT_MS', 60_000, 100, 3_600_000),
    concurrency: int(env, 'WEIR_SEARCH_CONCURRENCY', 2, 1, 64),
    publicUrl: url(env, 'WEIR_PUBLIC_URL', ['http:', 'https:']),
    detectionNotifyMs: int(env, 'WEIR_DETECTION_NOTIFY_MINUTES', 15, 1, 1440) * 60_000,
    liveMaxPages: int(env, 'WEIR_SEARCH_LIVE_MAX_PAGES', 20, 1, 1000),
    maxBytes: byteSize(env, 'WEIR_SEARCH_MAX_BYTES', 0),
    eventStore: eventStoreKind(env),
    eventStorePath: eventStorePath(env),
    eventStoreMemory: memorySize(env, 'WEIR_EVENT_STORE_MEMORY', '128MB'),
    eventStoreThreads: int(env, 'WEIR_EVENT_STORE_THREADS', 2, 1, 64),
    exportRoot: path.resolve(str(env, 'WEIR_EXPORT_ROOT', path.join(str(env, 'WEIR_DATA_DIR', './data'), 'exports'))),
  });
}

function list(env: Env, name: string): string[] {
  const v = optional(env, name);
  return v
    ? v
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean)
    : [];
}

const MiB = 1_048_576;
const GiB = 1_073_741_824;

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
    telemetry: {
      enabled: bool(env, 'OTEL_ENABLED', false),
      // Validated when telemetry starts: a value without a scheme disables telemetry with
      // a warning instead of stopping the process (spec, Telemetry configuration).
      endpoint: optional(env, 'OTEL_EXPORTER_OTLP_ENDPOINT'),
      serviceName: str(env, 'OTEL_SERVICE_NAME', 'service-collector'),
      metricExportIntervalMs: int(env, 'OTEL_METRIC_EXPORT_INTERVAL_MS', 60_000, 100, 86_400_000),
      tracesSamplerRatio: ratio(env, 'OTEL_TRACES_SAMPLER_RATIO', 1.0),
      logsEnabled: bool(env, 'OTEL_LOGS_ENABLED', false),
      prometheusEnabled: bool(env, 'WEIR_PROMETHEUS_ENABLED', false),
      prometheusPort: int(env, 'WEIR_PROMETHEUS_PORT', 9464, 1, 65535),
    },
    ingest: {
      maxBodyBytes: int(env, 'WEIR_INGEST_MAX_BODY_BYTES', 10 * MiB, 1024, GiB),
      maxDecodedBytes: int(env, 'WEIR_INGEST_MAX_DECODED_BYTES', 50 * MiB, 1024, GiB),
      maxEventsPerRequest: int(env, 'WEIR_INGEST_MAX_EVENTS_PER_REQUEST', 50_000, 1, 10_000_000),
      batchMaxEvents: int(env, 'WEIR_INGEST_BATCH_MAX_EVENTS', 1000, 1, 100_000),
      batchMaxBytes: int(env, 'WEIR_INGEST_BATCH_MAX_BYTES', 4 * MiB, 1024, GiB),
      maxInflightBytes: int(env, 'WEIR_INGEST_MAX_INFLIGHT_BYTES', 256 * MiB, 1024, 16 * GiB),
      maxPendingBatches: int(env, 'WEIR_INGEST_MAX_PENDING_BATCHES', 5000, 1, 10_000_000),
      maxPendingEvents: int(env, 'WEIR_INGEST_MAX_PENDING_EVENTS', 200_000, 1_000, 1_000_000_000),
    },
    syslog: {
      host: str(env, 'WEIR_SYSLOG_HOST', str(env, 'HOST', '127.0.0.1')),
      ports: syslogPorts(env),
      refreshMs: int(env, 'WEIR_SYSLOG_REFRESH_MS', 5_000, 100, 60_000),
      lingerMs: int(env, 'WEIR_SYSLOG_LINGER_MS', 10, 1, 5_000),
      maxPendingEvents: int(env, 'WEIR_SYSLOG_MAX_PENDING_EVENTS', 100_000, 1_000, 10_000_000),
      udpReceiveBufferBytes: int(env, 'WEIR_SYSLOG_UDP_RECEIVE_BUFFER', 8 * MiB, 4096, GiB),
    },
    normalize: {
      concurrency: int(env, 'WEIR_NORMALIZE_CONCURRENCY', 2, 1, 64),
      // At most 30 s: a published mapping must be live everywhere within that (spec).
      mappingRefreshMs: int(env, 'WEIR_MAPPING_REFRESH_MS', 5_000, 100, 30_000),
      passThreads:
        env.WEIR_PASS_THREADS === undefined || env.WEIR_PASS_THREADS === ''
          ? undefined
          : int(env, 'WEIR_PASS_THREADS', 0, 0, 16),
    },
    delivery: {
      pollMs: int(env, 'WEIR_DISPATCH_POLL_MS', 250, 10, 60_000),
      leaseMs: int(env, 'WEIR_DISPATCH_LEASE_MS', 30_000, 500, 600_000),
      routeConcurrency: int(env, 'WEIR_DISPATCH_ROUTE_CONCURRENCY', 2, 1, 64),
      lineageEnabled: bool(env, 'WEIR_LINEAGE_ENABLED', false),
      lineageDays: int(env, 'WEIR_LINEAGE_DAYS', 7, 1, 90),
      dlqDays: int(env, 'WEIR_DLQ_DAYS', 30, 1, 3650),
      outboundAllowCidrs: Object.freeze(list(env, 'WEIR_OUTBOUND_ALLOW_CIDRS')),
      fileRoot: path.resolve(str(env, 'WEIR_FILE_SINK_ROOT', path.join(str(env, 'WEIR_DATA_DIR', './data'), 'sinks'))),
      fileStaleMs: int(env, 'WEIR_FILE_SINK_STALE_SECONDS', 60, 2, 3600) * 1000,
    },
    collection: {
      scheduleMs: int(env, 'WEIR_COLLECT_SCHEDULE_MS', 5_000, 100, 600_000),
      lockTtlMs: int(env, 'WEIR_COLLECT_LOCK_TTL_MS', 60_000, 1_000, 3_600_000),
      maxRetryWaitMs: int(env, 'WEIR_COLLECT_MAX_RETRY_WAIT_MS', 60_000, 0, 3_600_000),
      requestTimeoutMs: int(env, 'WEIR_COLLECT_REQUEST_TIMEOUT_MS', 30_000, 100, 600_000),
      concurrency: int(env, 'WEIR_COLLECT_CONCURRENCY', 4, 1, 64),
      outboundAllowCidrs: Object.freeze(list(env, 'WEIR_OUTBOUND_ALLOW_CIDRS')),
    },
    email: {
      attempts: int(env, 'WEIR_EMAIL_ATTEMPTS', 6, 1, 20),
      backoffMs: int(env, 'WEIR_EMAIL_BACKOFF_MS', 30_000, 10, 3_600_000),
      timeoutMs: int(env, 'WEIR_EMAIL_TIMEOUT_MS', 15_000, 500, 120_000),
    },
    search: search(env),
  };
  config.telemetry = Object.freeze(config.telemetry);
  config.collection = Object.freeze(config.collection);
  config.delivery = Object.freeze(config.delivery);
  config.ingest = Object.freeze(config.ingest);
  config.syslog = Object.freeze(config.syslog);
  config.normalize = Object.freeze(config.normalize);
  config.email = Object.freeze(config.email);
  return Object.freeze(config);
}

/** True when the deployment can run roles as separate processes. */
export function isDistributed(config: Config): boolean {
  return config.databaseUrl !== undefined && config.redisUrl !== undefined;
}
