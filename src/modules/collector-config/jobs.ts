// Capture housekeeping: the beat enqueues one job a minute; a worker marks the sessions past
// expires_at as expired and removes sessions that ended more than 7 days ago, events first.
import type { BeatTask, JobRegistration, NoPayload } from '../../platform/queue/jobs.js';
import { defineJobs, type JobQueue } from '../queues.js';

export const CAPTURE_QUEUE = 'capture';
export const CAPTURE_HOUSEKEEPING_JOB = 'capture.housekeeping';
const EVERY_MS = 60_000;

export interface CaptureJobs {
  [CAPTURE_QUEUE]: { [CAPTURE_HOUSEKEEPING_JOB]: NoPayload };
}

export function captureJobs(work: { housekeeping(): Promise<unknown> }): JobRegistration {
  return defineJobs({
    queue: CAPTURE_QUEUE,
    role: 'worker',
    concurrency: 1,
    handlers: {
      [CAPTURE_HOUSEKEEPING_JOB]: async () => {
        await work.housekeeping();
      },
    },
  });
}

/** One job per minute slot: a beat handover within the slot enqueues nothing new. */
export function captureBeatTasks(queue: JobQueue): BeatTask[] {
  return [
    {
      name: CAPTURE_HOUSEKEEPING_JOB,
      everyMs: EVERY_MS,
      run: async (now: Date) => {
        const slot = Math.floor(now.getTime() / EVERY_MS);
        await queue.enqueue(
          CAPTURE_QUEUE,
          CAPTURE_HOUSEKEEPING_JOB,
          {},
          { jobId: `${CAPTURE_HOUSEKEEPING_JOB}-${slot}`, attempts: 3 },
        );
      },
    },
  ];
}
