// The message bus inputs (docs/inputs-message-buses.md): integrations of the `rabbitmq` and
// `nats` platforms name a queue or a JetStream durable consumer; the worker role (and weir
// all) consumes them. Their messages enter through the ingest service's acceptFor, the same
// durable accept as push, and are acknowledged to the broker only once accepted.
import type { Kysely } from 'kysely';
import type { Meter } from '@opentelemetry/api';
import type { Clock } from '../../core/clock.js';
import type { DB } from '../../platform/db/index.js';
import type { Logger } from '../../platform/logger.js';
import type { NetPolicy } from '../../platform/net/policy.js';
import type { RoleLoop } from '../../platform/queue/jobs.js';
import type { IngestService } from '../ingest/service.js';
import type { IntegrationRow } from '../integrations/store.js';
import { testBroker, type BrokerTestResult } from './probe.js';
import { createBusRunner } from './runner.js';
import { createBusStore, type ConsumerStateRow } from './store.js';

export { BUS_PLATFORMS, NATS_PLATFORM, RABBITMQ_PLATFORM } from './config.js';
export type { BrokerFacts, BrokerTestResult } from './probe.js';

/** Consumer states older than this are of a process that is gone. */
const STATE_FRESH_MS = 5 * 60_000;

export interface BusesDeps {
  db: Kysely<DB>;
  clock: Clock;
  logger: Logger;
  meter: Meter;
  ingest: Pick<IngestService, 'acceptFor'>;
  net: NetPolicy;
  openConfig: (row: IntegrationRow) => Promise<Record<string, unknown>>;
  refreshMs: number;
  batch: { maxEvents: number; maxBytes: number };
  jsonMaxDepth: number;
}

export type BusConsumerState = Omit<ConsumerStateRow, 'integration_id'>;

export function wireBuses(deps: BusesDeps) {
  const store = createBusStore(deps.db);
  const makeRunner = () =>
    createBusRunner({
      store,
      openConfig: deps.openConfig,
      consumer: {
        acceptFor: (target, events) => deps.ingest.acceptFor(target, events),
        maxEvents: deps.batch.maxEvents,
        maxBytes: deps.batch.maxBytes,
        maxDepth: deps.jsonMaxDepth,
        net: deps.net,
      },
      refreshMs: deps.refreshMs,
      clock: deps.clock,
      logger: deps.logger,
      meter: deps.meter,
    });
  const loop: RoleLoop = { name: 'bus-consumers', role: 'worker', start: () => makeRunner().start() };
  return {
    loops: [loop],
    /** A runner not started by a role (tests drive reconcile() themselves). */
    runner: makeRunner,
    /** The consumers of an integration as the processes running them last reported. */
    async consumerStates(integrationId: number): Promise<BusConsumerState[]> {
      const rows = await store.states(integrationId, new Date(deps.clock.now().getTime() - STATE_FRESH_MS));
      return rows.map(({ integration_id: _id, ...rest }) => rest);
    },
    /** The connection test of a rabbitmq or nats integration: a real connection with its stored config and secrets. */
    async testConnection(row: IntegrationRow): Promise<BrokerTestResult> {
      return testBroker({ ...row, config: await deps.openConfig(row) }, deps.net);
    },
  };
}

export type Buses = ReturnType<typeof wireBuses>;
