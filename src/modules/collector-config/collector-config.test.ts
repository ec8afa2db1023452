// Collector settings (GET/PUT, global scope, audit of old -> new) and the capture session
// operations: create within limits, scoped lists, stop, delete, events, NDJSON export
// (masked by default, raw audited), capture vendors, housekeeping.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/support/app.js';
import { createOrganization, createPrincipal, type Principal, injectAs } from '../../../test/support/identity.js';
import { createIntegration, ingestBatch, runJob } from '../../../test/support/normalization.js';
import { systemClock } from '../../core/clock.js';
import { newId } from '../../core/ids.js';
import { createCaptureRecorder } from './recorder.js';
import { CAPTURE_HOUSEKEEPING_JOB, CAPTURE_QUEUE } from './jobs.js';
import { DEFAULT_COLLECTOR_SETTINGS } from './settings.js';

type Json = Record<string, unknown>;
type Page = { total: number; limit: number; offset: number; items: Json[] };

let t: TestApp;
let orgA: number;
let orgB: number;
let intA: number;
let intB: number;
let root: Principal;
let adminA: Principal;
let operatorA: Principal;

const SESSIONS = '/api/collectors/config/capture-sessions';

const call = (who: Principal, method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: unknown) =>
  injectAs(t, who, method, url, payload);

async function createSession(who: Principal, body: Json): Promise<Json> {
  const res = await call(who, 'POST', SESSIONS, body);
  expect(res.statusCode, res.body).toBe(201);
  return res.json<Json>();
}

async function auditEntries(operationId: string) {
  return t.container.database.db
    .selectFrom('audit_log')
    .selectAll()
    .where('operation_id', '=', operationId)
    .orderBy('seq', 'desc')
    .execute();
}

beforeAll(async () => {
  t = await createTestApp({ env: { WEIR_TOKEN_RATE_LIMIT: '1000000' } });
  orgA = await createOrganization(t, 'Org A');
  orgB = await createOrganization(t, 'Org B');
  intA = await createIntegration(t, orgA);
  intB = await createIntegration(t, orgB);
  root = await createPrincipal(t, { role: 'admin' });
  adminA = await createPrincipal(t, { role: 'admin', organizationId: orgA });
  operatorA = await createPrincipal(t, { role: 'operator', organizationId: orgA });
});
afterAll(async () => t?.close());
beforeEach(async () => {
  await t.container.database.db.deleteFrom('capture_sessions').execute();
  await t.container.database.db.deleteFrom('collector_settings').execute();
});

