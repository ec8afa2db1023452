// Composition root: adapters chosen from the configuration, then one line per module.
// No logic lives here beyond choosing and closing.
import type { RouteModule } from './app.js';
import type { Config, Role } from './config.js';
import { systemClock, type Clock } from './core/clock.js';
import { wireHealth } from './modules/health/index.js';
import { wireMaintenance } from './modules/maintenance/index.js';
import { wireProcesses } from './modules/processes/index.js';
import type { ProcessService } from './modules/processes/service.js';
import { createCache } from './platform/cache/index.js';
import type { CachePort } from './platform/cache/port.js';
import { migrate, openDatabase, type Database } from './platform/db/index.js';
import { noAuthentication, type Authenticator } from './platform/http/access.js';
import { createLock } from './platform/lock/index.js';
import type { LockPort } from './platform/lock/port.js';
import { createLogger, type Logger } from './platform/logger.js';
import { createQueue } from './platform/queue/index.js';
import type { QueuePort } from './platform/queue/port.js';
import { startTelemetry, traceLogMixin, type Telemetry } from './platform/telemetry/index.js';
import type { BeatTask } from './roles/beat.js';
import type { JobRegistration } from './roles/jobs.js';

export interface Container {
  readonly config: Readonly<Config>;
  readonly role: Role;
  readonly logger: Logger;
  readonly clock: Clock;
  readonly telemetry: Telemetry;
  readonly database: Database;
  readonly queue: QueuePort;
  readonly cache: CachePort;
  readonly lock: LockPort;
  readonly authenticator: Authenticator;
  readonly processes: ProcessService;
  /** Every module's routes, registered by buildApp in this order. */
  readonly routes: RouteModule[];
  /** Queue handlers, run by the worker and dispatcher roles. */
  readonly jobs: JobRegistration[];
  /** Periodic tasks, run by the elected beat. */
  readonly beatTasks: BeatTask[];
  close(): Promise<void>;
}

export interface ContainerOptions {
  role: Role;
  logger?: Logger;
  /** Replaces the adapter the configuration would choose (tests). */
  database?: Database;
  clock?: Clock;
}

export async function createContainer(config: Readonly<Config>, options: ContainerOptions): Promise<Container> {
  const { role } = options;
  const logger = options.logger ?? createLogger({ level: config.logLevel, role, mixin: traceLogMixin });
  const telemetry = await startTelemetry(config.telemetry, { role, logger });
  const database =
    options.database ??
    (await openDatabase({ url: config.databaseUrl, dataDir: `${config.dataDir}/pglite`, logger }));
  await migrate(database.db);
  const redis = { redisUrl: config.redisUrl, redisPrefix: config.redisPrefix, logger };
  const queue = createQueue({ ...redis, db: database.db });
  const cache = createCache(redis);
  const lock = createLock(redis);

  const onError = (err: unknown) => logger.warn({ err }, 'background write failed');
  const processes = wireProcesses({ db: database.db, clock: options.clock ?? systemClock, queueBackend: queue.backend, onError });
  const maintenance = wireMaintenance({ queue, processes: processes.service });
  const health = wireHealth({
    probes: [
      { name: 'database', check: () => database.ping() },
      { name: 'cache', check: () => cache.ping() },
    ],
  });

  return {
    config,
    role,
    logger,
    clock: options.clock ?? systemClock,
    telemetry,
    database,
    queue,
    cache,
    lock,
    authenticator: noAuthentication,
    processes: processes.service,
    routes: [health.routes],
    jobs: [...maintenance.jobs],
    beatTasks: [...maintenance.beatTasks],
    async close() {
      // Consumers first (they finish in-flight work), then what they write to.
      await queue.close();
      await Promise.allSettled([cache.close(), lock.close()]);
      // An injected database belongs to whoever injected it.
      if (!options.database) await database.close();
      await telemetry.shutdown();
    },
  };
}
