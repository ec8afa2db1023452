// Connection tests, health, collection filters, overview and sync-status through the API,
// against the fake provider's loopback server.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/support/app.js';
import { createOrganization, createPrincipal, type Principal } from '../../../test/support/identity.js';
import {
  FAKE_API_KEY,
  fakeProviderConnector,
  startFakeProvider,
  type FakeProvider,
} from '../../../test/support/vendors/fake-provider.js';
import { registerConnector } from '../../connectors/index.js';
import { newId } from '../../core/ids.js';

let t: TestApp;
let sim: FakeProvider;
let orgA: number;
let adminA: Principal;
let adminB: Principal;
let viewerA: Principal;
let puller: number;
let push: number;

type Json = Record<string, unknown>;
const call = (who: Principal, method: 'GET' | 'POST' | 'PUT', url: string, payload?: unknown) =>
  t.app.inject({ method, url, headers: who.headers, ...(payload !== undefined ? { payload: payload as Json } : {}) });

async function createIntegration(body: Json): Promise<number> {
  const res = await call(adminA, 'POST', '/api/integrations/', {
    organization_id: orgA,
    platform: 'fake_provider',
    ...body,
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json<{ id: number }>().id;
}

beforeAll(async () => {
  sim = await startFakeProvider();
  registerConnector(fakeProviderConnector());
  t = await createTestApp({ env: { WEIR_TOKEN_RATE_LIMIT: '100000' } });
  orgA = await createOrganization(t, 'Org A');
  const orgB = await createOrganization(t, 'Org B');
  adminA = await createPrincipal(t, { role: 'admin', organizationId: orgA });
  adminB = await createPrincipal(t, { role: 'admin', organizationId: orgB });
  viewerA = await createPrincipal(t, { role: 'viewer', organizationId: orgA });
  puller = await createIntegration({ name: 'Fake pull', config: sim.config() });
  push = await createIntegration({ name: 'Firewall', platform: 'custom' });
});
afterAll(async () => {
  await t?.close();
  await sim?.close();
});

describe('POST /api/integrations/{id}/test-connection', () => {
  it('makes a real vendor call with the stored (encrypted) credentials and records the result', async () => {
    const before = sim.log.length;
    const res = await call(adminA, 'POST', `/api/integrations/${puller}/test-connection`);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({
      ok: true,
      kind: 'vendor',
      detail: 'authenticated as partner-account',
      status: null,
      error_kind: null,
    });
    expect(res.json().latency_ms).toBeGreaterThanOrEqual(0);
    expect(sim.log.slice(before)).toEqual([{ path: '/v1/whoami', customer: undefined, authorized: true }]);
  });

  it('answers 200 ok false for vendor failures, records them, and never shows the secret', async () => {
    const wrong = 'wrong-key-00aa11bb22';
    const bad = await createIntegration({ name: 'Fake wrong key', config: { ...sim.config(), api_key: wrong } });
    const res = await call(adminA, 'POST', `/api/integrations/${bad}/test-connection`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ ok: false, kind: 'vendor', status: 401, error_kind: 'auth' });
    expect(res.json().detail).toMatch(/^auth: /);
    sim.failNext(400);
    const refused = (await call(adminA, 'POST', `/api/integrations/${puller}/test-connection`)).json();
    expect(refused).toMatchObject({ ok: false, status: 400, error_kind: 'bad_request' });
    const unreachable = await createIntegration({
      name: 'Fake closed port',
      config: { ...sim.config(), base_url: 'http://127.0.0.1:9/' },
    });
    expect((await call(adminA, 'POST', `/api/integrations/${unreachable}/test-connection`)).json()).toMatchObject({
      ok: false,
      error_kind: 'unavailable',
    });
    const health = await call(viewerA, 'GET', `/api/integrations/${bad}/health`);
    expect(health.json().checks.items[0]).toMatchObject({ ok: false, status: 401 });
    const stored = await t.container.database.db.selectFrom('integration_checks').select('detail').execute();
    for (const body of [res.body, health.body, JSON.stringify(stored)]) expect(body).not.toContain(wrong);
  });

  it('checks a push-only integration for its ingestion token and received events', async () => {
    const none = (await call(adminA, 'POST', `/api/integrations/${push}/test-connection`)).json();
    expect(none).toMatchObject({ ok: false, kind: 'push', error_kind: null });
    expect(none.detail).toContain('no ingestion token');
    const token = await call(adminA, 'POST', `/api/ingest/integrations/${push}/token`);
    expect(token.statusCode, token.body).toBe(201);
    const ok = (await call(adminA, 'POST', `/api/integrations/${push}/test-connection`)).json();
    expect(ok).toMatchObject({ ok: true, kind: 'push' });
    expect(ok.detail).toContain('ingestion token configured; no event received yet');
    // collect off on a pull platform: push-only too, the vendor is not called.
    const before = sim.log.length;
    const off = await createIntegration({ name: 'Fake push', config: { collect: false } });
    expect((await call(adminA, 'POST', `/api/integrations/${off}/test-connection`)).json().kind).toBe('push');
    expect(sim.log.length).toBe(before);
  });

  it('needs integration.write and hides other organizations', async () => {
    expect((await call(viewerA, 'POST', `/api/integrations/${puller}/test-connection`)).statusCode).toBe(403);
    expect((await call(adminB, 'POST', `/api/integrations/${puller}/test-connection`)).statusCode).toBe(404);
    for (const path of ['health', 'overview', 'sync-status', 'collection-filters']) {
      expect((await call(adminB, 'GET', `/api/integrations/${puller}/${path}`)).statusCode, path).toBe(404);
    }
  });
});

describe('GET /api/integrations/{id}/health', () => {
  it('lists the checks newest first with limit and offset, and the state of every stream', async () => {
    const now = new Date();
    await t.container.database.db
      .insertInto('collector_state')
      .values({
        integration_id: puller,
        stream: 'events',
        organization_id: orgA,
        watermark_at: new Date(now.getTime() - 120_000),
        last_run_at: now,
        last_success_at: now,
        consecutive_failures: 0,
        events_total: 5,
        cycles_skipped_locked: 0,
      })
      .execute();
    const res = await call(viewerA, 'GET', `/api/integrations/${puller}/health?limit=1`);
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({
      integration_id: puller,
      check_kind: 'vendor',
      checks: { total: 2, limit: 1, offset: 0 },
    });
    expect(body.checks.items).toHaveLength(1);
    expect(body.last_check).toEqual(body.checks.items[0]);
    expect(body.last_check.ok).toBe(false); // the 400 answered last
    const older = (await call(viewerA, 'GET', `/api/integrations/${puller}/health?limit=1&offset=1`)).json();
    expect(older.checks.items[0].ok).toBe(true);
    expect(older.last_check.ok).toBe(false);
    const streams = body.streams as Json[];
    expect(streams.map((s) => [s.stream, s.status, s.enabled])).toEqual([
      ['events', 'healthy', true],
      ['alerts', 'pending', true],
    ]);
    expect(streams[0]!.lag_seconds).toBeGreaterThanOrEqual(120);
    expect(streams[1]!.lag_seconds).toBeNull();
  });
});

describe('collection filters', () => {
  it('reads the defaults, then replaces them after validation', async () => {
    expect((await call(viewerA, 'GET', `/api/integrations/${puller}/collection-filters`)).json()).toEqual({
      streams: null,
      exclude: [],
      available_streams: ['events', 'alerts'],
    });
    const filters = { streams: ['events'], exclude: [{ field: 'type', op: 'eq', value: 'system.heartbeat' }] };
    const res = await call(adminA, 'PUT', `/api/integrations/${puller}/collection-filters`, filters);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ ...filters, available_streams: ['events', 'alerts'] });
    expect((await call(viewerA, 'GET', `/api/integrations/${puller}/collection-filters`)).json()).toMatchObject(
      filters,
    );
    // The excluded stream now reads disabled.
    const streams = (await call(viewerA, 'GET', `/api/integrations/${puller}/health`)).json().streams as Json[];
    expect(streams.map((s) => [s.stream, s.status])).toEqual([
      ['events', 'healthy'],
      ['alerts', 'disabled'],
    ]);
    const audit = await t.container.database.db
      .selectFrom('audit_log')
      .select(['outcome'])
      .where('operation_id', '=', 'integrations.set_collection_filters')
      .execute();
    expect(audit.map((a) => a.outcome)).toEqual(['success']);
  });

  it('answers 422 with the location of every problem', async () => {
    const res = await call(adminA, 'PUT', `/api/integrations/${puller}/collection-filters`, {
      streams: ['events', 'nope'],
      exclude: [{ field: 'type', op: 'regex', value: '(' }, { any: [] }],
    });
    expect(res.statusCode).toBe(422);
    expect(typeof res.json().detail).toBe('string');
    expect(
      res
        .json()
        .error.details.errors.map((e: Json) => e.location)
        .sort(),
    ).toEqual(['body/exclude/0/value', 'body/exclude/1/any', 'body/streams/1']);
    expect(
      (await call(adminA, 'PUT', `/api/integrations/${puller}/collection-filters`, { stream: ['events'] })).statusCode,
    ).toBe(422);
    const custom = await call(adminA, 'PUT', `/api/integrations/${push}/collection-filters`, { streams: null });
    expect(custom.json().error.code).toBe('integration.not_collectable');
    expect((await call(viewerA, 'PUT', `/api/integrations/${puller}/collection-filters`, {})).statusCode).toBe(403);
  });
});