describe('collector settings', () => {
  it('GET gives the defaults with descriptions and ranges to a user manager of an organization', async () => {
    const res = await call(adminA, 'GET', '/api/collectors/config');
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json<{ settings: Json; fields: Json[]; updated_at: unknown }>();
    expect(body.settings).toEqual({ ...DEFAULT_COLLECTOR_SETTINGS });
    expect(body.updated_at).toBeNull();
    const pages = body.fields.find((f) => f.name === 'max_pages_per_cycle');
    expect(pages).toMatchObject({ type: 'integer', default: 50, minimum: 1, maximum: 10_000, customized: false });
    expect(String(pages?.description)).toMatch(/cycle/);
    expect(body.fields.map((f) => f.name).sort()).toEqual(Object.keys(DEFAULT_COLLECTOR_SETTINGS).sort());
    expect((await call(operatorA, 'GET', '/api/collectors/config')).statusCode).toBe(403);
  });

  it('PUT changes only what is sent, audits old -> new and takes effect at once', async () => {
    // The settings reader caches the defaults first.
    await createSession(root, { integration_id: intA, max_events: 5_000 });
    const res = await call(root, 'PUT', '/api/collectors/config', {
      capture_max_events: 100,
      paused: true,
      dedup_hours: 24,
    });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json<{ settings: Json; fields: Json[]; updated_by: number; updated_at: string }>();
    expect(body.settings).toEqual({
      ...DEFAULT_COLLECTOR_SETTINGS,
      capture_max_events: 100,
      paused: true,
      dedup_hours: 24,
    });
    expect(body.updated_by).toBe(root.id);
    expect(body.updated_at).toMatch(/Z$/);
    expect(body.fields.find((f) => f.name === 'paused')).toMatchObject({ customized: true, default: false });
    const [entry] = await auditEntries('collector_config.update');
    expect(entry).toMatchObject({
      outcome: 'success',
      target_type: 'collector_settings',
      target_id: '1',
      organization_id: null,
    });
    // dedup_hours was sent with its current value: not a change.
    expect(entry!.details).toEqual({
      changes: { capture_max_events: { from: 10_000, to: 100 }, paused: { from: false, to: true } },
    });
    // The limit applies to the next session without waiting for the reader's cache.
    const over = await call(root, 'POST', SESSIONS, { integration_id: intA, max_events: 500 });
    expect(over.statusCode).toBe(422);
    // A second PUT keeps the first one's values.
    const again = await call(root, 'PUT', '/api/collectors/config', { max_cycle_seconds: 120 });
    expect(again.json<{ settings: Json }>().settings).toMatchObject({
      capture_max_events: 100,
      paused: true,
      max_cycle_seconds: 120,
    });
    expect((await call(adminA, 'GET', '/api/collectors/config')).json<{ settings: Json }>().settings).toMatchObject({
      max_cycle_seconds: 120,
    });
    // Back to the defaults, so that the process's settings reader holds them for the next tests.
    expect((await call(root, 'PUT', '/api/collectors/config', { ...DEFAULT_COLLECTOR_SETTINGS })).statusCode).toBe(200);
  });

  it('PUT needs platform scope and valid values', async () => {
    const denied = await call(adminA, 'PUT', '/api/collectors/config', { paused: true });
    expect(denied.statusCode).toBe(403);
    for (const body of [
      { max_pages_per_cycle: 0 },
      { dedup_hours: 1_000 },
      { paused: 'yes' },
      { unknown_setting: 1 },
      {},
    ]) {
      const res = await call(root, 'PUT', '/api/collectors/config', body);
      expect(res.statusCode, JSON.stringify(body)).toBe(422);
      expect(typeof res.json<Json>().detail).toBe('string');
    }
    expect((await call(root, 'GET', '/api/collectors/config')).json<{ updated_at: unknown }>().updated_at).toBeNull();
  });
});

