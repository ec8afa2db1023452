// Queue handlers of collection (worker role) and the beat's tasks: collection.schedule every
// WEIR_COLLECT_SCHEDULE_MS, housekeeping every ten minutes (one job per slot).
import { SpanStatusCode, type Tracer } from '@opentelemetry/api';
import { inSpan } from '../../platform/telemetry/index.js';
import type { BeatTask, JobRegistration, NoPayload } from '../../platform/queue/jobs.js';
import { defineJobs, type JobQueue } from '../queues.js';
import type { CyclePayload, CycleRunner } from './cycle.js';
import type { Scheduler } from './scheduler.js';

export const COLLECT_QUEUE = 'collect';
export const CYCLE_JOB = 'collect.cycle';
export const HOUSEKEEPING_JOB = 'collect.housekeeping';
export const SCHEDULE_TASK = 'collection.schedule';
const HOUSEKEEPING_EVERY_MS = 600_000;

export interface CollectJobs {
  [COLLECT_QUEUE]: { [CYCLE_JOB]: CyclePayload; [HOUSEKEEPING_JOB]: NoPayload };
}

/**
 * A cycle records its own failures (state, run row) and completes; the queue's attempts only
 * cover a worker that died or a database that failed mid-cycle.
 */
export const CYCLE_JOB_OPTIONS = { attempts: 3, backoffMs: 5_000 } as const;

export function collectionJobs(deps: {
  cycles: CycleRunner;
  scheduler: Scheduler;
  tracer: Tracer;
  concurrency: number;
}): JobRegistration {
  const { cycles, tracer } = deps;
  return defineJobs({
    queue: COLLECT_QUEUE,
    role: 'worker',
    concurrency: deps.concurrency,
    handlers: {
      [CYCLE_JOB]: async (job, signal) => {
        const payload = job.payload;
        await inSpan(
          tracer,
          CYCLE_JOB,
          {
            attributes: {
              'weir.run_id': payload.run_id,
              'weir.integration_id': payload.integration_id,
              'weir.stream': payload.stream,
            },
          },
          async (span) => {
            const outcome = await cycles.run(payload, signal);
            span.setAttributes({
              'weir.status': outcome.status,
              'weir.pages': outcome.pages,
              'weir.events': outcome.events,
              'weir.capped': outcome.capped,
            });
            if (outcome.status === 'failed')
              span.setStatus({ code: SpanStatusCode.ERROR, message: outcome.error ?? 'failed' });
          },
        );
      },
      [HOUSEKEEPING_JOB]: async () => {
        await deps.scheduler.housekeeping();
      },
    },
  });
}

export function collectionTasks(deps: {
  scheduler: Scheduler;
  queue: Pick<JobQueue, 'enqueue'>;
  scheduleMs: number;
}): BeatTask[] {
  return [
    { name: SCHEDULE_TASK, everyMs: deps.scheduleMs, run: async (now) => void (await deps.scheduler.schedule(now)) },
    {
      name: HOUSEKEEPING_JOB,
      everyMs: HOUSEKEEPING_EVERY_MS,
      run: async (now) => {
        const slot = Math.floor(now.getTime() / HOUSEKEEPING_EVERY_MS);
        await deps.queue.enqueue(
          COLLECT_QUEUE,
          HOUSEKEEPING_JOB,
          {},
          { jobId: `${HOUSEKEEPING_JOB}-${slot}`, attempts: 3 },
        );
      },
    },
  ];
}
