// The dashboard summary against a real run: events pushed, normalized, routed and delivered
// (or quarantined, or filtered) by the worker and dispatcher of the test app, then counted.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp, startWorkerConsumers } from '../../../test/support/app.js';
import { ledgerTotals, seqOf, waitFor, routeEverythingTo } from '../../../test/support/delivery-api.js';
import { createOrganization, createPrincipal, type Principal } from '../../../test/support/identity.js';
import { http } from '../../../test/support/ingest.js';
import { startWebhookReceiver, type WebhookReceiver } from '../../../test/support/webhook-receiver.js';
import type { Consumer } from '../../platform/queue/port.js';
import { collectionState } from './service.js';

type Json = Record<string, unknown>;
const okta = JSON.parse(
  readFileSync(path.resolve(import.meta.dirname, '../../connectors/okta/fixtures/system_log.json'), 'utf8'),
) as Json[];

let t: TestApp;
let base: string;
let orgA: number;
let orgB: number;
let root: Principal;
let adminA: Principal;
let viewerA: Principal;
let adminB: Principal;
let receiver: WebhookReceiver;
const consumers: Consumer[] = [];
const loops: { stop(): Promise<void> }[] = [];

async function integrationWithToken(
  who: Principal,
  organizationId: number,
  name: string,
  platform: string,
): Promise<{ id: number; token: string }> {
  const created = await http(
    base,
    'POST',
    '/api/integrations/',
    { name, platform, organization_id: organizationId },
    who.headers,
  );
  expect(created.status).toBe(201);
  const id = Number(created.json.id);
  const token = await http(base, 'POST', `/api/ingest/integrations/${id}/token`, {}, who.headers);
  return { id, token: String(token.json.token) };
}

async function push(token: string, stream: string, tag: string, events: number): Promise<void> {
  const lines = Array.from({ length: events }, (_, i) =>
    JSON.stringify({ ...okta[i % okta.length], weir_test_seq: `${tag}-${i}` }),
  );
  const res = await fetch(`${base}/api/ingest/${stream}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}` },
    body: lines.join('\n'),
  });
  expect(res.status).toBe(200);
}

async function summary(who: Principal, query = ''): Promise<{ status: number; json: Json }> {
  return http(base, 'GET', `/api/dashboard/summary${query}`, undefined, who.headers);
}

beforeAll(async () => {
  t = await createTestApp({ env: { WEIR_TOKEN_RATE_LIMIT: '1000000', WEIR_DISPATCH_POLL_MS: '20' } });
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  orgA = await createOrganization(t, 'Dash A');
  orgB = await createOrganization(t, 'Dash B');
  root = await createPrincipal(t, { role: 'admin' });
  adminA = await createPrincipal(t, { role: 'admin', organizationId: orgA });
  viewerA = await createPrincipal(t, { role: 'viewer', organizationId: orgA });
  adminB = await createPrincipal(t, { role: 'admin', organizationId: orgB });
  receiver = await startWebhookReceiver({ keyOf: (event) => seqOf(event) });

  // A: 40 okta events delivered, 5 custom events quarantined (no mapping). B: 7 okta events, no route: filtered.
  const oktaA = await integrationWithToken(adminA, orgA, 'okta a', 'okta');
  const customA = await integrationWithToken(adminA, orgA, 'custom a', 'custom');
  const oktaB = await integrationWithToken(adminB, orgB, 'okta b', 'okta');
  await routeEverythingTo(base, adminA.headers, orgA, receiver.url);
  consumers.push(...startWorkerConsumers(t));
  loops.push(...t.container.loops.map((l) => l.start()));
  await push(oktaA.token, 'system_log', 'a', 40);
  await push(customA.token, 'events', 'c', 5);
  await push(oktaB.token, 'system_log', 'b', 7);
  await waitFor(
    'every event settled',
    async () => {
      const totals = await ledgerTotals(base, root.headers);
      return totals.pending === 0 && totals.events_in === 52 ? totals : undefined;
    },
    60_000,
    50,
  );
}, 90_000);

afterAll(async () => {
  await Promise.all(loops.map((l) => l.stop()));
  await Promise.all(consumers.map((c) => c.close()));
  await receiver?.close();
  await t?.close();
});

