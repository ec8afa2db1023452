// Housekeeping that keeps the embedded database small: finished jobs and the heartbeats
// of processes that died without stopping, and expired console sessions. Beat enqueues; a worker runs.
import type { BeatTask, JobRegistration, NoPayload } from '../../platform/queue/jobs.js';
import { defineJobs, type JobQueue } from '../queues.js';
import type { ProcessService } from '../processes/service.js';

export const MAINTENANCE_QUEUE = 'maintenance';
const HOUR = 3_600_000;
const TASKS = ['processes.prune', 'sessions.prune', 'queue.prune'] as const;

export interface MaintenanceJobs {
  [MAINTENANCE_QUEUE]: Record<(typeof TASKS)[number], NoPayload>;
}

export interface MaintenanceDeps {
  queue: JobQueue;
  processes: ProcessService;
  /** Expired console sessions. */
  sessions: { prune(): Promise<number> };
  /** Finished jobs are kept this long for inspection. */
  jobRetentionMs: number;
}

export function maintenanceJobs(deps: MaintenanceDeps): JobRegistration {
  return defineJobs({
    queue: MAINTENANCE_QUEUE,
    role: 'worker',
    concurrency: 1,
    handlers: {
      'processes.prune': async () => {
        await deps.processes.prune(HOUR);
      },
      'sessions.prune': async () => {
        await deps.sessions.prune();
      },
      'queue.prune': async () => {
        await deps.queue.prune(deps.jobRetentionMs);
      },
    },
  });
}

/** One job per task per hour slot: a beat handover in the same hour enqueues nothing new. */
export function maintenanceTasks(queue: JobQueue): BeatTask[] {
  return TASKS.map((name) => ({
    name,
    everyMs: HOUR,
    run: async (now: Date) => {
      const slot = Math.floor(now.getTime() / HOUR);
      await queue.enqueue(MAINTENANCE_QUEUE, name, {}, { jobId: `${name}-${slot}`, attempts: 3 });
    },
  }));
}
