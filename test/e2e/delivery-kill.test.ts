// End-to-end: the dispatcher killed with SIGKILL in the middle of delivering to a slow
// webhook, then restarted, loses nothing: every acknowledged event reaches the destination
// (at least once; duplicates are counted and reported) and the ledger balances, on both
// deployments: embedded (`weir all` on PGlite) and distributed (PostgreSQL + Redis, the API,
// the worker and the dispatcher as separate processes).
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freshPostgresDatabase } from '../support/db.js';
import {
  createDestination,
  createRoute,
  ledgerTotals,
  seqOf,
  waitFor,
  type LedgerTotals,
} from '../support/delivery-api.js';
import { setUpIngestion, storedEvents, type IngestSetup } from '../support/ingest.js';
import { createFleet, weirStarted } from '../support/process.js';
import { deletePrefix, uniquePrefix } from '../support/redis.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

const distributed = Boolean(process.env.DATABASE_URL && process.env.REDIS_URL);
const BATCHES = 16;
const BATCH_SIZE = 500;
const TOTAL = BATCHES * BATCH_SIZE;
const COMMON = {
  WEIR_DISPATCH_LEASE_MS: '3000',
  WEIR_QUEUE_LEASE_MS: '3000',
  WEIR_DISPATCH_POLL_MS: '100',
  WEIR_OUTBOUND_ALLOW_CIDRS: '127.0.0.0/8',
};

const fleet = createFleet(COMMON);
afterAll(() => fleet.cleanup());
const { start, startApi } = fleet;

const oktaFixtures = JSON.parse(
  readFileSync(path.resolve(import.meta.dirname, '../../src/connectors/okta/fixtures/system_log.json'), 'utf8'),
) as Record<string, unknown>[];

/** A slow receiver, so that a kill lands while requests are in flight. */
async function slowReceiver(): Promise<WebhookReceiver> {
  const r = await startWebhookReceiver({ keyOf: (event) => seqOf(event), responseDelayMs: 150 });
  fleet.onCleanup(() => r.close());
  return r;
}

async function configure(url: string, setup: IngestSetup, receiver: WebhookReceiver): Promise<void> {
  const headers = { cookie: setup.cookie };
  const destination = await createDestination(url, headers, {
    name: 'slow webhook',
    type: 'http',
    organization_id: setup.organizationId,
    config: { url: receiver.url },
    delivery: {
      max_events: 250,
      max_wait_ms: 50,
      concurrency: 2,
      timeout_ms: 2000,
      backoff_base_ms: 100,
      backoff_max_ms: 1000,
    },
  });
  await createRoute(url, headers, {
    name: 'all to webhook',
    organization_id: setup.organizationId,
    destination_ids: [destination],
  });
  // A route takes effect at the next dispatch cycle (a poll interval): let it.
  await new Promise((r) => setTimeout(r, 500));
}

/** Pushes every batch; returns the seqs the API acknowledged. */
async function pushAll(url: string, setup: IngestSetup): Promise<Set<string>> {
  const acknowledged = new Set<string>();
  const token = setup.integrations[0]!.token;
  for (let b = 0; b < BATCHES; b++) {
    const lines: string[] = [];
    for (let i = 0; i < BATCH_SIZE; i++)
      lines.push(JSON.stringify({ ...oktaFixtures[i % oktaFixtures.length], weir_test_seq: `${b}-${i}` }));
    const res = await fetch(`${url}/api/ingest/system_log`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
      body: lines.join('\n'),
    });
    expect(res.status).toBe(200);
    for (let i = 0; i < BATCH_SIZE; i++) acknowledged.add(`${b}-${i}`);
  }
  return acknowledged;
}

async function settledLedger(url: string, setup: IngestSetup): Promise<LedgerTotals> {
  return waitFor(
    'the ledger to settle',
    async () => {
      const totals = await ledgerTotals(url, { cookie: setup.cookie });
      return totals.events_in === TOTAL && totals.pending === 0 ? totals : undefined;
    },
    120_000,
    300,
  );
}

