// "Accepted with 201 and nothing happens": the usual cause is an API and workers that talk
// to different brokers (another REDIS_URL, database or key prefix). This compares the
// broker of this process with what live workers record in their heartbeats, and proves it
// with a round trip: a backfill.ping job enqueued here must be completed by some worker
// (its answer comes back through the cache, which lives on the same Redis as the queue).
import { hostname } from 'node:os';
import type { Clock } from '../../core/clock.js';
import { errors } from '../../core/errors.js';
import { newId } from '../../core/ids.js';
import type { Scope } from '../../core/scope.js';
import type { CachePort } from '../../platform/cache/port.js';
import { brokerKey, parseBrokerKey, type BrokerIdentity } from '../../platform/queue/identity.js';
import type { HeartbeatRow } from '../processes/store.js';
import type { JobQueue } from '../queues.js';
import { BACKFILL_QUEUE, PING_JOB, pingKey, type PingAnswer, type PingPayload } from './jobs.js';
import type { BackfillStore } from './store.js';

export const STUCK_AFTER_MS = 5 * 60_000;
const WORKER_ROLES = new Set(['worker', 'all']);

export interface DiagnosticsDeps {
  queue: Pick<JobQueue, 'backend' | 'enqueue' | 'counts'>;
  cache: Pick<CachePort, 'get' | 'del'>;
  processes: { list(): Promise<HeartbeatRow[]> };
  store: Pick<BackfillStore, 'stuck'>;
  clock: Clock;
  broker: BrokerIdentity;
  /** A heartbeat older than this is a dead process. */
  liveWithinMs: number;
  /** How long the round trip may take; default 3 s. */
  roundTripWaitMs?: number;
  pollMs?: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export function createDiagnostics(deps: DiagnosticsDeps) {
  const waitMs = deps.roundTripWaitMs ?? 3_000;
  const pollMs = deps.pollMs ?? 25;
  const ownKey = brokerKey(deps.broker);

  async function roundTrip() {
    const token = newId();
    const payload: PingPayload = { token, sent_at: Date.now() };
    const started = performance.now();
    try {
      await deps.queue.enqueue(BACKFILL_QUEUE, PING_JOB, payload, { attempts: 1, jobId: `backfill-ping-${token}` });
    } catch (err) {
      // The broker's own message may name hosts; never credentials, but keep it to the kind of failure.
      const kind = (err as NodeJS.ErrnoException).code ?? (err as Error).name ?? 'error';
      return { ok: false, ms: null, worker: null, waited_ms: 0, error: `the job could not be enqueued (${kind})` };
    }
    for (;;) {
      const answer = await deps.cache.get<PingAnswer>(pingKey(token));
      const elapsed = Math.round(performance.now() - started);
      if (answer) {
        await deps.cache.del(pingKey(token)).catch(() => undefined);
        return { ok: true, ms: elapsed, worker: answer.worker, waited_ms: elapsed, error: null };
      }
      if (elapsed >= waitMs) {
        return {
          ok: false,
          ms: null,
          worker: null,
          waited_ms: elapsed,
          error: `no worker completed the ping within ${waitMs} ms`,
        };
      }
      await sleep(pollMs);
    }
  }

  return {
    async run(scope: Scope) {
      const now = deps.clock.now();
      const [beats, counts, stuck, trip] = await Promise.all([
        deps.processes.list(),
        deps.queue.counts(BACKFILL_QUEUE).catch(() => {
          throw errors.unavailable('job queue');
        }),
        deps.store.stuck(scope, new Date(now.getTime() - STUCK_AFTER_MS)),
        roundTrip(),
      ]);
      const live = beats.filter(
        (b) => WORKER_ROLES.has(b.role) && now.getTime() - new Date(b.last_seen_at).getTime() <= deps.liveWithinMs,
      );
      const workers = live.map((b) => {
        const broker = parseBrokerKey(b.broker);
        return {
          process: b.id,
          role: b.role,
          hostname: b.hostname,
          pid: b.pid,
          last_seen_at: b.last_seen_at,
          queue_backend: b.queue_backend,
          broker,
          same_broker: broker !== null && brokerKey(broker) === ownKey,
        };
      });
      return {
        same_broker: workers.length > 0 && workers.every((w) => w.same_broker),
        api: { process: `${hostname()}:${process.pid}`, queue_backend: deps.queue.backend, broker: deps.broker },
        workers,
        round_trip: trip,
        queue: { waiting: counts.waiting, active: counts.active, delayed: counts.delayed, failed: counts.failed },
        stuck_jobs: stuck.map((j) => ({
          id: j.id,
          organization_id: j.organization_id,
          integration_id: j.integration_id,
          created_at: j.created_at,
          waiting_seconds: Math.max(
            0,
            Math.floor((now.getTime() - new Date(j.resume_at ?? j.updated_at).getTime()) / 1000),
          ),
        })),
      };
    },
  };
}

export type Diagnostics = ReturnType<typeof createDiagnostics>;
