// The dispatcher's wiring: the delivery engine (its lanes) as a role loop; what the one pass
// needs of routing, also used for the batches an earlier version left pending (leftovers.ts);
// its metrics, housekeeping jobs and beat schedules, and the organization data-deletion steps
// of the delivery tables. The ledger's balance is modules/delivery-status (balance.ts).
import type { Kysely } from 'kysely';
import type { Clock } from '../../core/clock.js';
import type { BodyLog } from '../../platform/bodylog/log.js';
import { keepBodies } from '../../platform/bodylog/stored.js';
import { inTransaction } from '../../platform/db/ambient.js';
import type { DB } from '../../platform/db/index.js';
import type { Logger } from '../../platform/logger.js';
import type { NetPolicy } from '../../platform/net/policy.js';
import type { QueuePort } from '../../platform/queue/port.js';
import type { Telemetry } from '../../platform/telemetry/index.js';
import { createDestinationsSnapshot } from '../../pipeline/delivery/destinations-snapshot.js';
import { createDeliveryEngine } from '../../pipeline/delivery/engine.js';
import type { InlineStore, LedgerEntry, NewDelivery, RoutingWrite } from '../../pipeline/delivery/engine-port.js';
import { storeRoutingWrite } from '../../pipeline/delivery/routing-write.js';
import type { BacklogGate } from './backlog.js';
import { createRoutesCache } from '../../pipeline/delivery/routes-cache.js';
import type { DestinationDirectory } from '../../pipeline/delivery/ports.js';
import { compileRoutes } from '../../pipeline/route/compile.js';
import type { CompiledRoutes, RouteSpec } from '../../pipeline/route/types.js';
import { SINK_TYPES } from '../../pipeline/sinks/index.js';
import type { SinkType } from '../../pipeline/sinks/types.js';
import type { RoleLoop } from '../../platform/queue/jobs.js';
import type { OrgDataStep } from '../organizations/jobs.js';
import { deliveryHousekeeping, deliveryHousekeepingJobs, deliveryHousekeepingTasks } from './jobs.js';
import { createLeftoverRouting } from './leftovers.js';
import { createDeliveryMetrics } from './metrics.js';
import { createDeliveryStore, ORG_DELIVERY_TABLES } from './store.js';

