// What modules hand the runtime (roles/): queue handlers run by the worker or dispatcher,
// periodic tasks run by the elected beat, and other long-running loops. The types live
// here, below the modules, so that a module describes its work without importing roles/.
import type { JobHandler, JobOptions, QueuePort } from './port.js';

export interface JobRegistration {
  queue: string;
  role: 'worker' | 'dispatcher';
  concurrency: number;
  /** Handlers by job name. */
  handlers: Record<string, JobHandler>;
}

// A job map names the payload of every job, by job name, by queue name
// ({ [queue]: { [job]: Payload } }); modules/queues.ts joins the modules' parts into one.
// The queue stays generic: these types only narrow what callers may pass.

/** The payload of a job that needs none (housekeeping on the beat's clock). */
export type NoPayload = Record<string, never>;

/** The queue with enqueueing checked against a job map: an unknown queue or job, or a payload of another shape, is a type error. Every QueuePort is one. */
export interface TypedQueue<M> extends Omit<QueuePort, 'enqueue'> {
  enqueue<Q extends keyof M & string, N extends keyof M[Q] & string>(
    queue: Q,
    name: N,
    payload: M[Q][N],
    options?: JobOptions,
  ): Promise<string>;
}

/** A registration checked against a job map: one handler for each job of the queue, each given that job's payload. */
export interface TypedRegistration<M, Q extends keyof M & string> extends Omit<JobRegistration, 'queue' | 'handlers'> {
  queue: Q;
  handlers: { [N in keyof M[Q] & string]: JobHandler<M[Q][N]> };
}

/** Checks registrations against a job map and hands them on as the runtime's JobRegistration. */
export function jobRegistrations<M>() {
  return <Q extends keyof M & string>(registration: TypedRegistration<M, Q>): JobRegistration =>
    // The one place a payload's type is taken on trust: the queue carries what a TypedQueue enqueued.
    registration as unknown as JobRegistration;
}

export interface BeatTask {
  name: string;
  everyMs: number;
  /** Usually enqueues a job; the work itself runs in a worker. */
  run(now: Date): Promise<void>;
}

/** A long-running component of a role that is not a queue consumer (the dispatcher's routing and delivery lanes). */
export interface RoleLoop {
  name: string;
  role: 'worker' | 'dispatcher' | 'syslog';
  /** Starts the loop; stop() resolves once in-flight work has finished or been released. */
  start(): { stop(): Promise<void> };
}
