// The detections family's periodic work, on the beat's clock (each slot's job enqueued once by
// its jobId): the grouped e-mail of new high and critical detections every minute, and the
// threshold windows and suppressions no longer in use every hour.
import type { BeatTask, JobRegistration, NoPayload } from '../../platform/queue/jobs.js';
import { defineJobs, type JobQueue } from '../queues.js';

export const DETECTIONS_QUEUE = 'detections';
export const DIGEST_JOB = 'detections.digest';
export const EXPIRE_JOB = 'detections.expire';

export interface DetectionJobs {
  [DETECTIONS_QUEUE]: { [DIGEST_JOB]: NoPayload; [EXPIRE_JOB]: NoPayload };
}

const MINUTE = 60_000;
const HOUR = 3_600_000;

export function detectionJobs(deps: { digest(): Promise<unknown>; expire(): Promise<unknown> }): JobRegistration {
  return defineJobs({
    queue: DETECTIONS_QUEUE,
    role: 'worker',
    concurrency: 1,
    handlers: {
      [DIGEST_JOB]: async () => void (await deps.digest()),
      [EXPIRE_JOB]: async () => void (await deps.expire()),
    },
  });
}

export function detectionBeatTasks(queue: JobQueue): BeatTask[] {
  const slot = (now: Date, every: number) => Math.floor(now.getTime() / every);
  return [
    {
      name: 'detections.digest',
      everyMs: MINUTE,
      run: async (now) =>
        void (await queue.enqueue(DETECTIONS_QUEUE, DIGEST_JOB, {}, { jobId: `${DIGEST_JOB}-${slot(now, MINUTE)}` })),
    },
    {
      name: 'detections.expire',
      everyMs: HOUR,
      run: async (now) =>
        void (await queue.enqueue(DETECTIONS_QUEUE, EXPIRE_JOB, {}, { jobId: `${EXPIRE_JOB}-${slot(now, HOUR)}` })),
    },
  ];
}
