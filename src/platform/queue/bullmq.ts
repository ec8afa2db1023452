// The distributed queue: BullMQ on Redis. Retries, delays, job schedulers and stalled-job
// recovery are BullMQ's own; this adapter maps the port onto them and owns the connections.
import { Queue, UnrecoverableError, Worker, type Job as BullJob, type JobsOptions, type KeepJobs } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { closeRedisClient, createRedisClient } from '../redis.js';
import { QueueClosedError } from './errors.js';
import { settlesWithin } from './settle.js';
import {
  DEFAULT_ATTEMPTS,
  DEFAULT_BACKOFF_MS,
  errorText,
  leaseTimings,
  MAX_ATTEMPTS,
  queueName,
  resolveConcurrency,
  resolveJobOptions,
  resolveRepeat,
} from './options.js';
import type {
  ConsumeOptions,
  Consumer,
  Job,
  JobCounts,
  JobHandler,
  JobOptions,
  QueuePort,
  RepeatOptions,
} from './port.js';

export interface BullMqQueueOptions {
  redisUrl: string;
  /** Namespaces every key (BullMQ's `prefix`); one per deployment, or per test. */
  prefix: string;
  logger?: Logger | undefined;
  /** Longest a job stays with a worker that died before another takes it (WEIR_QUEUE_LEASE_MS); default 30 000. */
  leaseMs?: number | undefined;
  /** Finished jobs kept in Redis (BullMQ evicts older ones as new jobs finish). */
  keepCompleted?: KeepJobs | undefined;
  keepFailed?: KeepJobs | undefined;
}

const DAY_S = 24 * 3600;
/** After an aborted close, how long handlers get to notice the signal. */
const ABORT_GRACE_MS = 1000;

export class BullMqQueue implements QueuePort {
  readonly backend = 'bullmq' as const;
  readonly #options: BullMqQueueOptions;
  readonly #logger: Logger | undefined;
  // Producers fail fast when Redis is down (an enqueue becomes an error the caller reports);
  // workers block and must retry forever, as BullMQ requires (maxRetriesPerRequest null).
  readonly #producer: Redis;
  readonly #workerConnection: Redis;
  readonly #queues = new Map<string, Queue>();
  readonly #workers = new Set<Worker>();
  readonly #keepCompleted: KeepJobs;
  readonly #keepFailed: KeepJobs;
  #closed = false;

