// Queue handlers of the backfill family, run by the worker role: backfill.run (a job,
// runner.ts) and backfill.ping (the diagnostics' round trip through the broker).
import { hostname } from 'node:os';
import { newId } from '../../core/ids.js';
import type { CachePort } from '../../platform/cache/port.js';
import type { JobRegistration } from '../../platform/queue/jobs.js';
import { defineJobs, type JobQueue } from '../queues.js';
import type { BackfillRunner } from './runner.js';

export const BACKFILL_QUEUE = 'backfill';
export const RUN_JOB = 'backfill.run';
export const PING_JOB = 'backfill.ping';
/** Infrastructure failures and interruptions are retried; each attempt resumes from the progress. */
const RUN_OPTIONS = { attempts: 10, backoffMs: 2_000 } as const;
const PING_ANSWER_TTL_MS = 60_000;

export interface RunPayload {
  job_id: string;
}

export interface PingPayload {
  token: string;
  sent_at: number;
}

export interface BackfillJobs {
  [BACKFILL_QUEUE]: { [RUN_JOB]: RunPayload; [PING_JOB]: PingPayload };
}

export interface PingAnswer {
  worker: string;
  completed_at: number;
}

export const pingKey = (token: string) => `backfill:ping:${token}`;

/**
 * The first run of a job has a stable queue id (a repeated enqueue is ignored); a run queued
 * again (rate limit, lock held) gets its own, since the current one still exists.
 */
export function enqueueRun(
  queue: Pick<JobQueue, 'enqueue'>,
  jobId: string,
  again?: { delayMs: number },
): Promise<string> {
  const payload: RunPayload = { job_id: jobId };
  const id = again ? `backfill-${jobId}-${newId()}` : `backfill-${jobId}`;
  const delayMs = again?.delayMs ?? 0;
  return queue.enqueue(BACKFILL_QUEUE, RUN_JOB, payload, {
    ...RUN_OPTIONS,
    jobId: id,
    delayMs: Math.min(Math.max(0, Math.round(delayMs)), 2_147_483_647),
  });
}

export function backfillJobs(deps: { runner: BackfillRunner; cache: CachePort; concurrency: number }): JobRegistration {
  const self = `${hostname()}:${process.pid}`;
  return defineJobs({
    queue: BACKFILL_QUEUE,
    role: 'worker',
    concurrency: deps.concurrency,
    handlers: {
      [RUN_JOB]: async (job, signal) => {
        const { job_id } = job.payload;
        await deps.runner.run(job_id, signal, { attempt: job.attempt, maxAttempts: job.maxAttempts });
      },
      [PING_JOB]: async (job) => {
        const { token } = job.payload;
        const answer: PingAnswer = { worker: self, completed_at: Date.now() };
        await deps.cache.set(pingKey(token), answer, PING_ANSWER_TTL_MS);
      },
    },
  });
}
