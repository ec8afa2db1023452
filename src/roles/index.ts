// Starts the components of a role in this process and stops them in the right order:
// beat first (its lease goes to a standby at once), then the API (in-flight requests
// finish), then consumers (in-flight jobs finish), then the heartbeat.
import { buildApp } from '../app.js';
import type { Role } from '../config.js';
import type { Container } from '../container.js';
import type { Consumer } from '../platform/queue/port.js';
import { startBeat, type Beat } from './beat.js';
import { startConsumers } from './jobs.js';

export interface RunningRole {
  /** The bound address of the API, when this role serves it. */
  address?: string;
  stop(): Promise<void>;
}

const COMPONENTS: Record<
  Exclude<Role, 'migrate'>,
  { api: boolean; worker: boolean; dispatcher: boolean; beat: boolean; syslog: boolean }
> = {
  all: { api: true, worker: true, dispatcher: true, beat: true, syslog: true },
  api: { api: true, worker: false, dispatcher: false, beat: false, syslog: false },
  worker: { api: false, worker: true, dispatcher: false, beat: false, syslog: false },
  dispatcher: { api: false, worker: false, dispatcher: true, beat: false, syslog: false },
  beat: { api: false, worker: false, dispatcher: false, beat: true, syslog: false },
  syslog: { api: false, worker: false, dispatcher: false, beat: false, syslog: true },
};

export async function startRole(c: Container, role: Exclude<Role, 'migrate'>): Promise<RunningRole> {
  const parts = COMPONENTS[role];
  const heartbeat = await c.processes.start(role, c.config.heartbeatIntervalMs);

  const consumers: Consumer[] = startConsumers(
    c.queue,
    c.jobs.filter((j) => (j.role === 'worker' && parts.worker) || (j.role === 'dispatcher' && parts.dispatcher)),
    c.logger,
  );

  const loops = c.loops
    .filter(
      (l) =>
        (l.role === 'worker' && parts.worker) ||
        (l.role === 'dispatcher' && parts.dispatcher) ||
        (l.role === 'syslog' && parts.syslog),
    )
    .map((l) => l.start());

  let beat: Beat | undefined;
  if (parts.beat) {
    beat = startBeat({ lock: c.lock, logger: c.logger, tasks: c.beatTasks, ttlMs: c.config.beatLockTtlMs });
  }

  let address: string | undefined;
  const app = parts.api ? await buildApp(c) : undefined;
  if (app) {
    address = await app.listen({ port: c.config.port, host: c.config.host });
  }
  c.logger.info({ role, address, queue: c.queue.backend, database: c.database.kind }, 'weir started');

  return {
    address,
    async stop() {
      await beat?.stop();
      await app?.close();
      await Promise.all([...consumers.map((consumer) => consumer.close()), ...loops.map((loop) => loop.stop())]);
      await heartbeat.stop();
    },
  };
}
