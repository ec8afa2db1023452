// Enrichment inside the one pass: events pushed through the worker's normalize job come out
// at the destination with GeoIP, table and feed results; a route matches on what enrichment
// added; the live series counts; an HTTP source that is down or hanging never delays
// delivery (its keys go unanswered, counted), and an answering one fills later events.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp, startWorkerConsumers } from '../../../test/support/app.js';
import { createOrganization, createPrincipal, type Principal } from '../../../test/support/identity.js';
import { loginDocument } from '../../../test/support/mappings.js';
import {
  catchAll,
  createIntegration,
  ingestBatch,
  outboxText,
  outputs,
  publishMapping,
  runNormalize,
  sleep,
} from '../../../test/support/normalization.js';
import { newId } from '../../core/ids.js';
import type { Consumer } from '../../platform/queue/port.js';

type Json = Record<string, unknown>;
const BASE = '/api/collectors/enrichment';
const REFRESH_MS = 100;

let t: TestApp;
let org: number;
let integration: number;
let admin: Principal;
let server: Server;
let serverUrl: string;
/** How the fake intel API answers: ok, down (500), hang (never). */
let mode: 'ok' | 'down' | 'hang' = 'ok';
const feedBody = '# bad hosts\n203.0.113.7\n198.51.100.0/24 ; a range\nnot-an-indicator!\n';

function login(ip: string, user: string) {
  return { type: 'login', ts: '2026-11-20T10:00:00Z', user: { name: user }, client: { ip }, host: 'vpn.example.com' };
}

async function post(url: string, payload: unknown, status = 201): Promise<Json> {
  const res = await t.app.inject({ method: 'POST', url, headers: admin.headers, payload: payload as Json });
  expect(res.statusCode, res.body).toBe(status);
  return res.json<Json>();
}

/** Pushes events through the worker's normalize job and returns what reached the destination. */
async function push(events: Json[]) {
  const batch = ingestBatch(org, integration, 'auth', events);
  const started = performance.now();
  await runNormalize(t, batch);
  const ms = performance.now() - started;
  // Once per event (a route of the first test sends US addresses to a second destination too).
  const delivered = await outputs(t, batch.id);
  return { out: delivered.filter((o, i) => delivered.findIndex((x) => x.id === o.id) === i).map((o) => o.ocsf), ms };
}

beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.url?.startsWith('/feed')) {
      res.writeHead(200, { 'content-type': 'text/plain' }).end(feedBody);
      return;
    }
    if (mode === 'hang') return; // never answers
    if (mode === 'down') return void res.writeHead(500).end('boom');
    const ip = decodeURIComponent(req.url!.split('/').pop()!);
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ verdict: ip === '8.8.4.4' ? 'benign' : 'malicious', score: 90 }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  serverUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  t = await createTestApp({ env: { WEIR_TOKEN_RATE_LIMIT: '1000000', WEIR_MAPPING_REFRESH_MS: String(REFRESH_MS) } });
  org = await createOrganization(t, 'Enriched');
  admin = await createPrincipal(t, { role: 'admin', organizationId: org });
  integration = await createIntegration(t, org);
  await publishMapping(t, org, 'custom', 'auth', loginDocument());
  await catchAll(t, org);
});
const consumers: Consumer[] = [];
afterAll(async () => {
  await Promise.all(consumers.map((c) => c.close()));
  await t?.close();
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
});

