// The search family's jobs (worker role) and beat tasks: runs and replays as they are asked
// for; the schedules' slots, result expiry and the event store's retention on the beat's
// clock, each slot's job enqueued once (its jobId) however many beats there are.
import type { BeatTask, JobRegistration, NoPayload } from '../../platform/queue/jobs.js';
import { defineJobs, type JobQueue } from '../queues.js';
import type { ReplayService } from './replay.js';
import { REPLAY_JOB } from './replay.js';
import type { Retention } from './index.js';
import type { Runner } from './runner.js';
import { RUN_JOB, SEARCH_QUEUE } from './runs.js';
import type { SchedulesService } from './schedules.js';

export const EXPIRE_JOB = 'search.expire';
export const RETENTION_JOB = 'search.retention';

export interface SearchJobs {
  [SEARCH_QUEUE]: {
    [RUN_JOB]: { search_id: string };
    [REPLAY_JOB]: { replay_id: string };
    [EXPIRE_JOB]: NoPayload;
    [RETENTION_JOB]: NoPayload;
  };
}

const MINUTE = 60_000;
const HOUR = 3_600_000;

export function searchJobs(deps: {
  runner: Runner;
  replay: ReplayService;
  retention: Retention;
  expire(): Promise<unknown>;
  now(): Date;
  concurrency: number;
}): JobRegistration {
  return defineJobs({
    queue: SEARCH_QUEUE,
    role: 'worker',
    concurrency: deps.concurrency,
    handlers: {
      [RUN_JOB]: async (job, signal) => deps.runner.execute(job.payload.search_id, signal),
      [REPLAY_JOB]: async (job, signal) => deps.replay.execute(job.payload.replay_id, signal),
      [EXPIRE_JOB]: async () => {
        await deps.expire();
      },
      [RETENTION_JOB]: async () => {
        await deps.retention.run(deps.now());
      },
    },
  });
}

export function searchBeatTasks(queue: JobQueue, schedules: SchedulesService): BeatTask[] {
  const slot = (now: Date, every: number) => Math.floor(now.getTime() / every);
  return [
    { name: 'search.schedules', everyMs: 10_000, run: async () => void (await schedules.tick()) },
    {
      name: 'search.expire',
      everyMs: MINUTE,
      run: async (now) =>
        void (await queue.enqueue(SEARCH_QUEUE, EXPIRE_JOB, {}, { jobId: `${EXPIRE_JOB}-${slot(now, MINUTE)}` })),
    },
    {
      name: 'search.retention',
      everyMs: HOUR,
      run: async (now) =>
        void (await queue.enqueue(SEARCH_QUEUE, RETENTION_JOB, {}, { jobId: `${RETENTION_JOB}-${slot(now, HOUR)}` })),
    },
  ];
}
