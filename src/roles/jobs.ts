// Runs what modules hand the runtime (platform/queue/jobs.ts): one consumer per queue registration.
import { workContext } from '../platform/context.js';
import type { Logger } from '../platform/logger.js';
import type { JobRegistration } from '../platform/queue/jobs.js';
import type { Consumer, QueuePort } from '../platform/queue/port.js';

/** Starts one consumer per registration; each job runs in its own work context. */
export function startConsumers(queue: QueuePort, registrations: JobRegistration[], logger: Logger): Consumer[] {
  return registrations.map((reg) =>
    queue.consume(
      reg.queue,
      async (job, signal) => {
        const handler = reg.handlers[job.name];
        if (!handler) throw new Error(`No handler for job ${job.name} on queue ${reg.queue}`);
        await workContext.run({ correlationId: `job:${job.id}` }, async () => {
          try {
            await handler(job, signal);
          } catch (err) {
            logger.warn({ err, queue: reg.queue, job: job.name, attempt: job.attempt }, 'job failed');
            throw err;
          }
        });
      },
      { concurrency: reg.concurrency },
    ),
  );
}
