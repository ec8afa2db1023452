// The adapters every module is wired with, chosen from the configuration: logger, telemetry,
// database (migrated), body log, queue, cache, lock, rate limiter, clock and keys.
import { ConfigError, isDistributed, type Config, type Role } from '../config.js';
import { systemClock, type Clock } from '../core/clock.js';
import { BodyLog } from '../platform/bodylog/log.js';
import { createCache } from '../platform/cache/index.js';
import { createCredentialCipher, type SealedFor } from '../platform/crypto/credentials.js';
import { keyRing, loadMasterSecret, previousKeyRings, type KeyPurpose } from '../platform/crypto/keys.js';
import { migrate, openDatabase, type Database } from '../platform/db/index.js';
import { createLock } from '../platform/lock/index.js';
import { createLogger, type Logger } from '../platform/logger.js';
import { createNetPolicy } from '../platform/net/ssrf.js';
import { createQueue, DatabaseQueue } from '../platform/queue/index.js';
import { brokerIdentity } from '../platform/queue/identity.js';
import { createRateLimiter } from '../platform/ratelimit/index.js';
import { startTelemetry, traceLogMixin } from '../platform/telemetry/index.js';

export interface ContainerOptions {
  role: Role;
  logger?: Logger;
  /** Replaces the adapter the configuration would choose (tests). */
  database?: Database;
  clock?: Clock;
}

export type Base = Awaited<ReturnType<typeof wireBase>>;

export async function wireBase(config: Readonly<Config>, options: ContainerOptions) {
  const { role } = options;
  // DuckDB's file belongs to one process: the separate roles of a distributed Weir share PostgreSQL's store.
  if (config.search.eventStore === 'duckdb' && role !== 'all') {
    throw new ConfigError(
      `WEIR_EVENT_STORE=duckdb keeps the event store in a file one process owns: run \`weir all\`, or let the ${role} role use PostgreSQL's store (unset WEIR_EVENT_STORE or set it to postgres)`,
    );
  }
  const logger = options.logger ?? createLogger({ level: config.logLevel, role, mixin: traceLogMixin });
  const telemetry = await startTelemetry(config.telemetry, { role, logger, prometheusHost: config.host });
  const database =
    options.database ??
    (await openDatabase({
      url: config.databaseUrl,
      dataDir: `${config.dataDir}/pglite`,
      sharedBuffers: config.pgliteSharedBuffers,
      logger,
    }));
  await migrate(database.db);
  const redis = { redisUrl: config.redisUrl, redisPrefix: config.redisPrefix, logger };
  // The body log (decision 0059): embedded only, where one process owns the data directory.
  // The rows that name its bodies belong to the queue and the outbox (the outbox adds its own).
  const bodySegments: (() => Promise<number[]>)[] = [];
  const bodies =
    config.bodyLogDir && database.kind === 'pglite'
      ? new BodyLog({
          dir: config.bodyLogDir,
          live: async () => new Set((await Promise.all(bodySegments.map((f) => f()))).flat()),
          onError: (err) => logger.warn({ err }, 'the body log could not collect its unused segments'),
        })
      : undefined;
  const queue = createQueue({
    ...redis,
    db: database.db,
    leaseMs: config.queueLeaseMs,
    exclusive: database.kind === 'pglite',
    bodies,
  });
  if (queue instanceof DatabaseQueue) bodySegments.push(() => queue.bodySegments());
  const cache = createCache(redis);
  const lock = createLock(redis);
  const rateLimiter = createRateLimiter(redis);
  const clock = options.clock ?? systemClock;
  const keys = keyRing(
    loadMasterSecret({ secret: config.secretKey, dataDir: config.dataDir, required: isDistributed(config), logger }),
  );
  const broker = await brokerIdentity({
    backend: queue.backend,
    redisUrl: config.redisUrl,
    redisPrefix: config.redisPrefix,
    db: database.db,
    databaseKind: database.kind,
  });
  const keysOf = (name: KeyPurpose) => ({
    current: keys.key(name),
    previous: previousKeyRings(config.previousSecretKeys).map((r) => r.key(name)),
  });
  return {
    config,
    role,
    logger,
    telemetry,
    database,
    db: database.db,
    bodies,
    bodySegments,
    queue,
    cache,
    lock,
    rateLimiter,
    clock,
    keys,
    broker,
    onError: (err: unknown) => logger.warn({ err }, 'background write failed'),
    /** The current key `name` and the same key of earlier master secrets (still read during a rotation). */
    keysOf,
    /** A cipher under the current key `name`, still reading what earlier master secrets sealed. */
    cipher: (name: KeyPurpose, purpose: SealedFor) => {
      const k = keysOf(name);
      return createCredentialCipher(k.current, k.previous, purpose);
    },
    /** The SSRF guard of outbound connections, with the allowed private ranges (WEIR_OUTBOUND_ALLOW_CIDRS). */
    net: () => createNetPolicy({ allowCidrs: config.delivery.outboundAllowCidrs }),
  };
}
