// The queue port. Two adapters implement it with one contract (queue.contract.test.ts):
// the database queue (embedded default; an accepted job survives a restart) and BullMQ.

export interface JobOptions {
  /** Total attempts including the first; default 3. */
  attempts?: number;
  /** Base delay of exponential backoff between attempts: base * 2^(attempt-1); default 1000. */
  backoffMs?: number;
  /** Run no earlier than this many ms from now. */
  delayMs?: number;
  /** Idempotency: a second enqueue with the same id while the first exists is ignored. */
  jobId?: string;
}

export interface Job<T = unknown> {
  id: string;
  queue: string;
  name: string;
  payload: T;
  /** 1 on the first attempt. */
  attempt: number;
  maxAttempts: number;
}

export type JobHandler<T = unknown> = (job: Job<T>, signal: AbortSignal) => Promise<void>;

export interface ConsumeOptions {
  /** Jobs handled at once by this consumer; default 1. */
  concurrency?: number;
}

export interface Consumer {
  /** Stops taking new jobs and resolves once in-flight jobs have finished. */
  close(): Promise<void>;
}

export interface RepeatOptions {
  /** Interval between runs. */
  everyMs: number;
}

export interface JobCounts {
  waiting: number;
  active: number;
  delayed: number;
  completed: number;
  failed: number;
}

export interface QueuePort {
  readonly backend: 'database' | 'bullmq';
  /**
   * The database queue's enqueue joins the open unit of work (platform/db/ambient.ts), so a
   * job and the rows written with it commit together; BullMQ's takes effect at once.
   */
  enqueue<T>(queue: string, name: string, payload: T, options?: JobOptions): Promise<string>;
  /** Upserts a repeating job: `key` identifies the schedule; re-registering replaces it. */
  repeat<T>(queue: string, key: string, name: string, payload: T, options: RepeatOptions): Promise<void>;
  removeRepeat(queue: string, key: string): Promise<void>;
  consume<T>(queue: string, handler: JobHandler<T>, options?: ConsumeOptions): Consumer;
  counts(queue: string): Promise<JobCounts>;
  /**
   * Deletes completed and failed jobs that finished more than `olderThanMs` ago, in every
   * queue; returns how many. (BullMQ also evicts finished jobs by its own count/age bounds.)
   */
  prune(olderThanMs: number): Promise<number>;
  ping(): Promise<void>;
  /** Closes consumers (waiting for in-flight jobs) and connections. */
  close(): Promise<void>;
}