describe('overview and sync-status', () => {
  it('sums the integration in one answer, secrets masked', async () => {
    const db = t.container.database.db;
    const today = new Date().toISOString().slice(0, 10);
    const old = new Date(Date.now() - 5 * 86_400_000).toISOString().slice(0, 10);
    await db
      .insertInto('stream_counters')
      .values([
        {
          organization_id: orgA,
          integration_id: puller,
          stream: 'events',
          day: today,
          events_in: 10,
          bytes_in: 1000,
          normalized: 10,
          flagged: 0,
          quarantined: 1,
          quarantine_released: 0,
          duplicates: 0,
          last_event_at: new Date(),
        },
        {
          organization_id: orgA,
          integration_id: puller,
          stream: 'events',
          day: old,
          events_in: 5,
          bytes_in: 500,
          normalized: 5,
          flagged: 0,
          quarantined: 0,
          quarantine_released: 0,
          duplicates: 0,
          last_event_at: null,
        },
      ])
      .execute();
    await db
      .insertInto('quarantine_events')
      .values({
        id: newId(),
        organization_id: orgA,
        integration_id: puller,
        stream: 'events',
        received_at: new Date(),
        raw: '{}',
        error_kind: 'no_mapping',
        error_detail: 'x',
      })
      .execute();
    await db
      .insertInto('drift_fields')
      .values({
        id: newId(),
        organization_id: orgA,
        integration_id: puller,
        stream: 'events',
        path: 'new.field',
        value_type: 'string',
        first_seen_at: new Date(),
        last_seen_at: new Date(),
      })
      .execute();
    await db
      .insertInto('backfill_jobs')
      .values({
        id: newId(),
        organization_id: orgA,
        integration_id: puller,
        streams: JSON.stringify(['events']),
        from_ts: new Date(Date.now() - 86_400_000),
        to_ts: new Date(),
        status: 'running',
        created_at: new Date(),
        updated_at: new Date(),
      })
      .execute();
    const res = await call(viewerA, 'GET', `/api/integrations/${puller}/overview`);
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body.integration).toMatchObject({
      id: puller,
      name: 'Fake pull',
      config: { api_key: { configured: true } },
    });
    expect(res.body).not.toContain(FAKE_API_KEY);
    expect(body).toMatchObject({
      collection: { mode: 'pull', connector: { platform: 'fake_provider', auth: 'api_token' } },
      traffic: { last_24h: { events: 10, bytes: 1000 }, last_7d: { events: 15, bytes: 1500 } },
      quarantine: { count: 1 },
      drift: { new_fields: 1 },
      ingestion_token_configured: false,
      children: { total: 0, active: 0 },
      backfill: { queued: 0, running: 1 },
      last_check: { ok: false },
      tenants: null,
    });
    expect(body.collection.streams[0]).toMatchObject({
      stream: 'events',
      events_24h: 10,
      events_7d: 15,
      status: 'healthy',
    });
    const pushed = (await call(viewerA, 'GET', `/api/integrations/${push}/overview`)).json();
    expect(pushed).toMatchObject({
      collection: { mode: 'push', connector: null, streams: [] },
      ingestion_token_configured: true,
      last_check: { ok: true },
    });
  });

  it('reports per stream progress, lag and running or queued tasks', async () => {
    const db = t.container.database.db;
    await db
      .insertInto('collector_state')
      .values({
        integration_id: puller,
        stream: 'alerts',
        organization_id: orgA,
        cursor: 'abc',
        last_run_at: new Date(),
        consecutive_failures: 3,
        last_error: 'auth: HTTP 401',
        last_error_at: new Date(),
        events_total: 0,
        cycles_skipped_locked: 0,
      })
      .execute();
    await db
      .insertInto('collector_runs')
      .values([
        {
          id: newId(),
          organization_id: orgA,
          integration_id: puller,
          stream: 'events',
          reason: 'schedule',
          status: 'running',
          created_at: new Date(),
        },
        {
          id: newId(),
          organization_id: orgA,
          integration_id: puller,
          stream: 'events',
          reason: 'trigger',
          status: 'queued',
          created_at: new Date(),
        },
        {
          id: newId(),
          organization_id: orgA,
          integration_id: puller,
          stream: 'events',
          reason: 'schedule',
          status: 'succeeded',
          created_at: new Date(),
        },
      ])
      .execute();
    const res = await call(viewerA, 'GET', `/api/integrations/${puller}/sync-status`);
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ integration_id: puller, mode: 'pull', tenant_sync: null });
    expect(body.streams[0]).toMatchObject({
      stream: 'events',
      cursor_kind: 'date',
      running: true,
      queued: 1,
      consecutive_failures: 0,
    });
    expect(body.streams[0].lag_seconds).toBeGreaterThanOrEqual(120);
    expect(body.streams[1]).toMatchObject({
      stream: 'alerts',
      cursor_kind: 'opaque',
      running: false,
      queued: 0,
      consecutive_failures: 3,
      last_error: 'auth: HTTP 401',
      watermark_at: null,
      lag_seconds: null,
      status: 'disabled',
    });
  });
});