describe('GET /api/dashboard/summary', () => {
  it('counts what organization A pushed, delivered and quarantined, and nothing of B', async () => {
    const res = await summary(adminA);
    expect(res.status).toBe(200);
    const traffic = res.json.traffic as Json;
    const counted = { events_in: 45, delivered: 40, quarantined: 5, filtered: 0, dead_lettered: 0, dlq_reprocessed: 0 };
    expect(traffic.today).toMatchObject(counted);
    // The hourly ledger is written in the same statements as the day's: the same numbers.
    expect(traffic.last_hour).toMatchObject({ resolution: 'hour', ...counted });
    expect(traffic.last_24_hours).toMatchObject({ resolution: 'hour', ...counted });
    expect((res.json.traffic as Json).pending).toMatchObject({ total: 0 });
    expect(res.json).toMatchObject({
      organizations: 1,
      organization_id: null,
      destinations: { total: 1, by_health: { healthy: 1, degraded: 0, unhealthy: 0, idle: 0 } },
      integrations: { total: 2, by_collection_state: { push: 1, never_run: 0 } },
      quarantine: { open: 5 },
      detections: { open: 0, available: true },
      license: { edition: 'community', status: 'community' },
    });
    // The okta integration is pushed to, not collected (config.collect is off): not_collecting.
    expect((res.json.integrations as { by_collection_state: Json }).by_collection_state.not_collecting).toBe(1);
    expect(receiver.received.size).toBe(40);
  });

  it('gives B only its own events: filtered for want of a route', async () => {
    const res = await summary(adminB);
    expect(res.status).toBe(200);
    expect((res.json.traffic as Json).today).toMatchObject({ events_in: 7, delivered: 0, filtered: 7, quarantined: 0 });
    expect((res.json.traffic as Json).last_hour).toMatchObject({
      events_in: 7,
      delivered: 0,
      filtered: 7,
      quarantined: 0,
    });
    expect(res.json).toMatchObject({ organizations: 1, destinations: { total: 0 }, quarantine: { open: 0 } });
  });

  it('lets a viewer read it', async () => {
    const res = await summary(viewerA);
    expect(res.status).toBe(200);
    expect((res.json.traffic as Json).today).toMatchObject({ events_in: 45 });
  });

  it('sums every organization for a platform caller, and narrows to one on request', async () => {
    const all = await summary(root);
    expect(all.status).toBe(200);
    expect((all.json.traffic as Json).today).toMatchObject({
      events_in: 52,
      delivered: 40,
      filtered: 7,
      quarantined: 5,
    });
    expect((all.json.traffic as Json).last_24_hours).toMatchObject({
      events_in: 52,
      delivered: 40,
      filtered: 7,
      quarantined: 5,
    });
    expect(all.json.organizations).toBe(2);
    const onlyB = await summary(root, `?organization_id=${orgB}`);
    expect(onlyB.status).toBe(200);
    expect(onlyB.json).toMatchObject({ organization_id: orgB, organizations: 1 });
    expect((onlyB.json.traffic as Json).today).toMatchObject({ events_in: 7 });
    expect((onlyB.json.traffic as Json).last_hour).toMatchObject({ events_in: 7, filtered: 7 });
  });

  it('answers 404 for another organization, and for one that does not exist', async () => {
    expect((await summary(adminA, `?organization_id=${orgB}`)).status).toBe(404);
    expect((await summary(root, '?organization_id=999999')).status).toBe(404);
    const own = await summary(adminA, `?org_id=${orgA}`);
    expect(own.status).toBe(200);
    expect(own.json.organization_id).toBe(orgA);
  });

  it('shows yesterday as its own UTC day', async () => {
    const res = await summary(adminA);
    const traffic = res.json.traffic as { today: Json; yesterday: Json };
    expect(traffic.today.resolution).toBe('utc_day');
    expect(traffic.yesterday).toMatchObject({ resolution: 'utc_day', events_in: 0, delivered: 0 });
    expect(Date.parse(String(traffic.yesterday.to))).toBe(Date.parse(String(traffic.today.from)));
  });
});

describe('collectionState', () => {
  it('names the state of an integration group', () => {
    expect(collectionState({ is_active: false, collect: true, state: 'ok' }, true)).toBe('inactive');
    expect(collectionState({ is_active: true, collect: false, state: 'never_run' }, false)).toBe('push');
    expect(collectionState({ is_active: true, collect: false, state: 'never_run' }, true)).toBe('not_collecting');
    expect(collectionState({ is_active: true, collect: true, state: 'failing' }, true)).toBe('failing');
    expect(collectionState({ is_active: true, collect: true, state: 'never_run' }, true)).toBe('never_run');
    expect(collectionState({ is_active: true, collect: true, state: 'ok' }, true)).toBe('collecting');
  });
});
