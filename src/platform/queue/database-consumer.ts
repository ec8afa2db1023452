// One consumer of the database queue: a poll loop that claims due jobs up to its
// concurrency, runs them and renews their leases while they run (the queue sweeps expired
// leases, database.ts). It sleeps between polls and wakes early on a local enqueue, a finished
// job or a sweep that gave jobs back; when no other process can enqueue (an exclusive
// database), it sleeps until its next due job or one of those wakes.
import type { EventEmitter } from 'node:events';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { DB } from '../db/index.js';
import { errorText } from './options.js';
import { settlesWithin } from './settle.js';
import type { Consumer, Job, JobHandler } from './port.js';
import { claim, complete, fail, msUntilNextDue, renew, type ClaimedRow } from './database-store.js';
import type { BodyLog } from '../bodylog/log.js';
import { loadBody } from '../bodylog/stored.js';
import { decodePayload } from './payload-codec.js';
import { backoffDelay } from '../net/retry.js';

export interface DatabaseConsumerSettings {
  db: Kysely<DB>;
  /** Where compressed payloads live when the row names them by reference (embedded). */
  bodies?: BodyLog | undefined;
  queue: string;
  handler: JobHandler<unknown>;
  concurrency: number;
  consumerId: string;
  leaseMs: number;
  heartbeatMs: number;
  pollIntervalMs: number;
  /** The longest sleep when no job is due: pollIntervalMs, or (no other process enqueues) as long as a timer goes. */
  idleMs: number;
  /** Emits wakeEvent(queue) on a local enqueue and when a sweep gave the queue's jobs back. */
  wakeups: EventEmitter;
  logger: Logger | undefined;
}

interface Running {
  id: string;
  controller: AbortController;
  done: Promise<void>;
}

/** Shortest sleep when due jobs exist but another consumer holds them, so we never spin. */
const MIN_SLEEP_MS = 10;
const MAX_ERROR_BACKOFF_MS = 5000;
/** After an aborted close, how long handlers get to notice the signal. */
const ABORT_GRACE_MS = 1000;

export class DatabaseConsumer implements Consumer {
  readonly #s: DatabaseConsumerSettings;
  readonly #running = new Map<string, Running>();
  readonly #loop: Promise<void>;
  readonly #heartbeat: NodeJS.Timeout;
  #closing: Promise<void> | undefined;
  #stopped = false;
  #wakePending = false;
  #wake: (() => void) | undefined;
  #renewing = false;

  constructor(settings: DatabaseConsumerSettings) {
    this.#s = settings;
    settings.wakeups.on(wakeEvent(settings.queue), this.#onWake);
    this.#heartbeat = setInterval(() => void this.#renewLeases(), settings.heartbeatMs);
    // In-flight handlers keep the process busy on their own; the heartbeat must not.
    this.#heartbeat.unref();
    this.#loop = this.#run();
  }

  close(timeoutMs?: number): Promise<void> {
    this.#closing ??= this.#shutdown(timeoutMs);
    return this.#closing;
  }

  readonly #onWake = () => {
    this.#wakePending = true;
    this.#wake?.();
  };

