// The data plane's settings: push ingestion, the syslog receiver, normalization, delivery
// and pull collection.
import path from 'node:path';
import type { CollectionConfig } from '../modules/collection/index.js';
import type { DeliveryConfig } from '../modules/delivery/index.js';
import type { SyslogConfig } from '../modules/syslog/index.js';
import { bool, ConfigError, GiB, int, list, MiB, str, type Env } from './env.js';

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

export function ingest(env: Env): Readonly<IngestConfig> {
  return Object.freeze({
    maxBodyBytes: int(env, 'WEIR_INGEST_MAX_BODY_BYTES', 10 * MiB, 1024, GiB),
    maxDecodedBytes: int(env, 'WEIR_INGEST_MAX_DECODED_BYTES', 50 * MiB, 1024, GiB),
    maxEventsPerRequest: int(env, 'WEIR_INGEST_MAX_EVENTS_PER_REQUEST', 50_000, 1, 10_000_000),
    batchMaxEvents: int(env, 'WEIR_INGEST_BATCH_MAX_EVENTS', 1000, 1, 100_000),
    batchMaxBytes: int(env, 'WEIR_INGEST_BATCH_MAX_BYTES', 4 * MiB, 1024, GiB),
    maxInflightBytes: int(env, 'WEIR_INGEST_MAX_INFLIGHT_BYTES', 256 * MiB, 1024, 16 * GiB),
    maxPendingBatches: int(env, 'WEIR_INGEST_MAX_PENDING_BATCHES', 5000, 1, 10_000_000),
    maxPendingEvents: int(env, 'WEIR_INGEST_MAX_PENDING_EVENTS', 200_000, 1_000, 1_000_000_000),
  });
}

export function syslog(env: Env): Readonly<SyslogConfig> {
  return Object.freeze({
    host: str(env, 'WEIR_SYSLOG_HOST', str(env, 'HOST', '127.0.0.1')),
    ports: syslogPorts(env),
    refreshMs: int(env, 'WEIR_SYSLOG_REFRESH_MS', 5_000, 100, 60_000),
    lingerMs: int(env, 'WEIR_SYSLOG_LINGER_MS', 10, 1, 5_000),
    maxPendingEvents: int(env, 'WEIR_SYSLOG_MAX_PENDING_EVENTS', 100_000, 1_000, 10_000_000),
    udpReceiveBufferBytes: int(env, 'WEIR_SYSLOG_UDP_RECEIVE_BUFFER', 8 * MiB, 4096, GiB),
  });
}

/** The message bus inputs (modules/buses): how often a worker applies changed rabbitmq and nats integrations. */
export interface BusesConfig {
  refreshMs: number;
}

export function buses(env: Env): Readonly<BusesConfig> {
  return Object.freeze({ refreshMs: int(env, 'WEIR_BUS_REFRESH_MS', 5_000, 100, 60_000) });
}

export function normalize(env: Env): Readonly<NormalizeConfig> {
  return Object.freeze({
    concurrency: int(env, 'WEIR_NORMALIZE_CONCURRENCY', 2, 1, 64),
    // At most 30 s: a published mapping must be live everywhere within that (spec).
    mappingRefreshMs: int(env, 'WEIR_MAPPING_REFRESH_MS', 5_000, 100, 30_000),
    passThreads:
      env.WEIR_PASS_THREADS === undefined || env.WEIR_PASS_THREADS === ''
        ? undefined
        : int(env, 'WEIR_PASS_THREADS', 0, 0, 16),
  });
}

export function delivery(env: Env): Readonly<DeliveryConfig> {
  return Object.freeze({
    pollMs: int(env, 'WEIR_DISPATCH_POLL_MS', 250, 10, 60_000),
    leaseMs: int(env, 'WEIR_DISPATCH_LEASE_MS', 30_000, 500, 600_000),
    lineageEnabled: bool(env, 'WEIR_LINEAGE_ENABLED', false),
    lineageDays: int(env, 'WEIR_LINEAGE_DAYS', 7, 1, 90),
    dlqDays: int(env, 'WEIR_DLQ_DAYS', 30, 1, 3650),
    outboundAllowCidrs: Object.freeze(list(env, 'WEIR_OUTBOUND_ALLOW_CIDRS')),
    fileRoot: path.resolve(str(env, 'WEIR_FILE_SINK_ROOT', path.join(str(env, 'WEIR_DATA_DIR', './data'), 'sinks'))),
    fileStaleMs: int(env, 'WEIR_FILE_SINK_STALE_SECONDS', 60, 2, 3600) * 1000,
  });
}

export function collection(env: Env): Readonly<CollectionConfig> {
  return Object.freeze({
    scheduleMs: int(env, 'WEIR_COLLECT_SCHEDULE_MS', 5_000, 100, 600_000),
    lockTtlMs: int(env, 'WEIR_COLLECT_LOCK_TTL_MS', 60_000, 1_000, 3_600_000),
    maxRetryWaitMs: int(env, 'WEIR_COLLECT_MAX_RETRY_WAIT_MS', 60_000, 0, 3_600_000),
    requestTimeoutMs: int(env, 'WEIR_COLLECT_REQUEST_TIMEOUT_MS', 30_000, 100, 600_000),
    concurrency: int(env, 'WEIR_COLLECT_CONCURRENCY', 4, 1, 64),
    outboundAllowCidrs: Object.freeze(list(env, 'WEIR_OUTBOUND_ALLOW_CIDRS')),
  });
}
