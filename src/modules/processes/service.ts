// Liveness of every process: each role records a heartbeat (role, host, pid, the queue
// backend it uses) so an operator, and the diagnostics of later modules, can see which
// processes run and whether they share one broker. Stale rows are pruned by beat.
import { hostname } from 'node:os';
import type { Clock } from '../../core/clock.js';
import type { ProcessStore } from './store.js';

export interface HeartbeatHandle {
  id: string;
  stop(): Promise<void>;
}

export interface ProcessServiceDeps {
  store: ProcessStore;
  clock: Clock;
  /** Identity of the queue backend, without credentials. */
  queueBackend: string;
  /** Which broker (brokerKey(), no credentials): backfill diagnostics compare the API's with the workers'. */
  broker?: string;
  onError?: (err: unknown) => void;
}

export function createProcessService(deps: ProcessServiceDeps) {
  const { store, clock } = deps;
  return {
    /** Writes a heartbeat now and then every intervalMs until stopped (row removed). */
    async start(role: string, intervalMs: number): Promise<HeartbeatHandle> {
      const id = `${hostname()}:${process.pid}:${role}`;
      const started = clock.now();
      const beat = () =>
        store.beat({
          id,
          role,
          hostname: hostname(),
          pid: process.pid,
          started_at: started,
          last_seen_at: clock.now(),
          queue_backend: deps.queueBackend,
          broker: deps.broker ?? null,
        });
      await beat();
      const timer = setInterval(() => void beat().catch((err) => deps.onError?.(err)), intervalMs);
      timer.unref();
      return {
        id,
        async stop() {
          clearInterval(timer);
          await store.remove(id).catch((err) => deps.onError?.(err));
        },
      };
    },
    list: () => store.list(),
    /** Removes processes not seen for staleMs (they died without stopping). */
    prune: (staleMs: number) => store.pruneOlderThan(new Date(clock.now().getTime() - staleMs)),
  };
}

export type ProcessService = ReturnType<typeof createProcessService>;
