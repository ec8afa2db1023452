// The configuration bundle's round trip compared by behaviour: organization A's pipeline (a
// push integration, its mapping, an enrichment table and policy, a route with a condition,
// two HTTP destinations) is exported and imported into an empty organization B; the same
// events pushed through both (the real ingest endpoint, the worker's consumers, the real
// dispatcher) reach the destinations the same, once organization-specific values are removed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp, startWorkerConsumers } from '../../../test/support/app.js';
import { until } from '../../../test/support/delivery-engine.js';
import { createOrganization, createPrincipal, type Principal } from '../../../test/support/identity.js';
import { defineMapping, loginDocument } from '../../../test/support/mappings.js';
import { parseEvents, startWebhookReceiver, type WebhookReceiver } from '../../../test/support/webhook-receiver.js';
import type { Consumer } from '../../platform/queue/port.js';

type Json = Record<string, unknown>;
const REFRESH_MS = 100;
const TOKEN_A = 'bt-A-Lq8Zr3Wx6Cv1';
const TOKEN_B = 'bt-B-Pm2Ks7Dn4Hy9';

let t: TestApp;
let orgA: number;
let orgB: number;
let adminA: Principal;
let adminB: Principal;
/** One receiver per destination name; each organization's destination of that name posts to it under its own path. */
let alerts: WebhookReceiver;
let lake: WebhookReceiver;
const consumers: Consumer[] = [];
let loops: { stop(): Promise<void> }[] = [];

async function ok(who: Principal, method: 'GET' | 'POST', url: string, payload?: unknown, status = 200): Promise<Json> {
  const res = await t.app.inject({
    method,
    url,
    headers: who.headers,
    ...(payload !== undefined ? { payload: payload as Json } : {}),
  });
  expect(res.statusCode, res.body).toBe(status);
  return res.json<Json>();
}

function login(user: string, ip: string, i: number) {
  return {
    type: 'login',
    ts: `2026-11-20T10:00:0${i}Z`,
    user: { name: user },
    client: { ip },
    host: i % 2 ? 'db1' : 'web1',
  };
}
const EVENTS = [
  login('alice', '10.0.0.1', 1),
  login('bob', '10.0.0.2', 2),
  login('alice', '10.0.0.3', 3),
  login('carol', '10.0.0.4', 4),
  login('dave', '10.0.0.5', 5),
];

/** Pushes the events with an integration's ingestion token (the real ingest endpoint). */
async function push(token: string): Promise<void> {
  const res = await t.app.inject({
    method: 'POST',
    url: '/api/ingest/auth',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/x-ndjson' },
    payload: EVENTS.map((e) => JSON.stringify(e)).join('\n'),
  });
  expect(res.statusCode, res.body).toBe(200);
  expect(res.json<Json>()).toMatchObject({ accepted: EVENTS.length, rejected: 0 });
}

/** The events a receiver accepted under one organization's path. */
function received(receiver: WebhookReceiver, path: string): Json[] {
  return receiver.requests
    .filter((r) => r.path === path && r.status === 200 && r.body)
    .flatMap((r) => parseEvents(r.body!).map((e) => e.event as Json));
}

// What differs between two organizations by construction: ids, uids, organization ids and
// names, ingestion and processing times. Everything else (classes, mapped fields, enrichment)
// is behaviour and must be equal.
const ORGANIZATION_SPECIFIC = new Set([
  'uid',
  'id',
  'organization_id',
  'integration_id',
  'tenant_uid',
  'correlation_uid',
  'logged_time',
  'logged_time_dt',
  'processed_time',
  'processed_time_dt',
  'received_time',
  'mapping_version_id',
]);
function strip(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(strip);
  if (typeof v !== 'object' || v === null) return v;
  return Object.fromEntries(
    Object.entries(v)
      .filter(([k]) => !ORGANIZATION_SPECIFIC.has(k))
      .map(([k, c]) => [k, strip(c)]),
  );
}
const canonical = (events: Json[]) => events.map((e) => JSON.stringify(strip(e))).sort();

beforeAll(async () => {
  alerts = await startWebhookReceiver({ keepBodies: true });
  lake = await startWebhookReceiver({ keepBodies: true });
  t = await createTestApp({
    env: { WEIR_TOKEN_RATE_LIMIT: '1000000', WEIR_DISPATCH_POLL_MS: '20', WEIR_MAPPING_REFRESH_MS: String(REFRESH_MS) },
  });
  orgA = await createOrganization(t, 'Round trip A');
  orgB = await createOrganization(t, 'Round trip B');
  adminA = await createPrincipal(t, { role: 'admin', organizationId: orgA });
  adminB = await createPrincipal(t, { role: 'admin', organizationId: orgB });
});

afterAll(async () => {
  await Promise.all(loops.map((l) => l.stop()));
  await Promise.all(consumers.map((c) => c.close()));
  await t?.close();
  await alerts?.close();
  await lake?.close();
});

