// The sample events of a built-in source (GET/POST /api/integrations/{id}/sample-events): what
// each platform has, sending them through the accept path (the ledger counts them at once,
// the worker normalizes them, the organization's event store holds them for search), the
// refusals, and the scope: another organization's integration is not found.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, startWorkerConsumers, type TestApp } from '../../../test/support/app.js';
import { waitFor } from '../../../test/support/delivery-api.js';
import { createPrincipal, type Principal } from '../../../test/support/identity.js';
import { http } from '../../../test/support/ingest.js';
import type { Consumer } from '../../platform/queue/port.js';

type Json = Record<string, unknown>;

let t: TestApp;
let base: string;
let root: Principal;
let adminA: Principal;
let viewerA: Principal;
let orgA: number;
let orgB: number;
const consumers: Consumer[] = [];
const loops: { stop(): Promise<void> }[] = [];

async function organization(name: string): Promise<number> {
  const res = await http(base, 'POST', '/api/organizations/', { name }, root.headers);
  expect(res.status, JSON.stringify(res.json)).toBe(201);
  return Number(res.json.id);
}

async function integration(who: Principal, organizationId: number, platform: string, name = platform) {
  const res = await http(
    base,
    'POST',
    '/api/integrations/',
    { name, platform, organization_id: organizationId },
    who.headers,
  );
  expect(res.status, JSON.stringify(res.json)).toBe(201);
  return Number(res.json.id);
}

const samples = (who: Principal, id: number, method: 'GET' | 'POST' = 'GET', body?: Json) =>
  http(base, method, `/api/integrations/${id}/sample-events`, body, who.headers);

async function ledgerRow(integrationId: number): Promise<Json | undefined> {
  const res = await http(base, 'GET', '/api/collectors/destinations/health', undefined, adminA.headers);
  expect(res.status).toBe(200);
  return (res.json.ledger as { rows: Json[] }).rows.find((r) => r.integration_id === integrationId);
}

beforeAll(async () => {
  t = await createTestApp({ env: { WEIR_TOKEN_RATE_LIMIT: '1000000', WEIR_DISPATCH_POLL_MS: '20' } });
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  root = await createPrincipal(t, { role: 'admin', organizationId: null });
  // Through the API: each organization starts with its event store and a route sending it everything.
  orgA = await organization('Samples A');
  orgB = await organization('Samples B');
  adminA = await createPrincipal(t, { role: 'admin', organizationId: orgA });
  viewerA = await createPrincipal(t, { role: 'viewer', organizationId: orgA });
});

afterAll(async () => {
  await Promise.all(loops.map((l) => l.stop()));
  await Promise.all(consumers.map((c) => c.close()));
  await t?.close();
});