  constructor(options: BullMqQueueOptions) {
    this.#options = options;
    this.#logger = options.logger;
    this.#producer = createRedisClient(options.redisUrl, { name: `${options.prefix}:queue`, logger: options.logger });
    this.#workerConnection = createRedisClient(options.redisUrl, {
      name: `${options.prefix}:worker`,
      blocking: true,
      logger: options.logger,
    });
    this.#keepCompleted = options.keepCompleted ?? { age: DAY_S, count: 1000 };
    this.#keepFailed = options.keepFailed ?? { age: 7 * DAY_S, count: 5000 };
  }

  async enqueue<T>(queue: string, name: string, payload: T, options?: JobOptions): Promise<string> {
    const o = resolveJobOptions(options);
    const job = await this.#queue(queue).add(name, payload, {
      ...this.#jobDefaults(o.attempts, o.backoffMs),
      ...(o.delayMs > 0 ? { delay: o.delayMs } : {}),
      ...(o.jobId ? { jobId: o.jobId } : {}),
    });
    if (!job.id) throw new Error('BullMQ returned a job without an id');
    return job.id;
  }

  async repeat<T>(queue: string, key: string, name: string, payload: T, options: RepeatOptions): Promise<void> {
    const every = resolveRepeat(key, options);
    await this.#queue(queue).upsertJobScheduler(
      key,
      { every },
      { name, data: payload, opts: this.#jobDefaults(DEFAULT_ATTEMPTS, DEFAULT_BACKOFF_MS) },
    );
  }

  async removeRepeat(queue: string, key: string): Promise<void> {
    await this.#queue(queue).removeJobScheduler(key);
  }

  consume<T>(queue: string, handler: JobHandler<T>, options?: ConsumeOptions): Consumer {
    this.#assertOpen();
    const name = queueName(queue);
    const o = this.#options;
    // Three declared parameters: BullMQ passes the AbortSignal only to processors whose
    // length is at least 3.
    const processor = async (job: BullJob, _token: string | undefined, signal: AbortSignal | undefined) => {
      const started = toJob<T>(name, job);
      // A start cut short by a crash counts as an attempt, as on the database queue: BullMQ's
      // own stall limit is set out of reach below, and this one is the job's attempts.
      if (started.attempt > started.maxAttempts) {
        throw new UnrecoverableError(
          `stalled: the job's ${started.maxAttempts} attempts were used by workers that stopped mid-job`,
        );
      }
      await handler(started, signal ?? new AbortController().signal);
    };
    const lease = leaseTimings(o.leaseMs);
    const worker = new Worker(name, processor, {
      connection: this.#workerConnection,
      prefix: o.prefix,
      concurrency: resolveConcurrency(options),
      lockDuration: lease.holdMs,
      lockRenewTime: lease.renewMs,
      stalledInterval: lease.checkMs,
      // BullMQ fails a job that stalled more than this many times, whatever its attempts
      // left (1 by default: a second worker crash would lose accepted events to "failed").
      maxStalledCount: MAX_ATTEMPTS,
      removeOnComplete: this.#keepCompleted,
      removeOnFail: this.#keepFailed,
    });
    const log = this.#logger?.child({ queue: name });
    worker.on('error', (err) => log?.error({ err }, 'queue: worker error'));
    worker.on('failed', (job, err) => {
      // Each failed attempt is the handler's to log; the queue reports the final one.
      const final = !job || err instanceof UnrecoverableError || job.attemptsMade >= (job.opts.attempts ?? 1);
      const at = { jobId: job?.id, attempt: job?.attemptsStarted, error: errorText(err) };
      if (final) log?.warn(at, 'queue: job failed after its last attempt');
      else log?.debug(at, 'queue: job attempt failed, will retry');
    });
    worker.on('stalled', (jobId) => log?.warn({ jobId }, 'queue: recovered a stalled job'));
    this.#workers.add(worker);
    return {
      close: async () => {
        await closeWorker(worker, undefined, log);
        this.#workers.delete(worker);
      },
    };
  }

  async counts(queue: string): Promise<JobCounts> {
    const c = await this.#queue(queue).getJobCounts(
      'waiting',
      'prioritized',
      'active',
      'delayed',
      'completed',
      'failed',
    );
    return {
      waiting: (c.waiting ?? 0) + (c.prioritized ?? 0),
      active: c.active ?? 0,
      delayed: c.delayed ?? 0,
      completed: c.completed ?? 0,
      failed: c.failed ?? 0,
    };
  }

  async ping(): Promise<void> {
    await this.#producer.ping();
  }

  async prune(olderThanMs: number): Promise<number> {
    const batch = 1000;
    let total = 0;
    for (const name of await this.#allQueues()) {
      const queue = this.#queue(name);
      for (const type of ['completed', 'failed'] as const) {
        for (;;) {
          const removed = await queue.clean(olderThanMs, batch, type);
          total += removed.length;
          if (removed.length < batch) break;
        }
      }
    }
    return total;
  }

  /** Closes workers (waiting for running jobs; with a deadline, aborting them), queues, connections. */
  async close(timeoutMs?: number): Promise<void> {
    this.#closed = true;
    await Promise.all([...this.#workers].map((w) => closeWorker(w, timeoutMs, this.#logger)));
    this.#workers.clear();
    await Promise.all([...this.#queues.values()].map((q) => q.close()));
    this.#queues.clear();
    await Promise.all([closeRedisClient(this.#workerConnection), closeRedisClient(this.#producer)]);
  }

  /** Every queue under the prefix, not just those this process used: each has a meta hash. */
  async #allQueues(): Promise<string[]> {
    const prefix = this.#options.prefix;
    const names = new Set(this.#queues.keys());
    const match = `${prefix.replace(/[*?[\]\\]/g, '\\$&')}:*:meta`;
    for await (const keys of this.#producer.scanStream({ match, count: 500 })) {
      for (const key of keys as string[]) {
        const name = key.slice(prefix.length + 1, -':meta'.length);
        if (name && !name.includes(':')) names.add(name);
      }
    }
    return [...names];
  }

  #queue(name: string): Queue {
    this.#assertOpen();
    let queue = this.#queues.get(name);
    if (!queue) {
      queue = new Queue(queueName(name), { connection: this.#producer, prefix: this.#options.prefix });
      queue.on('error', (err) => this.#logger?.error({ err, queue: name }, 'queue: producer error'));
      this.#queues.set(name, queue);
    }
    return queue;
  }

  #jobDefaults(attempts: number, backoffMs: number): JobsOptions {
    return {
      attempts,
      backoff: { type: 'exponential', delay: backoffMs },
      removeOnComplete: this.#keepCompleted,
      removeOnFail: this.#keepFailed,
    };
  }

  #assertOpen(): void {
    if (this.#closed) throw new QueueClosedError();
  }
}

function toJob<T>(queue: string, job: BullJob): Job<T> {
  return {
    id: job.id ?? '',
    queue,
    name: job.name,
    payload: job.data as T,
    // attemptsStarted counts a start cut short by a stall too, like the database queue.
    attempt: job.attemptsStarted || job.attemptsMade + 1,
    maxAttempts: job.opts.attempts ?? 1,
  };
}

async function closeWorker(worker: Worker, timeoutMs: number | undefined, log: Logger | undefined): Promise<void> {
  const closing = worker.close();
  if (timeoutMs === undefined) return closing;
  if (await settlesWithin(closing, timeoutMs)) return;
  log?.warn({ queue: worker.name }, 'queue: aborting jobs at shutdown deadline');
  worker.cancelAllJobs('queue consumer closing');
  if (await settlesWithin(closing, ABORT_GRACE_MS)) return;
  // A job that ignores the signal is left running without lock renewal; it stalls and
  // another worker recovers it.
  closing.catch((err: unknown) => log?.error({ err }, 'queue: worker close failed'));
}