describe('enrichment in the one pass', () => {
  it('GeoIP from the shipped database and a user table reach the destination, and a route matches on them', async () => {
    const table = await post(`${BASE}/tables`, {
      name: 'staff',
      key_column: 'user',
      match: 'exact',
      rows: [{ user: 'alice', department: 'Finance' }],
    });
    await post(`${BASE}/policies`, {
      name: 'geo',
      order: 1,
      key: 'src_endpoint.ip',
      lookup: { source_id: 'builtin-geoip' },
      output: {
        fields: {
          'src_endpoint.location.country': 'country_code',
          'src_endpoint.autonomous_system.number': 'asn',
          'src_endpoint.autonomous_system.name': 'as_org',
        },
      },
    });
    await post(`${BASE}/policies`, {
      name: 'staff',
      order: 2,
      key: 'user.name',
      lookup: { table_id: table.id },
      output: { enrichment: { name: 'department', type: 'user', provider: 'hr' } },
    });
    // A route on what enrichment added: logins from US addresses also go to a second destination.
    const us = newId();
    const db = t.container.database.db;
    await db
      .insertInto('destinations')
      .values({
        id: us,
        organization_id: org,
        name: 'us-only',
        type: 'file',
        config: JSON.stringify({ path: 'us' }),
        delivery: '{}',
        disabled_reason: null,
        credential: null,
        credential_key_id: null,
        credential_updated_at: null,
        shadow_destination_id: null,
        created_by: null,
      })
      .execute();
    await db.updateTable('routes').set({ position: 2, final: false }).where('organization_id', '=', org).execute();
    await db
      .insertInto('routes')
      .values({
        id: newId(),
        organization_id: org,
        name: 'us',
        position: 1,
        condition: JSON.stringify({ field: 'src_endpoint.location.country', op: 'eq', value: 'US' }),
        transforms: '[]',
        destination_ids: JSON.stringify([us]),
        final: false,
      })
      .execute();
    await sleep(REFRESH_MS * 4);

    const batch = ingestBatch(org, integration, 'auth', [
      login('8.8.8.8', 'alice'),
      login('1.1.1.1', 'mallory'),
      login('10.1.2.3', 'alice'),
    ]);
    await runNormalize(t, batch);
    const delivered = await outputs(t, batch.id);
    const usCopies = await db
      .selectFrom('delivery_batches')
      .select(['event_count', 'event_ids'])
      .where('source_batch_id', '=', batch.id)
      .where('destination_id', '=', us)
      .execute();
    expect(usCopies.reduce((n, r) => n + r.event_count, 0)).toBe(1);
    const usIds = new Set(usCopies.flatMap((r) => r.event_ids.split(',')));
    // Every event once to the catch-all destination, the US one once more.
    const out = delivered.filter((o, i) => delivered.findIndex((x) => x.id === o.id) === i).map((o) => o.ocsf);
    expect(out).toHaveLength(3);
    expect(delivered.filter((o) => usIds.has(o.id))).toHaveLength(2);
    expect(out[0]).toMatchObject({
      src_endpoint: { ip: '8.8.8.8', location: { country: 'US' }, autonomous_system: { number: 15169 } },
    });
    expect(String((out[0]!.src_endpoint as Json & { autonomous_system: Json }).autonomous_system.name)).toMatch(
      /google/i,
    );
    expect(out[0]!.enrichments).toEqual([
      {
        name: 'department',
        value: 'alice',
        type: 'user',
        provider: 'hr',
        data: { user: 'alice', department: 'Finance' },
      },
    ]);
    expect(out[1]).toMatchObject({ src_endpoint: { autonomous_system: { number: 13335 } } });
    expect(out[1]!.enrichments).toBeUndefined();
    expect((out[2]!.src_endpoint as Json).location).toBeUndefined(); // a private address: no GeoIP answer

    const metrics = await t.app.inject({
      method: 'GET',
      url: `${BASE}/metrics?window_minutes=10`,
      headers: admin.headers,
    });
    const byName = new Map((metrics.json().policies as Json[]).map((p) => [p.policy_id, p]));
    // geo: 8.8.8.8 and 1.1.1.1 (10.1.2.3 is private); staff: alice twice.
    expect([...byName.values()].map((p) => [p.seen, p.hits, p.misses])).toEqual([
      [3, 2, 1],
      [3, 2, 1],
    ]);
  });

  it('an HTTP source that is down or hangs never delays delivery; its answers fill later events', async () => {
    const source = await post(`${BASE}/sources`, {
      name: 'intel',
      kind: 'http',
      config: { url_template: `${serverUrl}/ip/{key}`, timeout_ms: 5_000, cache_ttl_seconds: 600 },
    });
    await post(`${BASE}/policies`, {
      name: 'intel',
      order: 3,
      key: 'src_endpoint.ip',
      lookup: { source_id: source.id },
      output: { enrichment: { name: 'intel', type: 'reputation' } },
    });
    await sleep(REFRESH_MS * 4);
    const baseline = (await push([login('9.9.9.9', 'bob')])).ms;
    mode = 'hang';
    const hung = await push([login('8.8.4.4', 'bob'), login('4.4.4.4', 'bob')]);
    mode = 'down';
    const down = await push([login('4.2.2.2', 'bob')]);
    // Delivered at once, without the answer (the source's timeout is 5 s).
    expect(hung.out).toHaveLength(2);
    expect(hung.out[0]!.enrichments).toBeUndefined();
    expect(down.out).toHaveLength(1);
    expect(hung.ms).toBeLessThan(baseline + 2_000);
    expect(down.ms).toBeLessThan(baseline + 2_000);
    console.log(
      `end-to-end normalize+route: baseline ${baseline.toFixed(0)} ms, source hanging ${hung.ms.toFixed(0)} ms, source down ${down.ms.toFixed(0)} ms`,
    );

    mode = 'ok';
    await push([login('8.8.4.4', 'carol')]); // asks again (the hang was not cached)
    let later: Json[] = [];
    for (let i = 0; i < 50; i++) {
      await sleep(100);
      later = (await push([login('8.8.4.4', 'carol')])).out;
      if (later[0]?.enrichments) break;
    }
    expect(later[0]!.enrichments).toEqual([
      expect.objectContaining({
        name: 'intel',
        type: 'reputation',
        value: '8.8.4.4',
        data: { verdict: 'benign', score: 90 },
      }),
    ]);
    const metrics = await t.app.inject({
      method: 'GET',
      url: `${BASE}/metrics?policy_id=${await policyId('intel')}`,
      headers: admin.headers,
    });
    expect(metrics.json().policies[0].unanswered).toBeGreaterThanOrEqual(3);
    // The source's health: its calls and last error, as any process sees them.
    const listed = await t.app.inject({ method: 'GET', url: `${BASE}/sources`, headers: admin.headers });
    const intel = (listed.json() as Json[]).find((x) => x.id === source.id)!;
    expect(intel.status).toMatchObject({ calls: { requests: expect.any(Number) } });
    expect(((intel.status as Json).calls as Json).errors).toBeGreaterThanOrEqual(1);
  });

  it('an indicator feed is fetched into a table version a policy uses; a failed fetch shows in status and activity', async () => {
    const feed = await post(`${BASE}/sources`, {
      name: 'blocklist',
      kind: 'feed',
      config: { url: `${serverUrl}/feed`, format: 'lines', interval_minutes: 60 },
    });
    expect(await t.container.enrichment.feeds.runDue()).toBeGreaterThanOrEqual(1);
    const table = await t.app.inject({
      method: 'GET',
      url: `${BASE}/tables/${feed.table_id as string}`,
      headers: admin.headers,
    });
    expect(table.json()).toMatchObject({ match: 'cidr', row_count: 2, version: 2 });
    await post(`${BASE}/policies`, {
      name: 'blocklist',
      order: 4,
      key: 'src_endpoint.ip',
      lookup: { source_id: feed.id },
      output: { enrichment: { name: 'blocklist', type: 'indicator' } },
    });
    await sleep(REFRESH_MS * 4);
    const { out } = await push([login('198.51.100.9', 'dan')]);
    expect((out[0]!.enrichments as Json[]).find((e) => e.name === 'blocklist')).toMatchObject({
      value: '198.51.100.9',
      data: { indicator: '198.51.100.0/24', type: 'cidr' },
    });

    await t.container.database.db
      .updateTable('enrichment_sources')
      .set({ next_fetch_at: new Date(0), config: JSON.stringify({ url: 'http://127.0.0.1:9/feed', format: 'lines' }) })
      .where('id', '=', feed.id as string)
      .execute();
    await t.container.enrichment.feeds.runDue();
    const sources = await t.app.inject({ method: 'GET', url: `${BASE}/sources`, headers: admin.headers });
    const status = (sources.json() as Json[]).find((s) => s.id === feed.id)!.status as Json;
    expect(status).toMatchObject({ last_fetch_status: 'error', rows: 2 });
    const activity = await t.app.inject({ method: 'GET', url: `${BASE}/activity`, headers: admin.headers });
    expect((activity.json().items as Json[]).map((i) => i.kind)).toContain('source.fetch_failed');
  });
});

