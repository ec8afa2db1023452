// The dispatcher's delivery engine: one lane per enabled destination (the one pass routes,
// docs/delivery.md). The destinations are re-read about every second: a new destination
// gets a lane, a disabled or deleted one loses it (its in-flight requests finish, its leases
// are given back), a changed one gets a new sink. It also keeps the open tap sessions and
// the consumer-lag snapshot.
import type { Tracer } from '@opentelemetry/api';
import type { Clock } from '../../core/clock.js';
import { newId } from '../../core/ids.js';
import type { Logger } from '../../platform/logger.js';
import type { NetPolicy } from '../../platform/net/policy.js';
import type { SinkType } from '../sinks/types.js';
import { destinationRedactor } from '../sinks/secrets.js';
import type { BreakerState, EngineMetrics, EngineStore, Transact } from './engine-port.js';
import { Lane } from './lane.js';
import type { DestinationDirectory, DestinationRuntime } from './ports.js';
import { deliverySettings } from './settings.js';

export interface EngineDeps {
  store: EngineStore;
  transact: Transact;
  directory: DestinationDirectory;
  /** The destination type of a destination, looked up when its lane is built. */
  sinkType: (type: string) => SinkType | undefined;
  net: NetPolicy;
  fileRoot: string;
  /** How long an untouched open file of a file destination means a dead writer. */
  fileStaleMs?: number;
  clock: Clock;
  logger: Logger;
  metrics: EngineMetrics;
  pollMs: number;
  leaseMs: number;
  lineage: boolean;
  /** How often the destinations snapshot (lanes) is refreshed; default max(pollMs, 1000). */
  directoryRefreshMs?: number;
  /** The longest an idle lane sleeps before claiming again (default pollMs); it wakes earlier for its next due row or a local write. */
  laneIdleMs?: number;
  /** How often the consumer-lag snapshot is refreshed; 0: never (telemetry off). */
  lagRefreshMs?: number;
  /** How long stop() lets requests in flight finish before giving their rows back. */
  stopTimeoutMs?: number;
  random?: () => number;
  /** The delivery spans' tracer (docs/observability.md, Traces). */
  tracer?: Tracer;
}