describe('capture sessions', () => {
  it('creates a session on an integration in scope, with defaults capped by the settings', async () => {
    const before = Date.now();
    const s = await createSession(adminA, { integration_id: intA, stream: 'system_log' });
    expect(s).toMatchObject({
      organization_id: orgA,
      integration_id: intA,
      stream: 'system_log',
      status: 'active',
      max_events: 1_000,
      events_captured: 0,
      created_by: adminA.id,
      stopped_at: null,
    });
    const duration = Date.parse(String(s.expires_at)) - Date.parse(String(s.created_at));
    expect(duration).toBe(900_000);
    expect(Date.parse(String(s.created_at))).toBeGreaterThanOrEqual(before - 1000);
    const all = await createSession(adminA, {
      integration_id: intA,
      stream: null,
      duration_seconds: 3_600,
      max_events: 10_000,
    });
    expect(all).toMatchObject({ stream: null, max_events: 10_000 });
    const [entry] = await auditEntries('collector_config.capture_create');
    expect(entry).toMatchObject({
      target_type: 'capture_session',
      target_id: all.id,
      organization_id: orgA,
      outcome: 'success',
    });
  });

  it('refuses integrations outside the scope (404) and sessions beyond the limits (422)', async () => {
    expect((await call(adminA, 'POST', SESSIONS, { integration_id: intB })).statusCode).toBe(404);
    expect((await call(adminA, 'POST', SESSIONS, { integration_id: 2_000_000_000 })).statusCode).toBe(404);
    const long = await call(adminA, 'POST', SESSIONS, { integration_id: intA, duration_seconds: 3_601 });
    expect(long.statusCode).toBe(422);
    expect(long.json()).toMatchObject({
      error: { code: 'capture.limit_exceeded', details: { field: 'duration_seconds', maximum: 3_600 } },
    });
    const many = await call(adminA, 'POST', SESSIONS, { integration_id: intA, max_events: 10_001 });
    expect(many.json()).toMatchObject({ error: { code: 'capture.limit_exceeded', details: { field: 'max_events' } } });
    expect((await call(adminA, 'POST', SESSIONS, { integration_id: intA, stream: '../x' })).statusCode).toBe(422);
    expect((await call(adminA, 'POST', SESSIONS, { integration_id: intA, extra: 1 })).statusCode).toBe(422);
    expect((await call(operatorA, 'POST', SESSIONS, { integration_id: intA })).statusCode).toBe(403);
    for (let i = 0; i < 5; i++) await createSession(adminA, { integration_id: intA });
    const sixth = await call(adminA, 'POST', SESSIONS, { integration_id: intA });
    expect(sixth.json()).toMatchObject({
      error: { code: 'capture.limit_exceeded', details: { field: 'integration_id' } },
    });
  });

  it("lists the sessions of the caller's scope, newest first, with status filter and paging", async () => {
    const a1 = await createSession(adminA, { integration_id: intA });
    const a2 = await createSession(adminA, { integration_id: intA, stream: 'x' });
    const b1 = await createSession(root, { integration_id: intB });
    const old = newId();
    await t.container.database.db
      .insertInto('capture_sessions')
      .values({
        id: old,
        organization_id: orgA,
        integration_id: intA,
        stream: null,
        status: 'active',
        max_events: 10,
        created_by: null,
        created_at: new Date(Date.now() - 7_200_000),
        expires_at: new Date(Date.now() - 3_600_000),
        stopped_at: null,
      })
      .execute();
    const mine = (await call(adminA, 'GET', SESSIONS)).json<Page>();
    expect(mine).toMatchObject({ total: 3, limit: 50, offset: 0 });
    expect(mine.items.map((s) => s.id)).toEqual([a2.id, a1.id, old]);
    // Past expires_at, it reads as expired before the beat marks it.
    expect(mine.items[2]).toMatchObject({ status: 'expired' });
    expect((await call(root, 'GET', SESSIONS)).json<Page>().total).toBe(4);
    const active = (await call(adminA, 'GET', `${SESSIONS}?status=active&limit=1&offset=1`)).json<Page>();
    expect(active).toMatchObject({ total: 2, limit: 1, offset: 1 });
    expect(active.items.map((s) => s.id)).toEqual([a1.id]);
    expect((await call(adminA, 'GET', `${SESSIONS}?status=expired`)).json<Page>().items.map((s) => s.id)).toEqual([
      old,
    ]);
    expect((await call(root, 'GET', `${SESSIONS}?integration_id=${intB}`)).json<Page>().items.map((s) => s.id)).toEqual(
      [b1.id],
    );
    expect((await call(root, 'GET', `${SESSIONS}?org_id=${orgB}`)).json<Page>().total).toBe(1);
    expect((await call(adminA, 'GET', `${SESSIONS}?status=bogus`)).statusCode).toBe(422);
  });

  it('stops an active session once (409 capture.not_active after) and 404s outside the scope', async () => {
    const s = await createSession(adminA, { integration_id: intA });
    const b = await createSession(root, { integration_id: intB });
    expect((await call(adminA, 'POST', `${SESSIONS}/${String(b.id)}/stop`)).statusCode).toBe(404);
    expect((await call(adminA, 'POST', `${SESSIONS}/not-a-uuid/stop`)).statusCode).toBe(404);
    const stopped = await call(adminA, 'POST', `${SESSIONS}/${String(s.id)}/stop`);
    expect(stopped.statusCode, stopped.body).toBe(200);
    expect(stopped.json()).toMatchObject({ id: s.id, status: 'stopped' });
    expect(String(stopped.json<Json>().stopped_at)).toMatch(/Z$/);
    const again = await call(adminA, 'POST', `${SESSIONS}/${String(s.id)}/stop`);
    expect(again.statusCode).toBe(409);
    expect(again.json()).toMatchObject({ error: { code: 'capture.not_active', details: { status: 'stopped' } } });
  });

  it('records events that the API lists oldest first, serves one by one, and deletes with the session', async () => {
    const s = await createSession(adminA, { integration_id: intA });
    const b = await createSession(root, { integration_id: intB });
    const recorder = createCaptureRecorder({
      db: t.container.database.db,
      clock: systemClock,
      logger: t.container.logger,
    });
    await recorder.record(ingestBatch(orgA, intA, 'signin', [{ n: 1, email: 'ann@example.com' }, { n: 2 }]));
    await recorder.record(ingestBatch(orgA, intA, 'signin', [{ n: 3 }]));
    await recorder.record(ingestBatch(orgB, intB, 'signin', [{ n: 9 }]));
    const page = (await call(adminA, 'GET', `${SESSIONS}/${String(s.id)}/events?limit=2`)).json<Page>();
    expect(page).toMatchObject({ total: 3, limit: 2, offset: 0 });
    expect(page.items.map((e) => (e.raw as Json).n)).toEqual([1, 2]);
    expect(page.items[0]).toMatchObject({
      session_id: s.id,
      organization_id: orgA,
      integration_id: intA,
      stream: 'signin',
      source: 'push',
      raw: { n: 1, email: 'ann@example.com' },
    });
    expect(page.items[0]!.bytes).toBe(Buffer.byteLength(JSON.stringify({ n: 1, email: 'ann@example.com' })));
    const masked = (await call(adminA, 'GET', `${SESSIONS}/${String(s.id)}/events?mask=true&limit=1`)).json<Page>();
    expect((masked.items[0]!.raw as Json).email).toBe('a***@example.com');
    const eventId = String(page.items[0]!.id);
    const one = await call(adminA, 'GET', `${SESSIONS}/${String(s.id)}/events/${eventId}`);
    expect(one.statusCode).toBe(200);
    expect(one.json()).toMatchObject({ id: eventId, raw: { n: 1 } });
    // The event exists, but not under a session of the caller's scope / not under this session.
    expect((await call(adminA, 'GET', `${SESSIONS}/${String(b.id)}/events`)).statusCode).toBe(404);
    expect((await call(adminA, 'GET', `${SESSIONS}/${String(b.id)}/events/${eventId}`)).statusCode).toBe(404);
    expect((await call(root, 'GET', `${SESSIONS}/${String(b.id)}/events/${eventId}`)).statusCode).toBe(404);
    expect((await call(adminA, 'GET', `${SESSIONS}/${String(s.id)}/events/${newId()}`)).statusCode).toBe(404);

    expect((await call(adminA, 'DELETE', `${SESSIONS}/${String(b.id)}`)).statusCode).toBe(404);
    const del = await call(adminA, 'DELETE', `${SESSIONS}/${String(s.id)}`);
    expect(del.statusCode).toBe(204);
    expect((await call(adminA, 'GET', `${SESSIONS}/${String(s.id)}/events`)).statusCode).toBe(404);
    const left = await t.container.database.db.selectFrom('capture_events').select('session_id').execute();
    expect(left.map((r) => r.session_id)).toEqual([b.id]);
    const [entry] = await auditEntries('collector_config.capture_delete');
    expect(entry).toMatchObject({
      target_type: 'capture_session',
      target_id: s.id,
      organization_id: orgA,
      details: { events_captured: 3 },
    });
  });

  it('exports NDJSON masked by default, raw with mask=false (audited), with platform scope only', async () => {
    const s = await createSession(adminA, { integration_id: intA });
    const recorder = createCaptureRecorder({
      db: t.container.database.db,
      clock: systemClock,
      logger: t.container.logger,
    });
    const events = Array.from({ length: 3 }, (_, i) => ({
      i,
      email: `user${i}@example.com`,
      ip: '192.0.2.10',
      user_name: `jdoe${i}`,
      message: `signin by jdoe${i}`,
    }));
    await recorder.record(ingestBatch(orgA, intA, 'signin', events));
    const url = `${SESSIONS}/${String(s.id)}/export`;
    expect((await call(adminA, 'GET', url)).statusCode).toBe(403);
    const masked = await call(root, 'GET', url);
    expect(masked.statusCode).toBe(200);
    expect(masked.headers['content-type']).toMatch(/^application\/x-ndjson/);
    expect(masked.headers['content-disposition']).toContain(`capture-${String(s.id)}.ndjson`);
    const lines = masked.body
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as Json);
    // The masked user_name is masked in the message too.
    expect(lines).toEqual(
      events.map((e) => ({
        i: e.i,
        email: `u***@example.com`,
        ip: '192.0.2.x',
        user_name: 'j***',
        message: 'signin by j***',
      })),
    );
    const raw = await call(root, 'GET', `${url}?mask=false`);
    expect(
      raw.body
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l) as Json),
    ).toEqual(events);
    const entries = await auditEntries('collector_config.capture_export');
    // The organization admin's attempt is recorded as denied.
    expect(entries.filter((e) => e.outcome === 'denied')).toHaveLength(1);
    const [last, first] = entries.filter((e) => e.outcome === 'success');
    expect(first).toMatchObject({
      target_id: s.id,
      organization_id: orgA,
      outcome: 'success',
      details: { mask: true, events: 3 },
    });
    expect(last).toMatchObject({
      target_id: s.id,
      details: { mask: false, events: 3, warning: 'raw (unmasked) events exported' },
    });
    expect((await call(root, 'GET', `${SESSIONS}/${newId()}/export`)).statusCode).toBe(404);
  });

  it('exports in chunks, in capture order', async () => {
    const s = await createSession(adminA, { integration_id: intA, max_events: 1_200 });
    const recorder = createCaptureRecorder({
      db: t.container.database.db,
      clock: systemClock,
      logger: t.container.logger,
    });
    const events = Array.from({ length: 1_100 }, (_, i) => ({ i }));
    await recorder.record(ingestBatch(orgA, intA, 'bulk', events));
    const res = await call(root, 'GET', `${SESSIONS}/${String(s.id)}/export?mask=false`);
    const got = res.body
      .trimEnd()
      .split('\n')
      .map((l) => (JSON.parse(l) as { i: number }).i);
    expect(got).toHaveLength(1_100);
    // Rows written in one batch share captured_at; ids (UUIDv7) keep their order.
    expect(got).toEqual(events.map((e) => e.i));
  });

  it('lists every platform with its capturable streams', async () => {
    const res = await call(adminA, 'GET', '/api/collectors/config/capture-vendors');
    expect(res.statusCode).toBe(200);
    const list = res.json<{ platform: string; kind: string; streams: { name: string }[] }[]>();
    expect(list.find((p) => p.platform === 'custom')).toMatchObject({ kind: 'push', streams: [] });
    expect(list.find((p) => p.platform === 'okta')?.streams.map((s) => s.name)).toContain('system_log');
    expect(
      list
        .find((p) => p.platform === 'microsoft_graph')
        ?.streams.map((s) => s.name)
        .sort(),
    ).toEqual(expect.arrayContaining(['directory_audits', 'signins']));
    expect((await call(operatorA, 'GET', '/api/collectors/config/capture-vendors')).statusCode).toBe(403);
  });
});