async function policyId(name: string): Promise<string> {
  const row = await t.container.database.db
    .selectFrom('enrichment_policies')
    .select('id')
    .where('organization_id', '=', org)
    .where('name', '=', name)
    .executeTakeFirstOrThrow();
  return row.id;
}

describe('end to end from push', () => {
  it("events pushed over HTTP reach the destination with the shipped GeoIP's country and autonomous system", async () => {
    const token = await post(`/api/ingest/integrations/${integration}/token`, {});
    const lines = [
      login('8.8.8.8', 'push-1'),
      login('2001:4860:4860::8888', 'push-2'),
      login('193.0.6.139', 'push-3'),
    ].map((e) => JSON.stringify(e));
    const since = new Date();
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/ingest/auth',
      headers: { authorization: `Bearer ${String(token.token)}` },
      payload: lines.join('\n'),
    });
    expect(res.statusCode, res.body).toBe(200);
    consumers.push(...startWorkerConsumers(t));
    const db = t.container.database.db;
    let events: Json[] = [];
    for (let i = 0; i < 100 && events.length < 3; i++) {
      await sleep(100);
      const rows = await db
        .selectFrom('delivery_batches')
        .select('events')
        .where('organization_id', '=', org)
        .where('created_at', '>=', since)
        .execute();
      events = (
        await Promise.all(
          rows.map(async (r) => (await outboxText(t, r.events)).split('\n').map((l) => JSON.parse(l) as Json)),
        )
      ).flat();
      events = events.filter((e) => String((e.user as Json | undefined)?.name ?? '').startsWith('push-'));
      events = events.filter((e, j) => events.findIndex((x) => (x.user as Json).name === (e.user as Json).name) === j);
    }
    const byUser = new Map(events.map((e) => [(e.user as Json).name, e.src_endpoint as Json]));
    expect(byUser.get('push-1')).toMatchObject({ location: { country: 'US' }, autonomous_system: { number: 15169 } });
    expect(byUser.get('push-2')).toMatchObject({ location: { country: 'US' }, autonomous_system: { number: 15169 } });
    expect(byUser.get('push-3')).toMatchObject({ location: { country: 'NL' }, autonomous_system: { number: 3333 } });
  });
});