describe('sample events of a built-in source', () => {
  it("lists the platform's sample streams with an example as a sender sends it", async () => {
    const okta = await integration(adminA, orgA, 'okta');
    const res = await samples(viewerA, okta);
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ integration_id: okta, platform: 'okta', ingest_url: '/api/ingest/{stream}' });
    const [stream] = res.json.streams as { stream: string; text: boolean; events: number; example: string }[];
    expect(stream).toMatchObject({ stream: 'system_log', text: false });
    expect(stream!.events).toBeGreaterThanOrEqual(5);
    expect((JSON.parse(stream!.example) as Json).eventType).toBe('user.session.start');

    // A text stream's example is a line, sent as text/plain.
    const asa = await integration(adminA, orgA, 'cisco_asa');
    const text = (await samples(viewerA, asa)).json.streams as { stream: string; text: boolean; example: string }[];
    expect(text).toEqual([expect.objectContaining({ stream: 'syslog', text: true })]);
    expect(text[0]!.example).toMatch(/%ASA-\d-\d+/);

    // A platform without a built-in mapping has none: any stream name of the sender's.
    const custom = await integration(adminA, orgA, 'custom', 'app');
    expect((await samples(viewerA, custom)).json.streams).toEqual([]);
  });

  it('sends them through the accept path: counted at once, normalized without quarantine, searchable', async () => {
    const okta = await integration(adminA, orgA, 'okta', 'okta samples');
    const listed = (await samples(adminA, okta)).json.streams as { events: number }[];
    const sent = await samples(adminA, okta, 'POST');
    expect(sent.status, JSON.stringify(sent.json)).toBe(200);
    const count = listed[0]!.events;
    expect(sent.json).toMatchObject({
      integration_id: okta,
      platform: 'okta',
      accepted: count,
      streams: [{ stream: 'system_log', accepted: count, batch_id: expect.any(String) }],
    });
    // The ledger counts them as in and pending before any worker runs.
    expect(await ledgerRow(okta)).toMatchObject({ events_in: count, pending: count, unaccounted: 0 });

    // One stream of a platform with several: only its samples.
    const graph = await integration(adminA, orgA, 'microsoft_graph');
    const one = await samples(adminA, graph, 'POST', { stream: 'signins' });
    expect(one.status).toBe(200);
    expect((one.json.streams as Json[]).map((s) => s.stream)).toEqual(['signins']);
    const graphCount = Number(one.json.accepted);

    consumers.push(...startWorkerConsumers(t));
    loops.push(...t.container.loops.map((l) => l.start()));
    const stored = await waitFor(
      'the samples in the event store',
      async () => {
        const n = await searchCount('');
        return n >= count + graphCount ? n : undefined;
      },
      60_000,
    );
    expect(stored).toBe(count + graphCount);
    expect(await ledgerRow(okta)).toMatchObject({
      events_in: count,
      quarantined: 0,
      pending: 0,
      delivered: count,
      unaccounted: 0,
    });
    expect(await searchCount('metadata.product.vendor_name = "Okta"')).toBe(count);
  });

  it('refuses a platform without samples, a stream without samples and an inactive integration', async () => {
    const custom = await integration(adminA, orgA, 'custom', 'no samples');
    const none = await samples(adminA, custom, 'POST');
    expect(none.status).toBe(422);
    expect(String(none.json.detail)).toContain('Platform "custom" has no built-in sample events');
    expect(String(none.json.detail)).toContain('okta');

    const okta = await integration(adminA, orgA, 'okta', 'okta stream');
    const wrong = await samples(adminA, okta, 'POST', { stream: 'signins' });
    expect(wrong.status).toBe(422);
    expect(wrong.json.detail).toBe('Stream "signins" has no sample events for platform okta; its streams: system_log');

    const off = await http(base, 'PUT', `/api/integrations/${okta}`, { is_active: false }, adminA.headers);
    expect(off.status).toBe(200);
    const inactive = await samples(adminA, okta, 'POST');
    expect(inactive.status).toBe(409);
    expect(String(inactive.json.detail)).toContain('not active');
  });

  it("needs integration.write to send, and answers 404 for another organization's integration", async () => {
    const okta = await integration(adminA, orgA, 'okta', 'okta scope');
    expect((await samples(viewerA, okta, 'POST')).status).toBe(403);
    const foreign = await integration(root, orgB, 'okta', 'okta of B');
    for (const method of ['GET', 'POST'] as const) {
      const res = await samples(adminA, foreign, method);
      expect(res.status).toBe(404);
      expect(res.json.detail).toBe('Integration not found');
    }
    expect(await ledgerRow(foreign)).toBeUndefined();
  });
});

/** Events of organization A's event store that match the query, any time in the last ten years. */
async function searchCount(query: string): Promise<number> {
  const res = await http(
    base,
    'POST',
    '/api/search',
    {
      query: { organization_id: orgA, query, time: { last: '3650d' }, limit: 0, aggregations: [{ type: 'count' }] },
      wait_ms: 30_000,
    },
    adminA.headers,
  );
  expect(res.status, JSON.stringify(res.json)).toBe(200);
  return (res.json.aggregations as { value: number }[])[0]!.value;
}
