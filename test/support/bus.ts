// The shared fixture of the bus input tests (rabbitmq, nats): a Weir with workers and the bus
// runner started (refreshing every 100 ms), an admin of a fresh organization, and the
// integration's status as the API returns it.
import { expect } from 'vitest';
import type { ConsumerStateRow } from '../../src/modules/buses/store.js';
import type { Consumer } from '../../src/platform/queue/port.js';
import { createTestApp, startWorkerConsumers, type TestApp } from './app.js';
import { createOrganization, createPrincipal, injectAs, type Principal } from './identity.js';

/** One consumer's state in GET /api/ingest/integrations/:id (the stored state's fields it shows). */
export type BusConsumerState = Pick<
  ConsumerStateRow,
  'state' | 'error' | 'received' | 'accepted' | 'rejected' | 'released' | 'last_rejection'
>;

export interface BusStatus {
  stats: { events_in: number; streams: { stream: string; events_in: number }[] };
  bus?: { consumers: BusConsumerState[] };
}

export interface BusApp {
  t: TestApp;
  org: number;
  admin: Principal;
  /** The integration's status through the API. */
  status(id: number): Promise<BusStatus>;
  /** Stops the runner and the workers, then the app. */
  close(): Promise<void>;
}

export async function startBusApp(orgName: string): Promise<BusApp> {
  const t = await createTestApp({ env: { WEIR_BUS_REFRESH_MS: '100' } });
  const org = await createOrganization(t, orgName);
  const admin = await createPrincipal(t, { role: 'admin', organizationId: org });
  const workers: Consumer[] = startWorkerConsumers(t);
  const stop = t.container.buses.runner().start().stop;
  return {
    t,
    org,
    admin,
    async status(id) {
      const res = await injectAs(t, admin, 'GET', `/api/ingest/integrations/${id}`);
      expect(res.statusCode, res.body).toBe(200);
      return res.json<BusStatus>();
    },
    async close() {
      await stop();
      await Promise.all(workers.map((w) => w.close()));
      await t.close();
    },
  };
}

/** Reads until `done` holds or `ms` passed; returns the last value read. */
export async function until<T>(read: () => Promise<T>, done: (v: T) => boolean, ms = 20_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await read();
    if (done(v) || Date.now() > deadline) return v;
    await new Promise((r) => setTimeout(r, 100));
  }
}
