// The embedded queue: jobs live in the `jobs` table, so an accepted job survives a restart.
// It also runs on PostgreSQL with several processes: claims use FOR UPDATE SKIP LOCKED,
// running jobs hold a lease their consumer renews, and any consumer returns jobs whose lease
// expired (their process died) to the queue: one sweep per queue object every lease check,
// whatever the number of consumers, which wakes the consumers of the queues it gave jobs to.
import { EventEmitter } from 'node:events';
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { Logger } from 'pino';
import { afterCommit, executor } from '../db/ambient.js';
import type { DB } from '../db/index.js';
import type { BodyLog } from '../bodylog/log.js';
import { QueueClosedError } from './errors.js';
import {
  leaseTimings,
  queueName,
  resolveConcurrency,
  resolveJobOptions,
  resolveRepeat,
  type LeaseTimings,
} from './options.js';
import type { ConsumeOptions, Consumer, JobCounts, JobHandler, JobOptions, QueuePort, RepeatOptions } from './port.js';
import { bodySegments, counts, insertJob, prune, sweep } from './database-store.js';
import { deleteSchedule, upsertSchedule } from './database-repeat.js';
import { DatabaseConsumer, wakeEvent } from './database-consumer.js';

export interface DatabaseQueueOptions {
  db: Kysely<DB>;
  logger?: Logger | undefined;
  /** How often an idle consumer looks for jobs enqueued by other processes; default 200. */
  pollIntervalMs?: number | undefined;
  /**
   * The database is this process's alone (embedded PGlite, whose data directory admits one
   * process): no other process enqueues, so an idle consumer does not poll. It sleeps until its
   * next due job, a local enqueue or repeat, or a sweep that gave its queue jobs back.
   */
  exclusive?: boolean | undefined;
  /** Longest a job stays with a consumer that died before another takes it (WEIR_QUEUE_LEASE_MS); default 30 000. */
  leaseMs?: number | undefined;
  /** Compressed payloads go to this log and rows keep their references (embedded only: one process owns it). */
  bodies?: BodyLog | undefined;
}

/** The longest delay a Node timer takes (about 24.8 days). */
const MAX_TIMER_MS = 2_147_483_647;

export class DatabaseQueue implements QueuePort {
  readonly backend = 'database' as const;
  readonly #db: Kysely<DB>;
  readonly #logger: Logger | undefined;
  readonly #pollIntervalMs: number;
  readonly #exclusive: boolean;
  readonly #lease: LeaseTimings;
  readonly #bodies: BodyLog | undefined;
  // Local enqueues wake local consumers at once; other processes' jobs are found by polling.
  readonly #wakeups = new EventEmitter().setMaxListeners(0);
  readonly #consumers = new Set<DatabaseConsumer>();
  readonly #instance = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  #consumerSeq = 0;
  #closed = false;
  #sweeper: NodeJS.Timeout | undefined;
  #sweeping = false;

  constructor(options: DatabaseQueueOptions) {
    this.#db = options.db;
    this.#logger = options.logger;
    this.#pollIntervalMs = options.pollIntervalMs ?? 200;
    this.#exclusive = options.exclusive ?? false;
    this.#lease = leaseTimings(options.leaseMs);
    this.#bodies = options.bodies;
  }

  /**
   * Joins the open unit of work (platform/db/ambient.ts) when there is one: the job commits
   * or rolls back with the rows written beside it, and local consumers are woken after the
   * commit, when they can see it.
   */
  async enqueue<T>(queue: string, name: string, payload: T, options?: JobOptions): Promise<string> {
    this.#assertOpen();
    const id = await insertJob(
      executor(this.#db),
      queueName(queue),
      name,
      payload,
      resolveJobOptions(options),
      this.#bodies,
    );
    await afterCommit(async () => {
      this.#wakeups.emit(wakeEvent(queue));
    });
    return id;
  }

  async repeat<T>(queue: string, key: string, name: string, payload: T, options: RepeatOptions): Promise<void> {
    this.#assertOpen();
    const everyMs = resolveRepeat(key, options);
    await upsertSchedule(this.#db, queueName(queue), key, name, payload, everyMs);
    this.#wakeups.emit(wakeEvent(queue));
  }

  async removeRepeat(queue: string, key: string): Promise<void> {
    this.#assertOpen();
    await deleteSchedule(this.#db, queueName(queue), key);
  }

  consume<T>(queue: string, handler: JobHandler<T>, options?: ConsumeOptions): Consumer {
    this.#assertOpen();
    const consumer = new DatabaseConsumer({
      db: this.#db,
      bodies: this.#bodies,
      queue: queueName(queue),
      handler: handler as JobHandler<unknown>,
      concurrency: resolveConcurrency(options),
      consumerId: `${this.#instance}:${++this.#consumerSeq}`,
      leaseMs: this.#lease.holdMs,
      heartbeatMs: this.#lease.renewMs,
      pollIntervalMs: this.#pollIntervalMs,
      // Exclusive: nothing to find between wakes (enqueues, repeats, sweeps), so no poll at all.
      idleMs: this.#exclusive ? MAX_TIMER_MS : this.#pollIntervalMs,
      wakeups: this.#wakeups,
      logger: this.#logger?.child({ queue }),
    });
    this.#consumers.add(consumer);
    this.#startSweeper();
    return {
      close: async () => {
        await consumer.close();
        this.#consumers.delete(consumer);
      },
    };
  }

  counts(queue: string): Promise<JobCounts> {
    return counts(this.#db, queueName(queue));
  }

  async ping(): Promise<void> {
    await sql`select 1`.execute(this.#db);
  }

  /** The body-log segments this queue's rows name. */
  bodySegments(): Promise<number[]> {
    return bodySegments(this.#db);
  }

  /** Deletes completed and failed jobs that finished more than `olderThanMs` ago. */
  prune(olderThanMs: number): Promise<number> {
    return prune(this.#db, olderThanMs);
  }

  /**
   * Stops every consumer and waits for running jobs. With a deadline, jobs still running
   * when it passes see their AbortSignal fire. The database itself stays open (its owner
   * closes it).
   */
  async close(timeoutMs?: number): Promise<void> {
    this.#closed = true;
    clearInterval(this.#sweeper);
    await Promise.all([...this.#consumers].map((c) => c.close(timeoutMs)));
    this.#consumers.clear();
    this.#wakeups.removeAllListeners();
  }

  /** Stalled-job recovery for every queue, once per lease check; the first run is at once (jobs a killed process held). */
  #startSweeper(): void {
    if (this.#sweeper) return;
    const run = async () => {
      if (this.#sweeping || this.#closed) return;
      this.#sweeping = true;
      try {
        const queues = await sweep(this.#db);
        if (queues.length === 0) return;
        this.#logger?.warn({ recovered: queues.length }, 'queue: recovered jobs whose lease expired');
        for (const queue of new Set(queues)) this.#wakeups.emit(wakeEvent(queue));
      } catch (err) {
        this.#logger?.error({ err }, 'queue: sweeping expired leases failed');
      } finally {
        this.#sweeping = false;
      }
    };
    this.#sweeper = setInterval(() => void run(), this.#lease.checkMs);
    this.#sweeper.unref();
    void run();
  }

  #assertOpen(): void {
    if (this.#closed) throw new QueueClosedError();
  }
}
