// The collectors operations over HTTP: state rows and their scoping, summary, cost summary,
// the connector catalogue, cursor reset (audited) and trigger (a real queued cycle).
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/support/app.js';
import { createOrganization, createPrincipal, type Principal } from '../../../test/support/identity.js';
import {
  FAKE_PLATFORM,
  fakeVendorConnector,
  startFakeVendor,
  type FakeVendor,
} from '../../../test/support/vendors/fake-vendor.js';
import { registerConnector } from '../../connectors/index.js';
import { NORMALIZE_QUEUE } from '../../pipeline/envelope.js';
import type { Consumer } from '../../platform/queue/port.js';
import { startConsumers } from '../../roles/jobs.js';
import { COLLECT_QUEUE } from './index.js';

registerConnector(fakeVendorConnector);

let t: TestApp;
let consumers: Consumer[] = [];
let vendor: FakeVendor;
let orgA: number;
let orgB: number;
let adminA: Principal;
let viewerA: Principal;
let operatorA: Principal;
let adminB: Principal;
let platformAdmin: Principal;
let integrationA: number;
let integrationB: number;
let pushA: number;
const db = () => t.container.database.db;

const STATE_FIELDS = [
  'consecutive_failures',
  'cursor_kind',
  'cycles_skipped_locked',
  'gap',
  'integration_id',
  'integration_name',
  'lag_seconds',
  'last_error',
  'last_run_capped',
  'last_success_at',
  'next_run_at',
  'organization_id',
  'paused_reason',
  'platform',
  'stream',
  'watermark_at',
];

