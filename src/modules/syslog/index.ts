// The syslog receiver (docs/decisions/0040-syslog-receiver.md): the `syslog` platform's
// integrations declare listeners; the syslog role (and weir all) runs them. Its messages enter
// through the same durable accept as push (ingest.accept) and are text events of their stream.
import type { Kysely } from 'kysely';
import type { Meter } from '@opentelemetry/api';
import type { Clock } from '../../core/clock.js';
import { NORMALIZE_QUEUE, type AcceptBatch, type Admission } from '../../pipeline/envelope.js';
import type { DB } from '../../platform/db/index.js';
import type { Logger } from '../../platform/logger.js';
import type { QueuePort } from '../../platform/queue/port.js';
import type { RoleLoop } from '../../platform/queue/jobs.js';
import type { IntegrationRow } from '../integrations/store.js';
import { portRanges } from './config.js';
import { createIntake } from './intake.js';
import { testListeners } from './listener-test.js';
import { createPortCheck } from './port-check.js';
import { createReceiver } from './receiver.js';
import { createSyslogStore, type ListenerStateRow } from './store.js';

export { SYSLOG_PLATFORM } from './config.js';

/** The syslog receiver (syslog role, and weir all): docs/decisions/0040-syslog-receiver.md. */
export interface SyslogConfig {
  /** Address the listeners bind to. */
  host: string;
  /** WEIR_SYSLOG_PORTS as written: the ports integrations may declare. */
  ports: string;
  /** How often the receiver applies changed syslog integrations. */
  refreshMs: number;
  /** How long a batch that is not full waits for more messages before it is accepted. */
  lingerMs: number;
  /** Messages held (received, not yet durably accepted) beyond which UDP datagrams are dropped and counted. */
  maxPendingEvents: number;
  /** SO_RCVBUF asked for each UDP listener; the kernel caps it at net.core.rmem_max (and doubles it). */
  udpReceiveBufferBytes: number;
}

/** Listener states older than this are of a process that is gone. */
const STATE_FRESH_MS = 5 * 60_000;
const DEPTH_CACHE_MS = 1000;

export interface SyslogDeps {
  db: Kysely<DB>;
  clock: Clock;
  logger: Logger;
  meter: Meter;
  queue: Pick<QueuePort, 'counts'>;
  accept: AcceptBatch;
  admission?: Admission;
  openConfig: (row: IntegrationRow) => Promise<Record<string, unknown>>;
  config: SyslogConfig;
  batch: { maxEvents: number; maxBytes: number; maxPendingBatches: number };
  stopGraceMs: number;
}

export function wireSyslog(deps: SyslogDeps) {
  const store = createSyslogStore(deps.db);
  let depth = { value: 0, at: Number.NEGATIVE_INFINITY };
  const queueDepth = async () => {
    const now = Date.now();
    if (now - depth.at >= DEPTH_CACHE_MS) {
      const c = await deps.queue.counts(NORMALIZE_QUEUE);
      depth = { value: c.waiting + c.delayed, at: now };
    }
    return depth.value;
  };
  const makeReceiver = () =>
    createReceiver({
      store,
      openConfig: deps.openConfig,
      intake: createIntake({
        accept: deps.accept,
        clock: deps.clock,
        queueDepth,
        admission: deps.admission,
        limits: {
          batchMaxEvents: deps.batch.maxEvents,
          batchMaxBytes: deps.batch.maxBytes,
          lingerMs: deps.config.lingerMs,
          maxPendingEvents: deps.config.maxPendingEvents,
          maxPendingBatches: deps.batch.maxPendingBatches,
        },
        onError: (err, message) => deps.logger.warn({ err }, message),
      }),
      host: deps.config.host,
      allowed: portRanges(deps.config.ports),
      refreshMs: deps.config.refreshMs,
      udpReceiveBufferBytes: deps.config.udpReceiveBufferBytes,
      stopGraceMs: deps.stopGraceMs,
      clock: deps.clock,
      logger: deps.logger,
      meter: deps.meter,
    });
  const loop: RoleLoop = {
    name: 'syslog-receiver',
    role: 'syslog',
    start: () => makeReceiver().start(),
  };
  /** The listeners of an integration as the processes running them last reported. */
  async function listenerStates(integrationId: number): Promise<Omit<ListenerStateRow, 'integration_id'>[]> {
    const rows = await store.states(integrationId, new Date(deps.clock.now().getTime() - STATE_FRESH_MS));
    // One process per host can hold a port: a newer row of the same host is a restarted
    // process, and the older one (a killed process's last word) is left out.
    const newest = new Map<string, ListenerStateRow>();
    for (const r of rows) {
      const key = `${r.protocol}:${r.port}:${r.process.slice(0, r.process.lastIndexOf(':'))}`;
      const seen = newest.get(key);
      if (!seen || seen.updated_at < r.updated_at) newest.set(key, r);
    }
    return rows
      .filter((r) => newest.get(`${r.protocol}:${r.port}:${r.process.slice(0, r.process.lastIndexOf(':'))}`) === r)
      .map(({ integration_id: _id, ...rest }) => rest);
  }

  return {
    loops: [loop],
    /** Create and update of a syslog integration check its ports with this (port-check.ts). */
    portCheck: createPortCheck({ ports: deps.config.ports, integrations: () => store.integrations() }),
    /** A receiver not started by a role (tests drive reconcile() themselves). */
    receiver: makeReceiver,
    listenerStates,
    /** The connection test of a syslog integration: its listeners (listener-test.ts). */
    async testListeners(integration: { id: number; is_active: boolean; config: Record<string, unknown> | null }) {
      return testListeners({
        config: integration.config ?? {},
        active: integration.is_active,
        host: deps.config.host,
        states: await listenerStates(integration.id),
      });
    },
  };
}

export type Syslog = ReturnType<typeof wireSyslog>;