  async #run(): Promise<void> {
    const s = this.#s;
    let failures = 0;
    while (!this.#stopped) {
      let sleepMs = s.idleMs;
      try {
        const free = s.concurrency - this.#running.size;
        if (free > 0 && !this.#stopped) {
          const rows = await claim(s.db, s.queue, free, s.consumerId, s.leaseMs);
          for (const row of rows) this.#start(row);
          // Fewer than asked: nothing else is due now, so sleep until the next job is.
          // (All slots filled: a finishing job wakes us.)
          if (rows.length < free) {
            const dueIn = await msUntilNextDue(s.db, s.queue);
            if (dueIn !== null) sleepMs = Math.min(s.idleMs, Math.max(MIN_SLEEP_MS, Math.ceil(dueIn)));
          }
        }
        failures = 0;
      } catch (err) {
        failures += 1;
        // No jitter: one poller per process, nothing to spread.
        sleepMs = backoffDelay({
          attempt: failures + 1,
          baseMs: s.pollIntervalMs,
          maxMs: MAX_ERROR_BACKOFF_MS,
          jitter: false,
        });
        s.logger?.error({ err, queue: s.queue }, 'queue: polling failed');
      }
      await this.#sleep(sleepMs);
    }
  }

  #sleep(ms: number): Promise<void> {
    if (this.#stopped) return Promise.resolve();
    if (this.#wakePending) {
      this.#wakePending = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.#wake = undefined;
        this.#wakePending = false;
        resolve();
      };
      // Ref'd on purpose: an open consumer is work the process exists to do.
      const timer = setTimeout(done, ms);
      this.#wake = done;
    });
  }

  #start(row: ClaimedRow): void {
    const s = this.#s;
    const controller = new AbortController();
    const job: Job<unknown> = {
      id: row.id,
      queue: s.queue,
      name: row.name,
      payload: row.payload,
      attempt: row.attempts_made,
      maxAttempts: row.max_attempts,
    };
    const key = `${row.id}#${row.attempts_made}`;
    const done = (async () => {
      let failure: { err: unknown } | undefined;
      try {
        job.payload = await decodePayload(
          row.payload,
          row.payload_gz === null ? null : await loadBody(s.bodies, row.payload_gz),
        );
        await s.handler(job, controller.signal);
      } catch (err) {
        failure = { err };
      }
      try {
        let held: boolean;
        if (failure) {
          const state = await fail(s.db, s.queue, row.id, s.consumerId, row.attempts_made, errorText(failure.err));
          held = state !== undefined;
          const at = { err: failure.err, queue: s.queue, jobId: row.id, attempt: job.attempt };
          // Each failed attempt is the handler's to log; the queue reports the final one.
          if (state === 'failed') s.logger?.warn(at, 'queue: job failed after its last attempt');
          else if (state === 'waiting') s.logger?.debug(at, 'queue: job attempt failed, will retry');
        } else {
          held = await complete(s.db, s.queue, row.id, s.consumerId, row.attempts_made);
        }
        // The lease ran out and the job was handed on: its outcome here no longer counts.
        if (!held) s.logger?.warn({ queue: s.queue, jobId: row.id }, 'queue: job finished after losing its lease');
      } catch (err) {
        // The lease will expire and the job run again: delivery is at least once.
        s.logger?.error({ err, queue: s.queue, jobId: row.id }, 'queue: could not record job outcome');
      } finally {
        this.#running.delete(key);
        this.#onWake();
      }
    })();
    this.#running.set(key, { id: row.id, controller, done });
  }

  async #renewLeases(): Promise<void> {
    if (this.#renewing || this.#running.size === 0) return;
    this.#renewing = true;
    const s = this.#s;
    try {
      const ids = [...new Set([...this.#running.values()].map((r) => r.id))];
      const held = await renew(s.db, s.queue, ids, s.consumerId, s.leaseMs);
      const lost = ids.filter((id) => !held.has(id));
      if (lost.length > 0) s.logger?.warn({ queue: s.queue, jobIds: lost }, 'queue: lost the lease of running jobs');
    } catch (err) {
      s.logger?.error({ err, queue: s.queue }, 'queue: lease renewal failed');
    } finally {
      this.#renewing = false;
    }
  }

  async #shutdown(timeoutMs: number | undefined): Promise<void> {
    this.#stopped = true;
    this.#s.wakeups.off(wakeEvent(this.#s.queue), this.#onWake);
    this.#wake?.();
    await this.#loop;
    const settled = () => Promise.allSettled([...this.#running.values()].map((r) => r.done)).then(() => true);
    if (timeoutMs === undefined) {
      await settled();
    } else if (!(await settlesWithin(settled(), timeoutMs))) {
      this.#s.logger?.warn(
        { queue: this.#s.queue, running: this.#running.size },
        'queue: aborting jobs at shutdown deadline',
      );
      for (const r of this.#running.values()) r.controller.abort(new Error('queue consumer closing'));
      // Whatever still runs after this keeps no lease: another consumer picks it up later.
      await settlesWithin(settled(), ABORT_GRACE_MS);
    }
    clearInterval(this.#heartbeat);
  }
}

/** The local wake-up event of a queue ("error" must never be an event name we emit). */
export function wakeEvent(queue: string): string {
  return `enqueued:${queue}`;
}
