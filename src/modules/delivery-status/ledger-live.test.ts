// The ledger while the pipeline runs, through the health API: pushed events are in and
// pending from the moment they are acknowledged (before any worker normalizes them), and
// every poll taken while batches move from term to term balances, because the health
// answer reads every term in one snapshot and every move commits in one transaction.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp, startWorkerConsumers } from '../../../test/support/app.js';
import { seqOf, waitFor, routeEverythingTo } from '../../../test/support/delivery-api.js';
import { createOrganization, createPrincipal, type Principal } from '../../../test/support/identity.js';
import { http, oktaIntegration, pushOkta } from '../../../test/support/ingest.js';
import { startWebhookReceiver, type WebhookReceiver } from '../../../test/support/webhook-receiver.js';
import type { Consumer } from '../../platform/queue/port.js';

interface Totals {
  events_in: number;
  pending: number;
  pending_normalization: number;
  delivered: number;
  unaccounted: number;
}

let t: TestApp;
let base: string;
let admin: Principal;
let orgId: number;
let receiver: WebhookReceiver;
const consumers: Consumer[] = [];
const loops: { stop(): Promise<void> }[] = [];

beforeAll(async () => {
  t = await createTestApp({
    env: { WEIR_TOKEN_RATE_LIMIT: '1000000', WEIR_DISPATCH_POLL_MS: '20', WEIR_INGEST_BATCH_MAX_EVENTS: '100' },
  });
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  orgId = await createOrganization(t, 'Ledger Org');
  admin = await createPrincipal(t, { role: 'admin', organizationId: orgId });
  receiver = await startWebhookReceiver({ keyOf: (event) => seqOf(event) });
});

afterAll(async () => {
  await Promise.all(loops.map((l) => l.stop()));
  await Promise.all(consumers.map((c) => c.close()));
  await receiver?.close();
  await t?.close();
});

const integrationWithToken = (name: string) => oktaIntegration(base, admin.headers, orgId, name);

async function push(token: string, tag: string, events: number): Promise<void> {
  expect((await pushOkta(base, token, tag, events)).status).toBe(200);
}

async function ledger(): Promise<{ totals: Totals; rows: (Totals & { integration_id: number })[] }> {
  const res = await http(base, 'GET', '/api/collectors/destinations/health', undefined, admin.headers);
  expect(res.status).toBe(200);
  return res.json.ledger as never;
}

describe('the ledger during a run', () => {
  it('counts acknowledged events as in and pending before any worker has normalized them', async () => {
    const { id, token } = await integrationWithToken('queued only');
    await push(token, 'queued', 250);
    const row = (await ledger()).rows.find((r) => r.integration_id === id);
    // Three batches (100, 100, 50) wait in the queue: no worker runs yet.
    expect(row).toMatchObject({
      events_in: 250,
      pending: 250,
      pending_normalization: 250,
      delivered: 0,
      unaccounted: 0,
    });
  });

  it('balances in every poll while events are pushed, normalized, routed and delivered', async () => {
    const { id, token } = await integrationWithToken('live');
    await routeEverythingTo(base, admin.headers, orgId, receiver.url);
    consumers.push(...startWorkerConsumers(t));
    loops.push(...t.container.loops.map((l) => l.start()));

    const BATCHES = 30;
    const EVENTS = 150;
    const polls: Totals[] = [];
    let pushing = true;
    const poller = (async () => {
      while (pushing || polls.length < 5) polls.push((await ledger()).totals);
    })();
    for (let b = 0; b < BATCHES; b += 3) await Promise.all([0, 1, 2].map((k) => push(token, `live-${b + k}`, EVENTS)));
    const settled = await waitFor(
      'every event delivered',
      async () => {
        const totals = (await ledger()).totals;
        polls.push(totals);
        return totals.pending === 0 ? totals : undefined;
      },
      60_000,
      20,
    );
    pushing = false;
    await poller;

    const unbalanced = polls.filter((p) => p.unaccounted !== 0);
    expect(unbalanced.slice(0, 3)).toEqual([]);
    expect(polls.length).toBeGreaterThan(20);
    // The polls saw events in every place on their way: queued, in flight, delivered.
    expect(polls.some((p) => p.pending_normalization > 0)).toBe(true);
    expect(polls.some((p) => p.pending > p.pending_normalization)).toBe(true);
    // The first test's queued events went the same way once the worker started.
    const total = 250 + BATCHES * EVENTS;
    expect(settled).toMatchObject({ events_in: total, delivered: total, unaccounted: 0 });
    expect((await ledger()).rows.find((r) => r.integration_id === id)).toMatchObject({
      events_in: BATCHES * EVENTS,
      delivered: BATCHES * EVENTS,
      pending: 0,
      unaccounted: 0,
    });
    expect(receiver.received.size).toBe(total);
  }, 120_000);
});