describe('capture housekeeping', () => {
  it('marks expired sessions and removes sessions ended over 7 days ago with their events', async () => {
    const db = t.container.database.db;
    const now = Date.now();
    const row = (id: string, status: 'active' | 'stopped', expires: number, stopped: number | null) => ({
      id,
      organization_id: orgA,
      integration_id: intA,
      stream: null,
      status,
      max_events: 10,
      created_by: null,
      created_at: new Date(expires - 3_600_000),
      expires_at: new Date(expires),
      stopped_at: stopped === null ? null : new Date(stopped),
    });
    const [expiring, old, recent, live] = [newId(), newId(), newId(), newId()];
    await db
      .insertInto('capture_sessions')
      .values([
        row(expiring, 'active', now - 60_000, null),
        row(old, 'stopped', now - 9 * 86_400_000, now - 8 * 86_400_000),
        row(recent, 'stopped', now - 2 * 86_400_000, now - 86_400_000),
        row(live, 'active', now + 600_000, null),
      ])
      .execute();
    await db
      .insertInto('capture_events')
      .values(
        [old, recent].map((sid) => ({
          id: newId(),
          session_id: sid,
          organization_id: orgA,
          integration_id: intA,
          stream: 's',
          source: 'push',
          raw: '{"a":1}',
          bytes: 7,
          captured_at: new Date(now - 8 * 86_400_000),
        })),
      )
      .execute();
    expect(t.container.beatTasks.some((b) => b.name === CAPTURE_HOUSEKEEPING_JOB)).toBe(true);
    await runJob(t, CAPTURE_QUEUE, CAPTURE_HOUSEKEEPING_JOB);
    const rows = await db.selectFrom('capture_sessions').select(['id', 'status', 'stopped_at', 'expires_at']).execute();
    const byId = new Map(rows.map((r) => [r.id, r]));
    expect(byId.get(expiring)).toMatchObject({ status: 'expired' });
    expect(byId.get(expiring)!.stopped_at!.getTime()).toBe(byId.get(expiring)!.expires_at.getTime());
    expect(byId.has(old)).toBe(false);
    expect(byId.get(recent)?.status).toBe('stopped');
    expect(byId.get(live)?.status).toBe('active');
    const events = await db.selectFrom('capture_events').select('session_id').execute();
    expect(events.map((e) => e.session_id)).toEqual([recent]);
  });
});
