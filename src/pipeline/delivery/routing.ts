// The routing stage of the dispatcher (docs/delivery.md, Routing stage): `concurrency`
// workers each claim one pending normalized batch with a lease, plan it with the
// organization's compiled routes and write the outbox rows, ledger, statistics and lineage
// together with the batch's `done` mark in ONE transaction. The mark comes first and is
// conditional on route_state = 'pending': a batch someone else routed meanwhile writes
// nothing. A killed dispatcher's batches come back when their lease expires.
import type { Clock } from '../../core/clock.js';
import type { Logger } from '../../platform/logger.js';
import { decodeLines } from '../batch-codec.js';
import type { NormalizedRecord } from '../envelope.js';
import { ocsfText } from '../route/compile.js';
import type { CompiledRoutes, RouteSpec } from '../route/types.js';
import type { EngineStore, PendingBatch, Transact } from './engine-port.js';
import type { DestinationRuntime } from './ports.js';
import { buildRoutingWrite, encodeDeliveries, storeRoutingWrite } from './router.js';
import { createRoutesCache } from './routes-cache.js';
import { Sleeper } from './sleeper.js';

export interface RoutingStageDeps {
  store: EngineStore;
  transact: Transact;
  compile: (routes: RouteSpec[]) => CompiledRoutes;
  /** The destinations snapshot; `refresh` asks for a fresh one (a route names an unknown destination). */
  destinations(refresh: boolean): Promise<ReadonlyMap<string, DestinationRuntime>>;
  clock: Clock;
  logger: Logger;
  pollMs: number;
  leaseMs: number;
  concurrency: number;
  lineage: boolean;
  /** A routed batch's outbox rows were committed (the lanes of this process claim them at once). */
  routed?: () => void;
}

export function createRoutingStage(deps: RoutingStageDeps) {
  const { store, clock, logger } = deps;
  const routes = createRoutesCache({ store, compile: deps.compile, pollMs: deps.pollMs });
  const sleeper = new Sleeper();
  const claimed = new Set<string>();
  let stopping = false;
  let wokenSince = false;
  let workers: Promise<void>[] = [];

  async function route(batch: PendingBatch): Promise<boolean> {
    const compiled = (await routes.get(batch.organization_id)).compiled();
    const lines = await decodeLines(batch.events);
    const records = lines.map((l) => JSON.parse(l) as NormalizedRecord);
    const plan = compiled.plan(
      records,
      lines.map((l, i) => ocsfText(l) ?? JSON.stringify(records[i]!.ocsf)),
    );
    let destinations = await deps.destinations(false);
    // A route saved a moment ago may name a destination created a moment ago.
    if ([...plan.copies.keys()].some((id) => !destinations.has(id))) destinations = await deps.destinations(true);
    // Inline copies (the event store) go to the outbox here: the store's own lane writes them.
    const write = buildRoutingWrite(batch, records, plan, destinations, deps.lineage, false);
    await encodeDeliveries(write);
    const at = clock.now();
    return deps.transact(async () => {
      if (!(await store.markRouted(batch.id))) return false;
      await storeRoutingWrite(store, write, at, deps.lineage);
      return true;
    });
  }

  /** How long an idle worker sleeps: until a leased batch comes back, forever (until woken) when none is pending. */
  async function idleFor(): Promise<number> {
    try {
      const until = await store.nextLeaseEnd();
      if (!until) return Number.POSITIVE_INFINITY;
      return Math.max(deps.pollMs, Math.min(deps.leaseMs, until.getTime() - clock.now().getTime() + 10));
    } catch (err) {
      logger.warn({ err }, 'routing: reading pending batches failed');
      return deps.pollMs;
    }
  }

  async function worker(): Promise<void> {
    while (!stopping) {
      let batch: PendingBatch | undefined;
      try {
        [batch] = await store.claimPending(1, deps.leaseMs);
      } catch (err) {
        logger.warn({ err }, 'routing: claiming normalized batches failed');
      }
      if (!batch) {
        // A wake while idleFor reads the pending batches is kept: the sleep is skipped.
        wokenSince = false;
        const ms = await idleFor();
        if (!wokenSince) await sleeper.sleep(ms);
        continue;
      }
      claimed.add(batch.id);
      try {
        const done = await route(batch);
        if (done) deps.routed?.();
        if (!done) logger.info({ batch_id: batch.id }, 'routing: batch was routed by another dispatcher');
      } catch (err) {
        // The lease stays: the batch comes back after it, which paces a failure that repeats.
        logger.error(
          { err, batch_id: batch.id, organization_id: batch.organization_id },
          'routing a normalized batch failed',
        );
      } finally {
        claimed.delete(batch.id);
      }
    }
  }

  return {
    /** Routes a batch claimed elsewhere (tests of a redelivered claim); false when it was not pending any more. */
    route,
    /** Routes one batch now (tests); false when none was pending. */
    async routeOnce(): Promise<boolean> {
      const [batch] = await store.claimPending(1, deps.leaseMs);
      if (!batch) return false;
      await route(batch);
      return true;
    },
    start(): void {
      stopping = false;
      workers = Array.from({ length: deps.concurrency }, () => worker());
    },
    /** Ends the sleep of idle workers (new batches were written). */
    wake(): void {
      wokenSince = true;
      sleeper.wake();
    },
    async stop(): Promise<void> {
      stopping = true;
      sleeper.wake();
      await Promise.all(workers);
      workers = [];
      // Normally empty (workers finish their batch); a claim that never got routed goes back at once.
      if (claimed.size > 0) await store.releasePending([...claimed]).catch(() => undefined);
    },
  };
}

export type RoutingStage = ReturnType<typeof createRoutingStage>;
