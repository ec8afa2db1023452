// The bus consumers of a process (the worker role, or weir all): every few seconds it reads the
// active rabbitmq and nats integrations, starts a consumer for each, restarts those whose
// configuration changed or that stopped on their own (connection lost), stops those no longer
// wanted (deactivated, deleted), and writes each one's state and counters where the API reads
// them. Stopping closes every consumer after what it holds is accepted and acknowledged.
import { hostname } from 'node:os';
import type { Meter } from '@opentelemetry/api';
import type { Clock } from '../../core/clock.js';
import type { Logger } from '../../platform/logger.js';
import { startRefreshLoop } from '../../platform/refresh-loop.js';
import type { IntegrationRow } from '../integrations/store.js';
import { consumerSpec, type ConsumerSpec } from './config.js';
import type { ConsumerDeps, RunningConsumer } from './consumer.js';
import { startNatsConsumer } from './nats.js';
import { startRabbitConsumer } from './rabbitmq.js';
import type { BusStore, ConsumerStateRow } from './store.js';

export interface BusRunnerDeps {
  store: BusStore;
  /** The integration's config with its secrets opened (never logged). */
  openConfig: (row: IntegrationRow) => Promise<Record<string, unknown>>;
  consumer: Omit<ConsumerDeps, 'onRejected'>;
  refreshMs: number;
  clock: Clock;
  logger: Logger;
  meter: Meter;
}

interface Running {
  spec: ConsumerSpec;
  consumer: RunningConsumer;
  startedAt: Date;
  reported: Record<Outcome, number>;
}

type Outcome = 'received' | 'accepted' | 'rejected' | 'released';
const OUTCOMES: readonly Outcome[] = ['received', 'accepted', 'rejected', 'released'];

interface Problem {
  spec: Pick<ConsumerSpec, 'integrationId' | 'platform' | 'source'>;
  error: string;
  since: Date;
}

export function createBusRunner(deps: BusRunnerDeps) {
  const { store, logger, clock } = deps;
  const processId = `${hostname()}:${process.pid}`;
  const running = new Map<number, Running>();
  let problems = new Map<number, Problem>();
  const stopped: ConsumerStateRow[] = [];
  const messages = deps.meter.createCounter('weir_bus_messages_total', {
    description:
      'Message bus messages by outcome: received, accepted (acknowledged once durably accepted), rejected (not an event: dead-lettered or terminated), released (given back to the broker to redeliver)',
    unit: '{message}',
  });

  function stateOf(r: Running, now: Date, state: ConsumerStateRow['state'], error: string | null = null) {
    const { last_message_ms: last, ...counts } = r.consumer.counters;
    const row: ConsumerStateRow = {
      integration_id: r.spec.integrationId,
      process: processId,
      platform: r.spec.platform,
      source: r.spec.source,
      state,
      error,
      ...counts,
      last_message_at: last > 0 ? new Date(last) : null,
      started_at: r.startedAt,
      updated_at: now,
    };
    return row;
  }

  function report(r: Running): void {
    const labels = { platform: r.spec.platform, integration_id: String(r.spec.integrationId) };
    for (const outcome of OUTCOMES) {
      const delta = r.consumer.counters[outcome] - r.reported[outcome];
      if (delta > 0) messages.add(delta, { ...labels, outcome });
      r.reported[outcome] = r.consumer.counters[outcome];
    }
  }

  async function stopConsumer(id: number, error: string | null = null): Promise<void> {
    const r = running.get(id);
    if (!r) return;
    running.delete(id);
    await r.consumer.close().catch((err: unknown) => logger.warn({ err, integration_id: id }, 'bus consumer close'));
    report(r);
    stopped.push(stateOf(r, clock.now(), error ? 'error' : 'stopped', error));
  }

  async function start(spec: ConsumerSpec, now: Date): Promise<void> {
    const consumerDeps: ConsumerDeps = {
      ...deps.consumer,
      onRejected: (reason) =>
        logger.warn({ integration_id: spec.integrationId, platform: spec.platform, reason }, 'bus message rejected'),
    };
    try {
      const consumer =
        spec.platform === 'rabbitmq'
          ? await startRabbitConsumer(spec, consumerDeps)
          : await startNatsConsumer(spec, consumerDeps);
      running.set(spec.integrationId, {
        spec,
        consumer,
        startedAt: now,
        reported: { received: 0, accepted: 0, rejected: 0, released: 0 },
      });
      problems.delete(spec.integrationId);
      logger.info(
        { integration_id: spec.integrationId, platform: spec.platform, source: spec.source },
        'bus consumer started',
      );
    } catch (err) {
      const error = (err as Error).message;
      const seen = problems.get(spec.integrationId);
      if (seen?.error !== error)
        logger.warn(
          { integration_id: spec.integrationId, platform: spec.platform, error },
          'bus consumer could not start',
        );
      problems.set(spec.integrationId, { spec, error, since: seen?.error === error ? seen.since : now });
    }
  }

  /** One round: bring the consumers in line with the integrations, then write their states. */
  async function reconcile(): Promise<void> {
    const wanted = new Map<number, ConsumerSpec>();
    for (const row of await store.integrations()) {
      const spec = consumerSpec({ ...row, config: await deps.openConfig(row) });
      if (spec) wanted.set(spec.integrationId, spec);
    }
    const now = clock.now();
    for (const [id, r] of running) {
      const failure = r.consumer.failure();
      const spec = wanted.get(id);
      if (failure)
        logger.warn({ integration_id: id, platform: r.spec.platform, error: failure }, 'bus consumer stopped');
      if (failure || !spec || spec.fingerprint !== r.spec.fingerprint) await stopConsumer(id, failure ?? null);
    }
    problems = new Map([...problems].filter(([id]) => wanted.has(id)));
    for (const spec of wanted.values()) if (!running.has(spec.integrationId)) await start(spec, now);
    await save(now);
  }

  async function save(now: Date): Promise<void> {
    const rows: ConsumerStateRow[] = stopped.splice(0);
    for (const r of running.values()) {
      report(r);
      rows.push(stateOf(r, now, 'consuming'));
    }
    for (const p of problems.values())
      rows.push({
        integration_id: p.spec.integrationId,
        process: processId,
        platform: p.spec.platform,
        source: p.spec.source,
        state: 'error',
        error: p.error,
        received: 0,
        accepted: 0,
        rejected: 0,
        released: 0,
        last_rejection: null,
        last_message_at: null,
        started_at: p.since,
        updated_at: now,
      });
    await store.saveStates(rows);
  }

  return {
    reconcile,
    /** The running consumers' counters (tests and benchmarks). */
    counters: (integrationId: number) => running.get(integrationId)?.consumer.counters,
    start() {
      const loop = startRefreshLoop(reconcile, deps.refreshMs, (err) =>
        logger.warn({ err }, 'bus consumers: could not apply the integrations'),
      );
      return {
        async stop() {
          await loop.stop();
          await Promise.allSettled([...running.keys()].map((id) => stopConsumer(id)));
          await save(clock.now()).catch((err: unknown) =>
            logger.warn({ err }, 'bus consumers: could not write the final states'),
          );
        },
      };
    },
  };
}

export type BusRunner = ReturnType<typeof createBusRunner>;