describe('configuration bundle round trip, by behaviour', () => {
  it('the same events pushed through A and through B (imported from A) reach the destinations the same', async () => {
    // Organization A's pipeline, made through the API.
    const integration = await ok(
      adminA,
      'POST',
      '/api/integrations/',
      { name: 'vpn', platform: 'custom', organization_id: orgA },
      201,
    );
    const def = await defineMapping(t, orgA, 'custom', 'auth');
    await ok(adminA, 'POST', `/api/mappings/${def}/versions`, { document: loginDocument(), comment: 'first' }, 201);
    const table = await ok(
      adminA,
      'POST',
      '/api/collectors/enrichment/tables',
      {
        name: 'assets',
        key_column: 'host',
        match: 'exact',
        format: 'json',
        rows: [
          { host: 'db1', owner: 'ops' },
          { host: 'web1', owner: 'web' },
        ],
      },
      201,
    );
    await ok(
      adminA,
      'POST',
      '/api/collectors/enrichment/policies',
      {
        name: 'owner',
        key: 'dst_endpoint.hostname',
        lookup: { table_id: table.id },
        output: { enrichment: { name: 'owner', type: 'asset', provider: 'cmdb' } },
      },
      201,
    );
    const hot = await ok(
      adminA,
      'POST',
      '/api/collectors/destinations',
      {
        name: 'alerts',
        type: 'http',
        config: { url: `${alerts.url}/org/${orgA}` },
        credential: { bearer_token: TOKEN_A },
        delivery: { max_wait_ms: 0 },
      },
      201,
    );
    const cold = await ok(
      adminA,
      'POST',
      '/api/collectors/destinations',
      { name: 'lake', type: 'http', config: { url: `${lake.url}/org/${orgA}` }, delivery: { max_wait_ms: 0 } },
      201,
    );
    // alice's logins go to alerts only; every other event to the lake only.
    await ok(
      adminA,
      'POST',
      '/api/collectors/routes',
      {
        name: 'alice',
        position: 1,
        condition: { field: 'user.name', op: 'eq', value: 'alice' },
        destination_ids: [hot.id],
        final: true,
      },
      201,
    );
    await ok(
      adminA,
      'POST',
      '/api/collectors/routes',
      { name: 'rest', position: 2, condition: null, destination_ids: [cold.id], final: true },
      201,
    );

    // Export A, point the destinations at B's paths (the only edit), import into the empty B.
    const doc = await ok(adminA, 'GET', '/api/collectors/config/export');
    expect(JSON.stringify(doc)).not.toContain(TOKEN_A);
    for (const d of doc.destinations as { config: Json }[])
      d.config.url = String(d.config.url).replace(`/org/${orgA}`, `/org/${orgB}`);
    const imported = await ok(adminB, 'POST', '/api/collectors/config/import', {
      document: doc,
      secrets: { 'destination:alerts:bearer_token': TOKEN_B },
    });
    expect(imported).toMatchObject({ applied: true, summary: { conflict: 0, update: 0 } });
    const integrationB = (imported.items as Json[]).find((i) => i.kind === 'integration' && i.name === 'vpn')!
      .id as number;

    // Ingestion tokens are not configuration: each organization makes its own.
    const tokenA = String(
      (await ok(adminA, 'POST', `/api/ingest/integrations/${String(integration.id)}/token`, undefined, 201)).token,
    );
    const tokenB = String(
      (await ok(adminB, 'POST', `/api/ingest/integrations/${integrationB}/token`, undefined, 201)).token,
    );

    // The worker's consumers (normalization, enrichment, routing) and the dispatcher, as in production.
    consumers.push(...startWorkerConsumers(t));
    loops = t.container.loops.filter((l) => l.role === 'dispatcher').map((l) => l.start());
    await new Promise((resolve) => setTimeout(resolve, REFRESH_MS * 4));

    await push(tokenA);
    await push(tokenB);
    const aliceCount = EVENTS.filter((e) => e.user.name === 'alice').length;
    const restCount = EVENTS.length - aliceCount;
    await until(
      () =>
        received(alerts, `/org/${orgA}`).length >= aliceCount &&
        received(alerts, `/org/${orgB}`).length >= aliceCount &&
        received(lake, `/org/${orgA}`).length >= restCount &&
        received(lake, `/org/${orgB}`).length >= restCount,
      30_000,
      "both organizations' deliveries",
    );
    await new Promise((resolve) => setTimeout(resolve, 300)); // nothing more arrives

    const out = {
      alertsA: received(alerts, `/org/${orgA}`),
      alertsB: received(alerts, `/org/${orgB}`),
      lakeA: received(lake, `/org/${orgA}`),
      lakeB: received(lake, `/org/${orgB}`),
    };
    // Both sides non-empty and as the configuration says: alice to alerts, the others to the lake, each enriched.
    expect(out.alertsA).toHaveLength(aliceCount);
    expect(out.lakeA).toHaveLength(restCount);
    for (const e of out.alertsA) expect(e).toMatchObject({ class_uid: 3002, user: { name: 'alice' } });
    for (const e of out.lakeA) expect((e.user as Json).name).not.toBe('alice');
    for (const e of [...out.alertsA, ...out.lakeA])
      expect((e.enrichments as Json[])[0]).toMatchObject({ name: 'owner', type: 'asset', provider: 'cmdb' });
    // The same behaviour in B, once organization-specific values are removed.
    expect(canonical(out.alertsB)).toEqual(canonical(out.alertsA));
    expect(canonical(out.lakeB)).toEqual(canonical(out.lakeA));
    // Each organization's secret went with its own deliveries.
    const auth = (r: WebhookReceiver, org: number) =>
      new Set(r.requests.filter((q) => q.path === `/org/${org}`).map((q) => q.headers.authorization));
    expect(auth(alerts, orgA)).toEqual(new Set([`Bearer ${TOKEN_A}`]));
    expect(auth(alerts, orgB)).toEqual(new Set([`Bearer ${TOKEN_B}`]));
  });
});