async function expectAllDelivered(
  url: string,
  setup: IngestSetup,
  acknowledged: Set<string>,
  receiver: WebhookReceiver,
  totals: LedgerTotals,
): Promise<void> {
  const missing = [...acknowledged].filter((s) => !receiver.received.has(s));
  expect(missing.slice(0, 5)).toEqual([]);
  expect(acknowledged.size).toBe(TOTAL);
  // Each event twice: to the webhook and to the organization's event store.
  expect(totals).toMatchObject({
    events_in: TOTAL,
    delivered: 2 * TOTAL,
    dead_lettered: 0,
    filtered: 0,
    quarantined: 0,
    pending: 0,
    unaccounted: 0,
  });
  // The store holds every event exactly once, the kill notwithstanding (written in the batch's transaction).
  expect(await storedEvents(url, setup.cookie, setup.organizationId)).toEqual({ events: TOTAL, repeated: 0 });
  const stats = receiver.stats();
  console.log(
    JSON.stringify({ delivered_unique: stats.unique, duplicates: stats.duplicates, requests: stats.requests }),
  );
}

describe('SIGKILL of the dispatcher in the middle of delivery', () => {
  // Embedded processes do not depend on the pass's adapters: the embedded pass runs this.
  it.skipIf(distributed)(
    'embedded: a restarted `weir all` delivers every acknowledged event and the ledger balances',
    async () => {
      const dataDir = mkdtempSync(path.join(tmpdir(), 'weir-dkill-'));
      fleet.keepDir(dataDir);
      const env = { WEIR_DATA_DIR: dataDir };
      const receiver = await slowReceiver();
      const first = await startApi('all', env);
      const setup = await setUpIngestion(first.url, ['okta']);
      await configure(first.url, setup, receiver);
      const acknowledged = await pushAll(first.url, setup);
      // Kill once delivery is well under way, with requests in flight.
      await waitFor(
        'some deliveries',
        async () => (receiver.received.size >= TOTAL / 5 ? true : undefined),
        120_000,
        20,
      );
      first.p.kill('SIGKILL');
      await first.p.exited;
      expect(receiver.received.size).toBeLessThan(TOTAL);

      const second = await startApi('all', env);
      await waitFor(
        'every event delivered',
        async () => (receiver.received.size >= TOTAL ? true : undefined),
        120_000,
        200,
      );
      const totals = await settledLedger(second.url, setup);
      await expectAllDelivered(second.url, setup, acknowledged, receiver, totals);
      second.p.kill('SIGTERM');
      expect(await second.p.exited).toBe(0);
    },
    300_000,
  );

  it.runIf(distributed)(
    'distributed: a dispatcher killed mid-delivery is replaced and nothing is lost',
    async () => {
      const db = await freshPostgresDatabase();
      const prefix = uniquePrefix();
      try {
        const env = {
          DATABASE_URL: db.url,
          REDIS_URL: process.env.REDIS_URL,
          WEIR_REDIS_PREFIX: prefix,
          WEIR_SECRET_KEY: 'cd'.repeat(32),
        };
        const receiver = await slowReceiver();
        const api = await startApi('api', env);
        const worker = start('worker', env);
        const dispatcher = start('dispatcher', env);
        await Promise.all([worker.waitFor(weirStarted, 90_000), dispatcher.waitFor(weirStarted, 90_000)]);
        const setup = await setUpIngestion(api.url, ['okta']);
        await configure(api.url, setup, receiver);
        const acknowledged = await pushAll(api.url, setup);
        await waitFor(
          'some deliveries',
          async () => (receiver.received.size >= TOTAL / 5 ? true : undefined),
          120_000,
          20,
        );
        dispatcher.kill('SIGKILL');
        await dispatcher.exited;
        expect(receiver.received.size).toBeLessThan(TOTAL);

        const replacement = start('dispatcher', env);
        await replacement.waitFor(weirStarted, 90_000);
        await waitFor(
          'every event delivered',
          async () => (receiver.received.size >= TOTAL ? true : undefined),
          120_000,
          200,
        );
        const totals = await settledLedger(api.url, setup);
        await expectAllDelivered(api.url, setup, acknowledged, receiver, totals);
        for (const p of [api.p, worker, replacement]) p.kill('SIGTERM');
        await Promise.all([api.p.exited, worker.exited, replacement.exited]);
      } finally {
        await deletePrefix(prefix);
        await db.drop();
      }
    },
    300_000,
  );
});
