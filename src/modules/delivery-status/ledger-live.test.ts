// The ledger while the pipeline runs, through the health API: pushed events are in and
// pending from the moment they are acknowledged (before any worker normalizes them), and
// every poll taken while batches move from term to term balances, because the health
// answer reads every term in one snapshot and every move commits in one transaction.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/support/app.js';
import { createDestination, createRoute, seqOf, waitFor } from '../../../test/support/delivery-api.js';
import { createOrganization, createPrincipal, type Principal } from '../../../test/support/identity.js';
import { http } from '../../../test/support/ingest.js';
import { startWebhookReceiver, type WebhookReceiver } from '../../../test/support/webhook-receiver.js';
import type { Consumer } from '../../platform/queue/port.js';
import { startConsumers } from '../../roles/jobs.js';

type Json = Record<string, unknown>;
interface Totals {
  events_in: number;
  pending: number;
  pending_normalization: number;
  delivered: number;
  unaccounted: number;
}

const okta = JSON.parse(readFileSync(path.resolve(import.meta.dirname, '../../connectors/okta/fixtures/system_log.json'), 'utf8')) as Json[];

let t: TestApp;
let base: string;
let admin: Principal;
let orgId: number;
let receiver: WebhookReceiver;
const consumers: Consumer[] = [];
const loops: { stop(): Promise<void> }[] = [];

beforeAll(async () => {
  t = await createTestApp({ env: { WEIR_TOKEN_RATE_LIMIT: '1000000', WEIR_DISPATCH_POLL_MS: '20', WEIR_INGEST_BATCH_MAX_EVENTS: '100' } });
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

async function integrationWithToken(name: string): Promise<{ id: number; token: string }> {
  const created = await http(base, 'POST', '/api/integrations/', { name, platform: 'okta', organization_id: orgId }, admin.headers);
  expect(created.status).toBe(201);
  const id = Number(created.json.id);
  const token = await http(base, 'POST', `/api/ingest/integrations/${id}/token`, {}, admin.headers);
  return { id, token: String(token.json.token) };
}

async function push(token: string, tag: string, events: number): Promise<void> {
  const lines = Array.from({ length: events }, (_, i) => JSON.stringify({ ...okta[i % okta.length], weir_test_seq: `${tag}-${i}` }));
  const res = await fetch(`${base}/api/ingest/system_log`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: lines.join('\n') });
  expect(res.status).toBe(200);
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
    expect(row).toMatchObject({ events_in: 250, pending: 250, pending_normalization: 250, delivered: 0, unaccounted: 0 });
  });

  it('balances in every poll while events are pushed, normalized, routed and delivered', async () => {
    const { id, token } = await integrationWithToken('live');
    const destination = await createDestination(base, admin.headers, { name: 'receiver', type: 'http', organization_id: orgId, config: { url: receiver.url }, delivery: { max_wait_ms: 20 } });
    await createRoute(base, admin.headers, { name: 'everything', organization_id: orgId, destination_ids: [destination] });
    consumers.push(...startConsumers(t.container.queue, t.container.jobs.filter((j) => j.role === 'worker'), t.container.logger));
    loops.push(...t.container.loops.map((l) => l.start()));

    const BATCHES = 30;
    const EVENTS = 150;
    const polls: Totals[] = [];
    let pushing = true;
    const poller = (async () => {
      while (pushing || polls.length < 5) polls.push((await ledger()).totals);
    })();
    for (let b = 0; b < BATCHES; b += 3) await Promise.all([0, 1, 2].map((k) => push(token, `live-${b + k}`, EVENTS)));
    const settled = await waitFor('every event delivered', async () => {
      const totals = (await ledger()).totals;
      polls.push(totals);
      return totals.pending === 0 ? totals : undefined;
    }, 60_000, 20);
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
    expect((await ledger()).rows.find((r) => r.integration_id === id)).toMatchObject({ events_in: BATCHES * EVENTS, delivered: BATCHES * EVENTS, pending: 0, unaccounted: 0 });
    expect(receiver.received.size).toBe(total);
  }, 120_000);
});
