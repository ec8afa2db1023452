// What modules hand the runtime: queue handlers (run by the worker or dispatcher role)
// and periodic tasks (run by the elected beat).
import { workContext } from '../platform/context.js';
import type { Logger } from '../platform/logger.js';
import type { Consumer, JobHandler, QueuePort } from '../platform/queue/port.js';

export interface JobRegistration {
  queue: string;
  role: 'worker' | 'dispatcher';
  concurrency: number;
  /** Handlers by job name. */
  handlers: Record<string, JobHandler>;
}

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

/** A long-running component of a role that is not a queue consumer (the dispatcher's routing and delivery lanes). */
export interface RoleLoop {
  name: string;
  role: 'worker' | 'dispatcher' | 'syslog';
  /** Starts the loop; stop() resolves once in-flight work has finished or been released. */
  start(): { stop(): Promise<void> };
}