async function createIntegration(
  admin: Principal,
  orgId: number,
  name: string,
  platform: string,
  config: Record<string, unknown>,
): Promise<number> {
  const res = await t.app.inject({
    method: 'POST',
    url: '/api/integrations/',
    headers: admin.headers,
    payload: { name, platform, organization_id: orgId, config },
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json<{ id: number }>().id;
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const get = (url: string, p: Principal) => t.app.inject({ method: 'GET', url, headers: p.headers });

beforeAll(async () => {
  vendor = await startFakeVendor();
  t = await createTestApp();
  consumers = startConsumers(
    t.container.queue,
    t.container.jobs.filter((j) => j.queue === COLLECT_QUEUE || j.queue === NORMALIZE_QUEUE),
    t.container.logger,
  );
  orgA = await createOrganization(t, 'Collectors A');
  orgB = await createOrganization(t, 'Collectors B');
  adminA = await createPrincipal(t, { role: 'admin', organizationId: orgA });
  viewerA = await createPrincipal(t, { role: 'viewer', organizationId: orgA });
  operatorA = await createPrincipal(t, { role: 'operator', organizationId: orgA });
  adminB = await createPrincipal(t, { role: 'admin', organizationId: orgB });
  platformAdmin = await createPrincipal(t, { role: 'admin', organizationId: null });
  integrationA = await createIntegration(adminA, orgA, 'vendor A', FAKE_PLATFORM, vendor.config());
  integrationB = await createIntegration(adminB, orgB, 'vendor B', FAKE_PLATFORM, vendor.config());
  pushA = await createIntegration(adminA, orgA, 'push A', 'custom', {});
  vendor.addEvents('events', 12);
  vendor.addEvents('alerts', 5);
  for (const id of [integrationA, integrationB]) {
    for (const stream of ['events', 'alerts'])
      expect(await t.container.collection.engine.runCycle(id, stream)).toMatchObject({ status: 'succeeded' });
  }
});
afterAll(async () => {
  await Promise.all(consumers.map((c) => c.close()));
  await t?.close();
  await vendor?.close();
});

describe('GET /api/collectors/state', () => {
  it('answers the rows of your organizations only, with the spec fields and lag from the watermark', async () => {
    const res = await get('/api/collectors/state', viewerA);
    expect(res.statusCode).toBe(200);
    const rows = res.json<Record<string, unknown>[]>();
    expect(rows.map((r) => [r.integration_id, r.stream])).toEqual([
      [integrationA, 'alerts'],
      [integrationA, 'events'],
    ]);
    for (const r of rows) expect(Object.keys(r).sort()).toEqual(STATE_FIELDS);
    const events = rows.find((r) => r.stream === 'events')!;
    expect(events).toMatchObject({
      integration_name: 'vendor A',
      organization_id: orgA,
      platform: FAKE_PLATFORM,
      cursor_kind: 'date',
      consecutive_failures: 0,
      last_run_capped: false,
      last_error: null,
      gap: null,
    });
    expect(events.lag_seconds).toBeLessThan(60);
    expect(String(events.watermark_at)).toMatch(/Z$/);
    expect(rows.find((r) => r.stream === 'alerts')).toMatchObject({
      cursor_kind: 'opaque',
      watermark_at: null,
      lag_seconds: null,
    });
  });

  it('filters by organization, integration and platform; a platform admin sees every organization', async () => {
    const all = (await get('/api/collectors/state', platformAdmin)).json<{ integration_id: number }[]>();
    expect(new Set(all.map((r) => r.integration_id))).toEqual(new Set([integrationA, integrationB]));
    expect(
      (await get(`/api/collectors/state?org_id=${orgB}`, platformAdmin))
        .json<{ integration_id: number }[]>()
        .map((r) => r.integration_id),
    ).toEqual([integrationB, integrationB]);
    expect((await get(`/api/collectors/state?integration_id=${integrationB}`, adminA)).json()).toEqual([]);
    expect((await get('/api/collectors/state?platform=okta', platformAdmin)).json()).toEqual([]);
    expect((await get('/api/collectors/state?bogus=1', adminA)).statusCode).toBe(422);
  });
});

describe('DELETE /api/collectors/state/{integration_id}/{stream}/cursor', () => {
  it('restarts the stream at the default window, audited; what it collects again is dropped as duplicates', async () => {
    const res = await t.app.inject({
      method: 'DELETE',
      url: `/api/collectors/state/${integrationA}/events/cursor`,
      headers: operatorA.headers,
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({
      integration_id: integrationA,
      stream: 'events',
      watermark_at: null,
      lag_seconds: null,
    });
    const state = await t.container.collection.engine.getState(integrationA, 'events');
    expect(state).toMatchObject({ cursor: null, watermark_at: null });
    expect(state!.reset_at).not.toBeNull();
    const audit = await db()
      .selectFrom('audit_log')
      .selectAll()
      .where('operation_id', '=', 'collectors.reset_cursor')
      .executeTakeFirstOrThrow();
    expect(audit).toMatchObject({
      outcome: 'success',
      organization_id: orgA,
      target_type: 'collector_state',
      target_id: `${integrationA}/events`,
    });

    expect(await t.container.collection.engine.runCycle(integrationA, 'events')).toMatchObject({
      status: 'succeeded',
      events: 12,
    });
    const counters = await until('the duplicates counted', async () => {
      const row = await db()
        .selectFrom('stream_counters')
        .select([sql<number>`sum(events_in)::int`.as('events_in'), sql<number>`sum(duplicates)::int`.as('duplicates')])
        .where('integration_id', '=', integrationA)
        .where('stream', '=', 'events')
        .executeTakeFirstOrThrow();
      return Number(row.duplicates) >= 12 ? row : undefined;
    });
    expect(counters).toEqual({ events_in: 12, duplicates: 12 });
  });

  it('needs integration.reset, and answers 404 outside your scope or for an unknown stream', async () => {
    expect(
      (
        await t.app.inject({
          method: 'DELETE',
          url: `/api/collectors/state/${integrationA}/events/cursor`,
          headers: viewerA.headers,
        })
      ).statusCode,
    ).toBe(403);
    expect(
      (
        await t.app.inject({
          method: 'DELETE',
          url: `/api/collectors/state/${integrationB}/events/cursor`,
          headers: adminA.headers,
        })
      ).statusCode,
    ).toBe(404);
    const unknown = await t.app.inject({
      method: 'DELETE',
      url: `/api/collectors/state/${integrationA}/nope/cursor`,
      headers: adminA.headers,
    });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toMatchObject({ error: { code: 'collection.unknown_stream' } });
    expect(typeof unknown.json().detail).toBe('string');
    expect((await t.container.collection.engine.getState(integrationB, 'events'))!.watermark_at).not.toBeNull();
  });
});

describe('POST /api/collectors/state/{integration_id}/{stream}/trigger', () => {
  it('queues a cycle for any authenticated caller in scope and answers its task id', async () => {
    vendor.addEvents('alerts', 3);
    const res = await t.app.inject({
      method: 'POST',
      url: `/api/collectors/state/${integrationA}/alerts/trigger`,
      headers: viewerA.headers,
    });
    expect(res.statusCode, res.body).toBe(202);
    const body = res.json<{ task_id: string }>();
    expect(body).toEqual({
      task_id: expect.any(String),
      integration_id: integrationA,
      stream: 'alerts',
      status: 'queued',
    });
    const run = await until('the triggered run', async () => {
      const r = await t.container.collection.engine.getRun(body.task_id);
      return r && r.status !== 'queued' && r.status !== 'running' ? r : undefined;
    });
    expect(run).toMatchObject({ status: 'succeeded', reason: 'trigger', requested_by: viewerA.id, events: 3 });
    const audit = await db()
      .selectFrom('audit_log')
      .selectAll()
      .where('operation_id', '=', 'collectors.trigger')
      .executeTakeFirstOrThrow();
    expect(audit).toMatchObject({ outcome: 'success', status: 202, organization_id: orgA });
  });

  it('answers 422 when the integration does not collect, 404 outside scope or for an unknown stream', async () => {
    const push = await t.app.inject({
      method: 'POST',
      url: `/api/collectors/state/${pushA}/events/trigger`,
      headers: adminA.headers,
    });
    expect(push.statusCode).toBe(422);
    expect(push.json()).toMatchObject({ error: { code: 'collection.not_collectable' } });
    await db()
      .updateTable('integrations')
      .set({ config: JSON.stringify({ ...vendor.config(), collect: false }) })
      .where('id', '=', integrationA)
      .execute();
    try {
      expect(
        (
          await t.app.inject({
            method: 'POST',
            url: `/api/collectors/state/${integrationA}/events/trigger`,
            headers: adminA.headers,
          })
        ).statusCode,
      ).toBe(422);
    } finally {
      await db()
        .updateTable('integrations')
        .set({ config: JSON.stringify(vendor.config()) })
        .where('id', '=', integrationA)
        .execute();
    }
    expect(
      (
        await t.app.inject({
          method: 'POST',
          url: `/api/collectors/state/${integrationB}/events/trigger`,
          headers: adminA.headers,
        })
      ).statusCode,
    ).toBe(404);
    expect(
      (
        await t.app.inject({
          method: 'POST',
          url: `/api/collectors/state/${integrationA}/nope/trigger`,
          headers: adminA.headers,
        })
      ).statusCode,
    ).toBe(404);
    expect(
      (await t.app.inject({ method: 'POST', url: `/api/collectors/state/${integrationA}/events/trigger` })).statusCode,
    ).toBe(401);
  });
});

describe('summary, cost summary and the connector catalogue', () => {
  it('summarizes the streams in scope: failing, capped, gaps', async () => {
    const now = Date.now();
    await db()
      .updateTable('collector_state')
      .set({
        gap_from: new Date(now - 10 * 86_400_000),
        gap_to: new Date(now - 7 * 86_400_000),
        gap_detected_at: new Date(now),
      })
      .where('integration_id', '=', integrationA)
      .where('stream', '=', 'events')
      .execute();
    await db()
      .updateTable('collector_state')
      .set({ consecutive_failures: 2, last_error: 'HTTP 503' })
      .where('integration_id', '=', integrationA)
      .where('stream', '=', 'alerts')
      .execute();
    const res = await get('/api/collectors/summary', viewerA);
    expect(res.statusCode).toBe(200);
    const summary = res.json<Record<string, unknown>>();
    expect(summary).toMatchObject({
      integrations: 1,
      streams: 2,
      failing: 1,
      healthy: 1,
      never_run: 0,
      platforms: [{ platform: FAKE_PLATFORM, streams: 2, failing: 1 }],
    });
    expect(summary.gaps).toEqual([expect.objectContaining({ integration_id: integrationA, stream: 'events' })]);
    expect((await get('/api/collectors/summary', adminB)).json()).toMatchObject({
      integrations: 1,
      failing: 0,
      gaps: [],
    });
  });

  it('reports events, bytes and vendor requests per integration and UTC day', async () => {
    const res = await get('/api/collectors/cost-summary', adminA);
    expect(res.statusCode).toBe(200);
    const body = res.json<{
      days: number;
      items: { integration_id: number; day: string; events: number; bytes: number; requests: number }[];
    }>();
    expect(body.days).toBe(7);
    const today = body.items.find(
      (i) => i.integration_id === integrationA && i.day === new Date().toISOString().slice(0, 10),
    )!;
    expect(today.events).toBeGreaterThanOrEqual(17);
    expect(today.bytes).toBeGreaterThan(0);
    expect(today.requests).toBeGreaterThanOrEqual(3);
    expect(body.items.every((i) => i.integration_id !== integrationB)).toBe(true);
    expect((await get('/api/collectors/cost-summary?days=90', adminA)).statusCode).toBe(200);
    expect((await get('/api/collectors/cost-summary?days=91', adminA)).statusCode).toBe(422);
    expect((await get('/api/collectors/cost-summary?days=0', adminA)).statusCode).toBe(422);
  });

  it('lists the platforms with their streams, and the vendors', async () => {
    const platforms = (await get('/api/collectors/platforms-streams', viewerA)).json<
      { platform: string; streams: { name: string; cursor_kind: string; retention_days: number }[] }[]
    >();
    expect(platforms.find((p) => p.platform === FAKE_PLATFORM)?.streams).toEqual([
      expect.objectContaining({ name: 'events', cursor_kind: 'date', retention_days: 7, default_window_seconds: 3600 }),
      expect.objectContaining({ name: 'alerts', cursor_kind: 'opaque' }),
    ]);
    const vendors = (await get('/api/collectors/vendors', viewerA)).json<Record<string, unknown>[]>();
    expect(vendors.find((v) => v.vendor === 'Test Vendor Inc.')).toEqual({
      vendor: 'Test Vendor Inc.',
      platforms: [FAKE_PLATFORM],
      auth: ['bearer_token'],
      cursor_kinds: ['date', 'opaque'],
      tenant_discovery: false,
      backfill: true,
    });
  });
});