/** Routing and delivery (dispatcher role). */
export interface DeliveryConfig {
  /** How often an idle dispatcher looks for new work (due deliveries, changed routes). */
  pollMs: number;
  /** How long a dispatcher holds claimed outbox rows; a killed dispatcher's rows come back after it. */
  leaseMs: number;
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

export interface DeliveryWiring {
  db: Kysely<DB>;
  clock: Clock;
  logger: Logger;
  telemetry: Telemetry;
  queue: QueuePort;
  dataDeletion: { addStep(step: OrgDataStep): void };
  config: DeliveryConfig;
  directory: DestinationDirectory;
  /** The SSRF guard of outbound deliveries: createNetPolicy({allowCidrs: config.delivery.outboundAllowCidrs}). */
  net: NetPolicy;
  /** Destination types (default SINK_TYPES); ignored when sinkTypeOf is given. */
  sinkTypes?: readonly SinkType[];
  /** Looks a type up at lane build time (the destinations module's registry, so both agree, fakes included). */
  sinkTypeOf?: (type: string) => SinkType | undefined;
  /** Root of file destinations (default config.fileRoot). */
  fileRoot?: string;
  compile?: (routes: RouteSpec[]) => CompiledRoutes;
  /** How often lanes follow destination changes (default max(pollMs, 1 s)). */
  directoryRefreshMs?: number;
  /**
   * The database is this process's alone (embedded): every write to the outbox and to a
   * destination is this process's and wakes what waits for it, so nothing idle polls; the
   * periodic reads are safety nets every EXCLUSIVE_REFRESH_MS.
   */
  exclusive?: boolean;
  /** Consumer-lag snapshot period (default 5 s when telemetry is on, else never). */
  lagRefreshMs?: number;
  /** How long stopping lets requests in flight finish (default 10 s). */
  stopTimeoutMs?: number;
  random?: () => number;
  /** Where the pass writes inline copies (the event store: modules/search). */
  inlineStore?: InlineStore;
  /** The embedded body log: outbox bodies go there, the rows keep references. */
  bodies?: BodyLog | undefined;
  /** Backlog budgets: the copies a full drop_newest destination does not take (backlog.ts). */
  backlog?: Pick<BacklogGate, 'dropOverBudget' | 'added'>;
}

const DELETE_CHUNK = 10_000;
/** Exclusive (embedded): how often the destinations are re-read and an idle lane claims when nothing woke it. */
const EXCLUSIVE_REFRESH_MS = 30_000;

export function wireDelivery(deps: DeliveryWiring) {
  const { db, clock, logger, config } = deps;
  const store = createDeliveryStore(db, deps.bodies);
  const metrics = createDeliveryMetrics(deps.telemetry.meter);
  const types = deps.sinkTypes ?? SINK_TYPES;
  const sinkTypes = deps.sinkTypeOf
    ? { find: deps.sinkTypeOf }
    : { find: (type: string) => types.find((t) => t.type === type) };
  const directoryRefreshMs =
    deps.directoryRefreshMs ?? (deps.exclusive ? EXCLUSIVE_REFRESH_MS : Math.max(config.pollMs, 1_000));
  const engine = createDeliveryEngine({
    store: store.engine,
    transact: (fn) => inTransaction(db, fn),
    directory: deps.directory,
    sinkType: sinkTypes.find,
    net: deps.net,
    fileRoot: deps.fileRoot ?? config.fileRoot,
    fileStaleMs: config.fileStaleMs,
    clock,
    logger,
    metrics,
    pollMs: config.pollMs,
    leaseMs: config.leaseMs,
    lineage: config.lineageEnabled,
    directoryRefreshMs,
    laneIdleMs: deps.exclusive ? EXCLUSIVE_REFRESH_MS : config.pollMs,
    lagRefreshMs: deps.lagRefreshMs ?? (deps.telemetry.enabled ? 5_000 : 0),
    stopTimeoutMs: deps.stopTimeoutMs,
    random: deps.random,
    tracer: deps.telemetry.tracer,
  });
  metrics.observe(engine);

  // What the one pass (the normalization worker) needs of routing: the routes, the
  // destinations snapshot and the writes of its transaction.
  const routesCache = createRoutesCache({
    store: store.engine,
    compile: deps.compile ?? compileRoutes,
    pollMs: config.pollMs,
  });
  const destinationsSnapshot = createDestinationsSnapshot(deps.directory, directoryRefreshMs, config.pollMs);
  const passRouting = {
    lineage: config.lineageEnabled,
    routes: (organizationId: number) => routesCache.get(organizationId),
    destinations: (refresh: boolean) => destinationsSnapshot.get(refresh),
    /** Before the batch's transaction: the event store's copies, and the outbox bodies into the body log (pinned until release). */
    prepare: async (write: RoutingWrite) => {
      await deps.backlog?.dropOverBudget(write);
      if (write.stored.length > 0) await deps.inlineStore?.prepare(write.batchId, write.stored);
      if (deps.bodies && write.deliveries.length > 0) {
        const refs = await keepBodies(
          deps.bodies,
          write.deliveries.map((d) => d.events),
          false,
        );
        write.deliveries.forEach((d, i) => (d.events = refs[i]!));
      }
    },
    /** After the batch's transaction, committed or not. */
    release: (write: RoutingWrite) => deps.bodies?.release(write.deliveries.map((d) => d.events)),
    write: (write: RoutingWrite, at: Date) =>
      storeRoutingWrite(store.engine, write, at, config.lineageEnabled, deps.inlineStore),
    written: (write: RoutingWrite) => {
      deps.backlog?.added(write.deliveries);
      engine.wakeLanes();
    },
  };

  const leftovers = createLeftoverRouting({
    store,
    routing: passRouting,
    transact: (fn) => inTransaction(db, fn),
    clock,
  });

  // An organization's delivery data goes with it; bounded deletes, lineage children first.
  for (const { table, key } of ORG_DELIVERY_TABLES) {
    deps.dataDeletion.addStep({
      name: table,
      run: async (organizationId) => {
        let rows = 0;
        let n: number;
        do {
          n = await store.deleteOrgRows(table, key, organizationId, DELETE_CHUNK);
          rows += n;
        } while (n === DELETE_CHUNK);
        return { rows };
      },
    });
  }

  const housekeeping = deliveryHousekeeping(store, clock, { dlqDays: config.dlqDays, lineageDays: config.lineageDays });
  const housekeepingJobs = deliveryHousekeepingJobs(housekeeping);
  const running = new Set<{ stop(): Promise<void> }>();
  const loop: RoleLoop = {
    name: 'delivery',
    role: 'dispatcher',
    start() {
      // What killed dispatchers left behind (open files of file destinations) is finished first.
      const host = { fileRoot: deps.fileRoot ?? config.fileRoot, fileStaleMs: config.fileStaleMs, logger };
      const recoveries = types.flatMap((t) => (t.recover ? [t.recover(host)] : []));
      const handle = engine.start();
      const tracked = {
        stop: async () => {
          running.delete(tracked);
          await handle.stop();
          await Promise.all(recoveries.map((r) => r.stop()));
        },
      };
      running.add(tracked);
      return tracked;
    },
  };

  return {
    engine,
    store,
    passRouting,
    /** Outbox rows written outside the pass (replays): rows (events encoded) and their ledger, in the caller's transaction; wake() after it committed. */
    outbox: {
      async write(rows: NewDelivery[], ledger: LedgerEntry[], at: Date): Promise<void> {
        await store.engine.insertDeliveries(rows);
        await store.engine.addLedger(ledger, at);
      },
      wake: () => engine.wakeLanes(),
    },
    housekeeping,
    loops: [loop],
    /** Routes a batch an earlier version left pending (the job migration 0025 queued for it); false when it was not pending. */
    routeLeftover: leftovers.route,
    /** Routes normalized records with the pass's routing, in a transaction of their own (tests, the leftover batches). */
    routeRecords: leftovers.routeRecords,
    // The leftover batches' jobs share the housekeeping queue: the migration queued them there.
    jobs: [{ ...housekeepingJobs, handlers: { ...housekeepingJobs.handlers, ...leftovers.handlers } }],
    beatTasks: deliveryHousekeepingTasks(deps.queue),
    /** Stops the engine if a loop is still running; call before the database closes. */
    async close(): Promise<void> {
      await Promise.all([...running].map((r) => r.stop()));
    },
  };
}

export type Delivery = ReturnType<typeof wireDelivery>;
