import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/support/app.js';
import {
  createOrganization,
  createPrincipal,
  type Principal,
  injectAs,
  insertDestination,
} from '../../../test/support/identity.js';
import { newId } from '../../core/ids.js';
import { windowStart } from './flow.js';

let t: TestApp;
let orgA: number;
let orgB: number;
let adminA: Principal;
let adminB: Principal;
let viewerA: Principal;
let root: Principal;
let destA: string;
let destOff: string;
let destB: string;
let destGlobal: string;
let intCustom: number;
let intGithub: number;
let intB: number;

type Json = Record<string, unknown>;
const BASE = '/api/collectors/routes';
const HOUR = 3_600_000;

const call = (who: Principal, method: 'GET' | 'POST' | 'PUT', url: string, payload?: unknown) =>
  injectAs(t, who, method, url, payload);

const db = () => t.container.database.db;

const destination = (organizationId: number | null, name: string, enabled = true) =>
  insertDestination(t, organizationId, name, { enabled });

async function integration(organizationId: number, name: string, platform: string): Promise<number> {
  const row = await db()
    .insertInto('integrations')
    .values({ organization_id: organizationId, name, platform, config: '{}' })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

async function create(who: Principal, body: Json): Promise<string> {
  const res = await call(who, 'POST', BASE, body);
  expect(res.statusCode, res.body).toBe(201);
  return res.json<Json>().id as string;
}

const today = () => new Date().toISOString().slice(0, 10);
const thisHour = () => windowStart(new Date(), 1);

beforeAll(async () => {
  t = await createTestApp({ env: { WEIR_TOKEN_RATE_LIMIT: '1000000' } });
  orgA = await createOrganization(t, 'Org A');
  orgB = await createOrganization(t, 'Org B');
  root = await createPrincipal(t, { role: 'admin' });
  adminA = await createPrincipal(t, { role: 'admin', organizationId: orgA });
  adminB = await createPrincipal(t, { role: 'admin', organizationId: orgB });
  viewerA = await createPrincipal(t, { role: 'viewer', organizationId: orgA });
  destA = await destination(orgA, 'siem');
  destOff = await destination(orgA, 'off', false);
  destB = await destination(orgB, 'siem-b');
  destGlobal = await destination(null, 'shared');
  intCustom = await integration(orgA, 'push', 'custom');
  intGithub = await integration(orgA, 'gh', 'github');
  intB = await integration(orgB, 'push-b', 'custom');
});
afterAll(async () => t?.close());
beforeEach(async () => {
  await db().deleteFrom('routes').execute();
});

describe('dry run', () => {
  it('fans out through the saved routes and shows what each destination receives', async () => {
    const lake = await create(adminA, { name: 'all to shared', final: false, destination_ids: [destGlobal] });
    const auth = await create(adminA, {
      name: 'auth to siem',
      condition: { field: 'class_uid', op: 'eq', value: 3002 },
      transforms: [{ type: 'drop_fields', fields: ['raw_data'] }],
      destination_ids: [destA, destGlobal],
    });
    await create(adminA, { name: 'disabled', enabled: false, destination_ids: [destA] });
    const res = await call(adminA, 'POST', `${BASE}/dry-run`, {
      events: [
        { class_uid: 3002, raw_data: 'x' },
        { ocsf: { class_uid: 4001 }, id: 'e2', integration_id: intCustom, stream: 'events' },
      ],
    });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json<{ source: string; routes: Json[]; destinations: Json[]; results: Json[]; totals: Json }>();
    expect(body.source).toBe('saved');
    expect(body.routes.map((r) => r.id)).toEqual([lake, auth]);
    expect(body.results[0]).toMatchObject({
      index: 0,
      routes: [lake, auth],
      copies: [
        { destination_id: destGlobal, route_id: lake, event: { class_uid: 3002, raw_data: 'x' } },
        { destination_id: destA, route_id: auth, event: { class_uid: 3002 } },
      ],
    });
    expect(body.results[1]).toMatchObject({
      id: 'e2',
      routes: [lake],
      copies: [{ destination_id: destGlobal, route_id: lake }],
    });
    expect(body.totals).toEqual({
      events: 2,
      routed: 2,
      copies: 3,
      filtered: { no_route: 0, sampled_out: 0, dropped_by_route: 0, destination_disabled: 0 },
      matched: { [lake]: 2, [auth]: 1 },
      sampled_out: { [lake]: 0, [auth]: 0 },
      per_destination: { [destGlobal]: 2, [destA]: 1 },
    });
    // Nothing was written.
    expect(await db().selectFrom('route_stats').selectAll().execute()).toEqual([]);
  });

  it('tries draft routes; flags destinations that would not receive; refuses invalid drafts with paths', async () => {
    const res = await call(adminA, 'POST', `${BASE}/dry-run`, {
      events: [{ ocsf: { severity_id: 5 }, integration_id: 7 }, { severity_id: 1 }],
      routes: [
        {
          id: 'hi',
          condition: {
            all: [
              { field: 'severity_id', op: 'gte', value: 4 },
              { field: 'envelope.integration_id', op: 'eq', value: 7 },
            ],
          },
          destination_ids: [destOff, destB],
        },
        { id: 'drop', destination_ids: [] },
      ],
    });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json<{ source: string; destinations: Json[]; results: Json[]; totals: { filtered: Json } }>();
    expect(body.source).toBe('draft');
    expect(body.destinations).toEqual([
      { id: destOff, name: 'off', known: true, enabled: false, would_receive: false },
      { id: destB, name: null, known: false, enabled: false, would_receive: false },
    ]);
    expect(body.results.map((r) => r.filtered)).toEqual(['destination_disabled', 'dropped_by_route']);
    expect(body.totals.filtered).toEqual({ no_route: 0, sampled_out: 0, dropped_by_route: 1, destination_disabled: 1 });

    const bad = await call(adminA, 'POST', `${BASE}/dry-run`, {
      events: [{}],
      routes: [{ id: 'ok' }, { condition: { field: 'src_endpoint.ip', op: 'cidr', value: 'nope' } }],
    });
    expect(bad.statusCode).toBe(422);
    expect(
      bad.json<{ error: { code: string; details: { errors: { path: string }[] } } }>().error.details.errors[0]!.path,
    ).toBe('routes[1].condition.value');
    const badEvent = await call(adminA, 'POST', `${BASE}/dry-run`, { events: [{ ocsf: {}, stream: 5 }] });
    expect(badEvent.statusCode).toBe(422);
    expect(badEvent.json<Json>().detail).toMatch(/events\/0\/stream/);
  });

  it('samples by the event id, deterministically', async () => {
    const events = Array.from({ length: 400 }, (_, i) => ({ ocsf: { n: i }, id: `event-${i}` }));
    const body = {
      events,
      routes: [{ id: 's', transforms: [{ type: 'sample', rate: 0.25 }], destination_ids: [destA] }],
    };
    const first = (await call(adminA, 'POST', `${BASE}/dry-run`, body)).json<{
      totals: { copies: number; filtered: Json; sampled_out: Json };
    }>();
    const second = (await call(adminA, 'POST', `${BASE}/dry-run`, body)).json<{ totals: { copies: number } }>();
    expect(first.totals.copies).toBe(second.totals.copies);
    expect(first.totals.copies).toBeGreaterThan(60);
    expect(first.totals.copies).toBeLessThan(140);
    expect(first.totals.filtered.sampled_out).toBe(400 - first.totals.copies);
  });

  it('needs user.manage, and an organization from a platform caller', async () => {
    expect((await call(viewerA, 'POST', `${BASE}/dry-run`, { events: [{}] })).statusCode).toBe(403);
    expect((await call(root, 'POST', `${BASE}/dry-run`, { events: [{}] })).statusCode).toBe(422);
    const ok = await call(root, 'POST', `${BASE}/dry-run`, { organization_id: orgB, events: [{}] });
    expect(ok.json<{ results: Json[] }>().results[0]!.filtered).toBe('no_route');
  });
});

describe('topology and flow', () => {
  beforeEach(async () => {
    await db().deleteFrom('stream_counters').execute();
    await db().deleteFrom('route_stats').execute();
    await db().deleteFrom('destination_stats').execute();
    await db().deleteFrom('ledger').execute();
    await db().deleteFrom('mapping_definitions').where('organization_id', 'is not', null).execute();
    const counters = (
      organization_id: number,
      integration_id: number,
      stream: string,
      events_in: number,
      quarantined: number,
    ) => ({
      organization_id,
      integration_id,
      stream,
      day: today(),
      events_in,
      bytes_in: 0,
      normalized: events_in - quarantined,
      flagged: 0,
      quarantined,
    });
    await db()
      .insertInto('stream_counters')
      .values([
        counters(orgA, intCustom, 'events', 10, 2),
        counters(orgA, intGithub, 'audit_log', 5, 0),
        counters(orgB, intB, 'events', 7, 0),
      ])
      .execute();
    await db()
      .insertInto('mapping_definitions')
      .values({ id: newId(), organization_id: orgA, platform: 'custom', stream: 'events', name: 'My custom events' })
      .execute();
  });

  it('topology: integrations → mappings → enabled routes → destinations, scoped', async () => {
    const r1 = await create(adminA, { name: 'r1', final: false, destination_ids: [destA, destGlobal] });
    const r2 = await create(adminA, { name: 'r2', enabled: false, destination_ids: [destOff] });
    await create(adminB, { name: 'rb', destination_ids: [destB] });
    const res = await call(viewerA, 'GET', `${BASE}/topology`);
    expect(res.statusCode, res.body).toBe(200);
    const { nodes, edges } = res.json<{ nodes: Json[]; edges: { from: string; to: string }[] }>();
    const byKind = (k: string) => nodes.filter((n) => n.kind === k).map((n) => [n.label, n.status]);
    expect(byKind('integration')).toEqual([
      ['push', 'active'],
      ['gh', 'active'],
    ]);
    expect(byKind('mapping').sort()).toEqual(
      [
        ['My custom events', 'no_live_version'],
        [expect.any(String), 'live'],
      ].sort(),
    );
    expect(byKind('route')).toEqual([
      ['r1', 'enabled'],
      ['r2', 'disabled'],
    ]);
    expect(byKind('destination').sort()).toEqual([
      ['off', 'disabled'],
      ['shared', 'enabled'],
      ['siem', 'enabled'],
    ]);
    expect(nodes.some((n) => n.label === 'siem-b' || n.label === 'push-b')).toBe(false);
    const mappingIds = nodes.filter((n) => n.kind === 'mapping').map((n) => n.id as string);
    expect(edges).toContainEqual({
      from: `integration:${intCustom}`,
      to: mappingIds.find((id) => !id.includes('unmapped'))!,
    });
    for (const m of mappingIds) expect(edges).toContainEqual({ from: m, to: `route:${r1}` });
    expect(edges.some((e) => e.to === `route:${r2}`)).toBe(false);
    expect(edges).toContainEqual({ from: `route:${r1}`, to: `destination:${destGlobal}` });
    expect(edges).toContainEqual({ from: `route:${r2}`, to: `destination:${destOff}` });
  });

  it('flow: the same graph with counters over the window', async () => {
    const r1 = await create(adminA, { name: 'r1', destination_ids: [destGlobal] });
    const hour = thisHour();
    await db()
      .insertInto('route_stats')
      .values({ route_id: r1, organization_id: orgA, hour, matched: 8, sampled_out: 1, copies: 7 })
      .execute();
    await db()
      .insertInto('route_stats')
      .values({
        route_id: r1,
        organization_id: orgA,
        hour: new Date(hour.getTime() - 30 * HOUR),
        matched: 100,
        sampled_out: 0,
        copies: 0,
      })
      .execute();
    await db()
      .insertInto('destination_stats')
      .values({ destination_id: destGlobal, hour, delivered: 50, requests: 5, failed_requests: 2 })
      .execute();
    const ledger = (organization_id: number, outcome: string, count: number, destination_id = '', reason = '') => ({
      organization_id,
      integration_id: organization_id === orgA ? intCustom : intB,
      stream: 'events',
      day: today(),
      outcome,
      destination_id,
      reason,
      count,
    });
    await db()
      .insertInto('ledger')
      .values([
        ledger(orgA, 'delivered', 7, destGlobal),
        ledger(orgB, 'delivered', 43, destGlobal),
        ledger(orgA, 'filtered', 1, '', 'no_route'),
        ledger(orgA, 'dead_lettered', 2, destGlobal, 'rejected'),
      ])
      .execute();
    const res = await call(viewerA, 'GET', `${BASE}/flow?hours=6`);
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json<{ window_hours: number; nodes: Json[]; totals: Json }>();
    expect(body.window_hours).toBe(6);
    const node = (id: string) => body.nodes.find((n) => n.id === id)!;
    expect(node(`integration:${intCustom}`).counters).toEqual({
      events_in: 10,
      normalized: 8,
      quarantined: 2,
      reprocessed: 0,
    });
    expect(node(`route:${r1}`).counters).toEqual({ matched: 8, sampled_out: 1 });
    // A global destination shows only this organization's deliveries to an organization caller.
    expect(node(`destination:${destGlobal}`).counters).toEqual({
      copies: 0,
      delivered: 7,
      dead_lettered: 2,
      dropped: 0,
    });
    expect(body.totals).toEqual({
      events_in: 15,
      findings: 0,
      quarantined: 2,
      reprocessed: 0,
      filtered: { no_route: 1 },
      routed: 0,
      copies: 0,
      delivered: 7,
      dead_lettered: 2,
      dlq_reprocessed: 0,
      dropped: 0,
    });
    const platform = (await call(root, 'GET', `${BASE}/flow`)).json<{ nodes: Json[] }>();
    expect(platform.nodes.find((n) => n.id === `destination:${destGlobal}`)!.counters).toEqual({
      copies: 0,
      delivered: 50,
      dead_lettered: 2,
      dropped: 0,
      failed_requests: 2,
    });
    expect((await call(viewerA, 'GET', `${BASE}/flow?hours=169`)).statusCode).toBe(422);
  });
});

describe('health and metrics', () => {
  beforeEach(async () => {
    await db().deleteFrom('route_stats').execute();
    await db().deleteFrom('dlq_events').execute();
    await db().deleteFrom('destination_state').execute();
  });

  it('idle when nothing matched (not unhealthy); disabled; unhealthy; degraded; healthy', async () => {
    const id = await create(adminA, { name: 'h', destination_ids: [destA] });
    const health = async () => (await call(viewerA, 'GET', `${BASE}/${id}/health`)).json<Json>();
    expect(await health()).toEqual({
      route_id: id,
      status: 'idle',
      matched: 0,
      sampled_out: 0,
      window_hours: 24,
      destinations: [{ id: destA, name: 'siem', enabled: true, breaker_state: 'closed', dlq_count: 0 }],
    });
    await db()
      .insertInto('route_stats')
      .values({ route_id: id, organization_id: orgA, hour: thisHour(), matched: 3, sampled_out: 0, copies: 3 })
      .execute();
    expect((await health()).status).toBe('healthy');
    const dlq = {
      id: newId(),
      destination_id: destA,
      organization_id: orgA,
      integration_id: intCustom,
      stream: 'events',
      event_id: 'e',
      delivery_batch_id: 'b',
      event: '{}',
      error_kind: 'rejected',
      reason: 'x',
      attempts: 1,
    };
    await db().insertInto('dlq_events').values(dlq).execute();
    expect(await health()).toMatchObject({ status: 'degraded', destinations: [{ dlq_count: 1 }] });
    await db().insertInto('destination_state').values({ destination_id: destA, breaker_state: 'open' }).execute();
    expect(await health()).toMatchObject({ status: 'unhealthy', destinations: [{ breaker_state: 'open' }] });
    await call(adminA, 'PUT', `${BASE}/${id}`, { enabled: false });
    expect((await health()).status).toBe('disabled');
  });

  it('metrics: one point per hour of the window, zeros included', async () => {
    const id = await create(adminA, { name: 'm', destination_ids: [] });
    const hour = thisHour();
    await db()
      .insertInto('route_stats')
      .values([
        { route_id: id, organization_id: orgA, hour, matched: 5, sampled_out: 1, copies: 4 },
        {
          route_id: id,
          organization_id: orgA,
          hour: new Date(hour.getTime() - 2 * HOUR),
          matched: 2,
          sampled_out: 0,
          copies: 2,
        },
        {
          route_id: id,
          organization_id: orgA,
          hour: new Date(hour.getTime() - 5 * HOUR),
          matched: 9,
          sampled_out: 0,
          copies: 9,
        },
      ])
      .execute();
    const res = await call(viewerA, 'GET', `${BASE}/${id}/metrics?hours=3`);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual([
      { hour: new Date(hour.getTime() - 2 * HOUR).toISOString(), matched: 2, sampled_out: 0, copies: 2 },
      { hour: new Date(hour.getTime() - HOUR).toISOString(), matched: 0, sampled_out: 0, copies: 0 },
      { hour: hour.toISOString(), matched: 5, sampled_out: 1, copies: 4 },
    ]);
    expect((await call(viewerA, 'GET', `${BASE}/${id}/metrics`)).json<Json[]>()).toHaveLength(24);
    expect((await call(adminB, 'GET', `${BASE}/${id}/metrics`)).statusCode).toBe(404);
  });
});
