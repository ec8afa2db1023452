// The syslog receiver of a process (the syslog role, or weir all): every few seconds it reads
// the active syslog integrations, opens the listeners they declare, restarts those whose
// configuration changed, closes those no longer declared, and writes each listener's state
// and counters where the API reads them. Stopping closes every listener after what it read
// is accepted (listeners.ts), then the intake.
import { hostname } from 'node:os';
import type { Meter } from '@opentelemetry/api';
import type { Clock } from '../../core/clock.js';
import type { Logger } from '../../platform/logger.js';
import { startRefreshLoop } from '../../platform/refresh-loop.js';
import type { IntegrationRow } from '../integrations/store.js';
import { listenerSpecs, type ListenerProblem, type ListenerSpec, type SyslogIntegration } from './config.js';
import type { Intake } from './intake.js';
import { startListener, type RunningListener } from './listeners.js';
import type { ListenerStateRow, SyslogStore } from './store.js';

export interface ReceiverDeps {
  store: SyslogStore;
  /** The integration's config with its secrets opened (never logged). */
  openConfig: (row: IntegrationRow) => Promise<Record<string, unknown>>;
  intake: Intake;
  host: string;
  allowed: (port: number) => boolean;
  refreshMs: number;
  stopGraceMs: number;
  /** SO_RCVBUF asked for UDP listeners (WEIR_SYSLOG_UDP_RECEIVE_BUFFER). */
  udpReceiveBufferBytes?: number;
  clock: Clock;
  logger: Logger;
  meter: Meter;
}

interface Running {
  listener: RunningListener;
  startedAt: Date;
  /** Counters already added to the metrics. */
  reported: { received: number; accepted: number; dropped: number; dropped_kernel: number; refused: number };
}

export function createReceiver(deps: ReceiverDeps) {
  const { store, logger, clock } = deps;
  const processId = `${hostname()}:${process.pid}`;
  const running = new Map<string, Running>();
  let problems: (ListenerProblem & { since: Date })[] = [];
  const stopped: ListenerStateRow[] = [];
  const messages = deps.meter.createCounter('weir_syslog_messages_total', {
    description:
      'Syslog messages by outcome: received, accepted, dropped (UDP, pipeline saturated), dropped_kernel (UDP, the socket receive buffer was full: never received), refused (too long, broken frame)',
    unit: '{message}',
  });

  function stateOf(r: Running, now: Date, state: ListenerStateRow['state'] = 'listening'): ListenerStateRow {
    const { spec, counters, receiveBufferBytes } = r.listener;
    const { last_message_ms: lastMessage, ...counts } = counters;
    return {
      integration_id: spec.integrationId,
      protocol: spec.protocol,
      port: spec.port,
      process: processId,
      state,
      error: null,
      ...counts,
      receive_buffer_bytes: receiveBufferBytes,
      last_message_at: lastMessage > 0 ? new Date(lastMessage) : null,
      started_at: r.startedAt,
      updated_at: now,
    };
  }

  function report(r: Running): void {
    r.listener.sample();
    const c = r.listener.counters;
    const labels = { protocol: r.listener.spec.protocol, integration_id: String(r.listener.spec.integrationId) };
    for (const outcome of ['received', 'accepted', 'dropped', 'dropped_kernel', 'refused'] as const) {
      const delta = c[outcome] - r.reported[outcome];
      if (delta > 0) messages.add(delta, { ...labels, outcome });
      r.reported[outcome] = c[outcome];
    }
  }

  async function stopListener(key: string): Promise<void> {
    const r = running.get(key);
    if (!r) return;
    running.delete(key);
    await r.listener.close();
    report(r);
    stopped.push(stateOf(r, clock.now(), 'stopped'));
  }

  async function desired(): Promise<{ specs: ListenerSpec[]; problems: ListenerProblem[] }> {
    const rows = await store.integrations();
    const integrations: SyslogIntegration[] = [];
    for (const row of rows)
      integrations.push({ id: row.id, organization_id: row.organization_id, config: await deps.openConfig(row) });
    return listenerSpecs(integrations, deps.allowed);
  }

  /** One round: bring the listeners in line with the integrations, then write their states. */
  async function reconcile(): Promise<void> {
    const want = await desired();
    const now = clock.now();
    const wanted = new Map(want.specs.map((s) => [s.key, s]));
    for (const [key, r] of running) {
      const spec = wanted.get(key);
      if (!spec || spec.fingerprint !== r.listener.spec.fingerprint) await stopListener(key);
    }
    const failed: ListenerProblem[] = [];
    for (const spec of want.specs) {
      if (running.has(spec.key)) continue;
      try {
        const listener = await startListener(
          spec,
          deps.host,
          deps.intake,
          (err) => logger.warn({ err, protocol: spec.protocol, port: spec.port }, 'syslog listener error'),
          { udpReceiveBufferBytes: deps.udpReceiveBufferBytes },
        );
        running.set(spec.key, {
          listener,
          startedAt: now,
          reported: { received: 0, accepted: 0, dropped: 0, dropped_kernel: 0, refused: 0 },
        });
        logger.info(
          { integration_id: spec.integrationId, protocol: spec.protocol, port: spec.port, host: deps.host },
          'syslog listener started',
        );
      } catch (err) {
        const code = (err as { code?: string }).code;
        const error =
          code === 'EADDRINUSE'
            ? `port ${spec.port} is in use by another program`
            : code === 'EACCES'
              ? `no permission to listen on port ${spec.port}`
              : `cannot listen: ${(err as Error).message}`;
        failed.push({ integrationId: spec.integrationId, protocol: spec.protocol, port: spec.port, error });
      }
    }
    const previous = new Map(problems.map((p) => [`${p.integrationId}:${p.protocol}:${p.port}:${p.error}`, p.since]));
    problems = [...want.problems, ...failed].map((p) => ({
      ...p,
      since: previous.get(`${p.integrationId}:${p.protocol}:${p.port}:${p.error}`) ?? now,
    }));
    for (const p of failed)
      logger.warn(
        { integration_id: p.integrationId, protocol: p.protocol, port: p.port, error: p.error },
        'syslog listener could not start',
      );
    await save(now);
  }

  async function save(now: Date): Promise<void> {
    const rows: ListenerStateRow[] = stopped.splice(0);
    for (const r of running.values()) {
      report(r);
      rows.push(stateOf(r, now));
    }
    for (const p of problems) {
      rows.push({
        integration_id: p.integrationId,
        protocol: p.protocol,
        port: p.port,
        process: processId,
        state: 'error',
        error: p.error,
        received: 0,
        accepted: 0,
        dropped: 0,
        dropped_kernel: 0,
        refused: 0,
        connections: 0,
        receive_buffer_bytes: null,
        last_message_at: null,
        started_at: p.since,
        updated_at: now,
      });
    }
    await store.saveStates(rows);
  }

  return {
    reconcile,
    /** The running listeners (tests and benchmarks read their counters). */
    listeners: () => [...running.values()].map((r) => r.listener),
    start() {
      const loop = startRefreshLoop(reconcile, deps.refreshMs, (err) =>
        logger.warn({ err }, 'syslog receiver: could not apply the integrations'),
      );
      return {
        async stop() {
          await loop.stop();
          await Promise.allSettled([...running.keys()].map(stopListener));
          await deps.intake.close(deps.stopGraceMs);
          await save(clock.now()).catch((err: unknown) =>
            logger.warn({ err }, 'syslog receiver: could not write the final listener states'),
          );
        },
      };
    },
  };
}

export type Receiver = ReturnType<typeof createReceiver>;