export function createDeliveryEngine(deps: EngineDeps) {
  const { store, directory, logger } = deps;
  const refreshMs = deps.directoryRefreshMs ?? Math.max(deps.pollMs, 1_000);
  const stopTimeoutMs = deps.stopTimeoutMs ?? 10_000;
  const lanes = new Map<string, Lane>();
  const stopping = new Set<Promise<void>>();
  const unbuildable = new Map<string, number>(); // destination id → version already reported
  let syncing: Promise<void> | null = null;
  let lag: { partition: string; events: number }[] = [];
  let running = false;
  const timers: NodeJS.Timeout[] = [];

  function retire(lane: Lane): void {
    lanes.delete(lane.id);
    const done: Promise<void> = lane.stop(stopTimeoutMs).finally(() => stopping.delete(done));
    stopping.add(done);
  }

  async function buildLane(dest: DestinationRuntime): Promise<Lane | null> {
    const type = deps.sinkType(dest.type);
    try {
      if (!type) throw new Error(`no sink for destination type ${dest.type}`);
      const credential = dest.has_credential ? await directory.credential(dest.id) : null;
      const redact = destinationRedactor(type, credential, dest.config);
      const ctx = {
        destinationId: dest.id,
        organizationId: dest.organization_id,
        config: dest.config,
        credential,
        redact,
        net: deps.net,
        fileRoot: deps.fileRoot,
        fileStaleMs: deps.fileStaleMs,
        logger: logger.child({ destination_id: dest.id }),
      };
      const sink = type.create(ctx);
      unbuildable.delete(dest.id);
      return new Lane({
        destination: { ...dest, delivery: deliverySettings(dest.delivery) },
        sink,
        owner: newId(),
        store,
        transact: deps.transact,
        clock: deps.clock,
        logger,
        metrics: deps.metrics,
        pollMs: deps.pollMs,
        idleMs: deps.laneIdleMs ?? deps.pollMs,
        leaseMs: deps.leaseMs,
        lineage: deps.lineage,
        redact,
        random: deps.random,
        tracer: deps.tracer,
      });
    } catch (err) {
      // Its events wait in the outbox; reported once per version, tried again every refresh.
      if (unbuildable.get(dest.id) !== dest.version)
        logger.error({ err, destination_id: dest.id }, 'cannot start delivery to a destination');
      unbuildable.set(dest.id, dest.version);
      return null;
    }
  }

  async function syncOnce(): Promise<void> {
    const list = await directory.list();
    if (!running) return;
    const wanted = new Map(list.filter((d) => d.enabled).map((d) => [d.id, d]));
    for (const lane of [...lanes.values()]) {
      const dest = wanted.get(lane.id);
      if (!dest || dest.version !== lane.version) retire(lane);
    }
    for (const dest of wanted.values()) {
      if (lanes.has(dest.id)) continue;
      const lane = await buildLane(dest);
      if (!lane || !running) continue;
      lanes.set(dest.id, lane);
      lane.start();
    }
  }

  /** One refresh at a time; a caller arriving during one waits for it. */
  function sync(): Promise<void> {
    syncing ??= syncOnce()
      .catch((err: unknown) => logger.warn({ err }, 'refreshing destinations failed'))
      .finally(() => (syncing = null));
    return syncing;
  }

  /** A change committed: a refresh that may have read the list before it ends, then one reads it after. */
  let refreshQueued = false;
  async function syncAfterChange(): Promise<void> {
    if (refreshQueued) return;
    refreshQueued = true;
    await syncing;
    refreshQueued = false;
    if (running) await sync();
  }

  // Open tap sessions are read every poll while one is open; while none is, every refresh of
  // the destinations, or at once when this process opened one (tapOpened).
  let tapsOpen = false;
  let tapsReadAt = 0;
  async function refreshTaps(): Promise<void> {
    tapsReadAt = Date.now();
    if (lanes.size === 0) return;
    const sessions = await store.openTaps([...lanes.keys()]);
    tapsOpen = sessions.length > 0;
    for (const lane of lanes.values()) lane.setTaps(sessions.filter((s) => s.destination_id === lane.id));
  }
  async function pollTaps(): Promise<void> {
    if (tapsOpen || Date.now() - tapsReadAt >= refreshMs) await refreshTaps();
  }

  async function refreshLag(): Promise<void> {
    lag = await store.lag();
  }

  function every(ms: number, fn: () => Promise<void>, what: string): void {
    let busy = false;
    const timer = setInterval(() => {
      if (busy) return;
      busy = true;
      fn()
        .catch((err: unknown) => logger.warn({ err }, `${what} failed`))
        .finally(() => (busy = false));
    }, ms);
    timer.unref();
    timers.push(timer);
  }

  return {
    /** Starts delivery in this process (the dispatcher role's loop). */
    start(): { stop(): Promise<void> } {
      running = true;
      void sync();
      const unsubscribe = directory.onChange?.(() => void syncAfterChange());
      every(refreshMs, sync, 'refreshing destinations');
      every(deps.pollMs, pollTaps, 'checking tap sessions');
      if (deps.lagRefreshMs) {
        void refreshLag().catch(() => undefined);
        every(deps.lagRefreshMs, refreshLag, 'measuring consumer lag');
      }
      return {
        stop: async () => {
          running = false;
          unsubscribe?.();
          for (const t of timers.splice(0)) clearInterval(t);
          await syncing;
          for (const lane of [...lanes.values()]) retire(lane);
          await Promise.all([...stopping]);
        },
      };
    },
    /** This process opened a tap session: the lanes sample from their next delivery on. */
    tapOpened(): void {
      if (running) void refreshTaps().catch((err: unknown) => logger.warn({ err }, 'checking tap sessions failed'));
    },
    /** New outbox rows were committed in this process (the one pass, a replay): idle lanes claim at once. */
    wakeLanes(): void {
      for (const lane of lanes.values()) lane.wake();
    },
    /** Breaker state of each lane of this process (the breaker gauge). */
    breakerStates(): [string, BreakerState][] {
      return [...lanes.values()].map((l) => [l.id, l.breaker.state]);
    },
    /** The last consumer-lag snapshot (the lag gauge). */
    lag(): { partition: string; events: number }[] {
      return lag;
    },
    /** Refreshes the destinations now (tests; a destination module after an edit in this process). */
    refreshDestinations: () => sync(),
  };
}

export type DeliveryEngine = ReturnType<typeof createDeliveryEngine>;
