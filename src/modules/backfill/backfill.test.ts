// The backfill operations through the API: validation rules, scoping, cancel, a job run by
// a started worker to completion, and the broker diagnostics.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/support/app.js';
import { BACKFILL_PLATFORM, fakeBackfillVendor, type FakeVendor } from '../../../test/support/backfill.js';
import { createOrganization, createPrincipal, type Principal, injectAs } from '../../../test/support/identity.js';
import { isUuid } from '../../core/ids.js';
import { DAY_MS, HOUR_MS } from '../../connectors/sdk.js';
import { newId } from '../../core/ids.js';
import { startConsumers } from '../../roles/jobs.js';
import type { Consumer } from '../../platform/queue/port.js';
import type { HeartbeatHandle } from '../processes/service.js';

let t: TestApp;
let vendor: FakeVendor;
let orgA: number;
let orgB: number;
let adminA: Principal;
let adminB: Principal;
let viewerA: Principal;
let root: Principal;
let consumers: Consumer[] = [];
let heartbeat: HeartbeatHandle | undefined;

type Json = Record<string, unknown>;

beforeAll(async () => {
  vendor = fakeBackfillVendor();
  t = await createTestApp({ env: { WEIR_TOKEN_RATE_LIMIT: '100000' } });
  orgA = await createOrganization(t, 'Org A');
  orgB = await createOrganization(t, 'Org B');
  adminA = await createPrincipal(t, { role: 'admin', organizationId: orgA });
  adminB = await createPrincipal(t, { role: 'admin', organizationId: orgB });
  viewerA = await createPrincipal(t, { role: 'viewer', organizationId: orgA });
  root = await createPrincipal(t, { role: 'admin' });
});
afterAll(async () => {
  await Promise.all(consumers.map((c) => c.close()));
  await heartbeat?.stop();
  await t?.close();
});

const call = (who: Principal, method: 'GET' | 'POST', url: string, payload?: unknown) =>
  injectAs(t, who, method, url, payload);

let n = 0;
async function integration(who: Principal, organizationId: number, body: Json = {}): Promise<number> {
  const res = await call(who, 'POST', '/api/integrations/', {
    name: `bf-${++n}`,
    platform: BACKFILL_PLATFORM,
    organization_id: organizationId,
    config: { collect: true, api_key: 'secret-key-123456' },
    ...body,
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json<{ id: number }>().id;
}

const iso = (ms: number) => new Date(ms).toISOString();
const daysAgo = (d: number) => iso(Date.now() - d * DAY_MS);

async function waitFor<T>(fn: () => Promise<T>, done: (v: T) => boolean, timeoutMs = 20_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (done(v) || Date.now() > until) return v;
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('POST /api/integrations/{id}/backfill: validation', () => {
  let id: number;
  beforeAll(async () => {
    id = await integration(adminA, orgA);
  });
  const post = (body: Json, who = adminA, integrationId = id) =>
    call(who, 'POST', `/api/integrations/${integrationId}/backfill`, body);

  it('refuses the singular stream with 422 backfill.stream_singular', async () => {
    const res = await post({ stream: 'events', from_ts: daysAgo(2), to_ts: daysAgo(1) });
    expect(res.statusCode).toBe(422);
    expect(res.json().error.code).toBe('backfill.stream_singular');
    expect(typeof res.json().detail).toBe('string');
  });

  it('requires streams, a non-empty list', async () => {
    expect((await post({ from_ts: daysAgo(2), to_ts: daysAgo(1) })).statusCode).toBe(422);
    expect((await post({ streams: [], from_ts: daysAgo(2), to_ts: daysAgo(1) })).statusCode).toBe(422);
    expect((await post({ streams: 'events', from_ts: daysAgo(2), to_ts: daysAgo(1) })).statusCode).toBe(422);
  });

  it('refuses an unknown stream with 422 backfill.unknown_stream', async () => {
    const res = await post({ streams: ['events', 'nope'], from_ts: daysAgo(2), to_ts: daysAgo(1) });
    expect(res.statusCode).toBe(422);
    expect(res.json().error.code).toBe('backfill.unknown_stream');
    expect(res.json().error.details.unknown).toEqual(['nope']);
  });

  it('applies the 90-day rules and the window rules with 400', async () => {
    const cases: [Json, string][] = [
      [{ from_ts: daysAgo(100), to_ts: daysAgo(5) }, 'backfill.window_too_long'],
      [{ from_ts: daysAgo(95), to_ts: daysAgo(10) }, 'backfill.start_too_old'],
      [{ from_ts: daysAgo(1), to_ts: daysAgo(2) }, 'backfill.invalid_window'],
      [{ from_ts: daysAgo(1), to_ts: daysAgo(1) }, 'backfill.invalid_window'],
      [{ from_ts: daysAgo(1), to_ts: iso(Date.now() + DAY_MS) }, 'backfill.invalid_window'],
    ];
    for (const [window, code] of cases) {
      const res = await post({ streams: ['events'], ...window });
      expect(res.statusCode, `${code} ${res.body}`).toBe(400);
      expect(res.json().error.code).toBe(code);
      expect(typeof res.json().detail).toBe('string');
    }
    // Exactly 90 days is allowed.
    // (One clock reading for both ends: two readings a millisecond apart make 90 days and 1 ms.)
    const now = Date.now();
    const ok = await post({ streams: ['events'], from_ts: iso(now - 90 * DAY_MS), to_ts: iso(now) });
    expect(ok.statusCode, ok.body).toBe(201);
  });

  it('answers 422 for an unparseable date, never 5xx', async () => {
    const res = await post({ streams: ['events'], from_ts: 'yesterday', to_ts: daysAgo(1) });
    expect(res.statusCode).toBe(422);
    expect(typeof res.json().detail).toBe('string');
  });

  it('refuses a managed-provider parent (partner config, or an integration with children) with 422', async () => {
    const partner = await integration(adminA, orgA, {
      config: { collect: true, api_key: 'secret-key-123456', partner: true },
    });
    let res = await post({ streams: ['events'], from_ts: daysAgo(2), to_ts: daysAgo(1) }, adminA, partner);
    expect(res.statusCode).toBe(422);
    expect(res.json().error.code).toBe('backfill.managed_provider_parent');

    const parent = await integration(adminA, orgA);
    await integration(adminA, orgA, { parent_id: parent });
    res = await post({ streams: ['events'], from_ts: daysAgo(2), to_ts: daysAgo(1) }, adminA, parent);
    expect(res.statusCode).toBe(422);
    expect(res.json().error.code).toBe('backfill.managed_provider_parent');
  });

  it('refuses a platform without connector (422 integration.not_collectable) and an integration that does not collect', async () => {
    const custom = await call(adminA, 'POST', '/api/integrations/', {
      name: `custom-${++n}`,
      platform: 'custom',
      organization_id: orgA,
    });
    expect(custom.statusCode, custom.body).toBe(201);
    let res = await post({ streams: ['events'], from_ts: daysAgo(2), to_ts: daysAgo(1) }, adminA, custom.json().id);
    expect(res.statusCode).toBe(422);
    expect(res.json().error.code).toBe('integration.not_collectable');

    const off = await integration(adminA, orgA, { config: { collect: false } });
    res = await post({ streams: ['events'], from_ts: daysAgo(2), to_ts: daysAgo(1) }, adminA, off);
    expect(res.statusCode).toBe(422);
    expect(res.json().error.code).toBe('collection.not_collectable');
  });

  it('is 404 for an integration of another organization or unknown, 403 without integration.write', async () => {
    const foreign = await integration(adminB, orgB);
    const body = { streams: ['events'], from_ts: daysAgo(2), to_ts: daysAgo(1) };
    expect((await post(body, adminA, foreign)).statusCode).toBe(404);
    expect((await post(body, adminA, 987_654)).statusCode).toBe(404);
    expect((await post(body, viewerA)).statusCode).toBe(403);
  });

  it('creates a job: 201 with a UUID id, queued, clamped to the vendor retention with a warning', async () => {
    const res = await post({ streams: ['events', 'audit', 'events'], from_ts: daysAgo(10), to_ts: daysAgo(5) });
    expect(res.statusCode, res.body).toBe(201);
    const job = res.json();
    expect(isUuid(job.id)).toBe(true);
    expect(job).toMatchObject({
      integration_id: id,
      organization_id: orgA,
      status: 'queued',
      streams: ['events', 'audit'],
      cancel_requested: false,
      events: 0,
    });
    // audit keeps 7 days: it starts 7 days back instead of 10.
    expect(job.warnings).toHaveLength(1);
    expect(job.warnings[0]).toMatch(/^audit: the vendor keeps 7 days/);
    expect(Date.parse(job.progress.audit.clamped_from)).toBeGreaterThan(Date.now() - 7 * DAY_MS - 60_000);
    expect(job.progress.events.clamped_from).toBeNull();
    expect(job.progress.events.chunk_from).toBe(new Date(Date.parse(job.from_ts)).toISOString());
  });
});

describe('jobs: read, list, cancel, scoping', () => {
  let id: number;
  let jobId: string;
  beforeAll(async () => {
    id = await integration(adminA, orgA);
    const res = await call(adminA, 'POST', `/api/integrations/${id}/backfill`, {
      streams: ['events'],
      from_ts: daysAgo(3),
      to_ts: daysAgo(2),
    });
    jobId = res.json().id;
  });

  it('reads a job in scope; 404 for another organization and for unknown ids', async () => {
    const res = await call(viewerA, 'GET', `/api/backfill-jobs/${jobId}`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ id: jobId, status: 'queued', streams: ['events'] });
    expect((await call(adminB, 'GET', `/api/backfill-jobs/${jobId}`)).statusCode).toBe(404);
    expect((await call(adminA, 'GET', `/api/backfill-jobs/${newId()}`)).statusCode).toBe(404);
    expect((await call(adminA, 'GET', '/api/backfill-jobs/not-a-uuid')).statusCode).toBe(404);
  });

  it("lists an integration's jobs in the {total, items, limit, offset} envelope; 404 outside scope", async () => {
    await call(adminA, 'POST', `/api/integrations/${id}/backfill`, {
      streams: ['events'],
      from_ts: daysAgo(4),
      to_ts: daysAgo(3),
    });
    const res = await call(viewerA, 'GET', `/api/integrations/${id}/backfill-jobs?limit=1`);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ total: 2, limit: 1, offset: 0 });
    expect(body.items).toHaveLength(1);
    const all = (await call(viewerA, 'GET', `/api/integrations/${id}/backfill-jobs?status=queued`)).json();
    expect(all.items.map((j: Json) => j.id)).toContain(jobId);
    expect((await call(adminB, 'GET', `/api/integrations/${id}/backfill-jobs`)).statusCode).toBe(404);
  });

  it('cancels a queued job at once (202), then answers 409 backfill.already_finished', async () => {
    expect((await call(adminB, 'POST', `/api/backfill-jobs/${jobId}/cancel`)).statusCode).toBe(404);
    expect((await call(viewerA, 'POST', `/api/backfill-jobs/${jobId}/cancel`)).statusCode).toBe(403);
    const res = await call(adminA, 'POST', `/api/backfill-jobs/${jobId}/cancel`);
    expect(res.statusCode).toBe(202);
    expect(res.json()).toMatchObject({ id: jobId, status: 'cancelled', cancel_requested: true });
    const again = await call(adminA, 'POST', `/api/backfill-jobs/${jobId}/cancel`);
    expect(again.statusCode).toBe(409);
    expect(again.json().error.code).toBe('backfill.already_finished');
  });

  it('flags a running job for its worker (202, still running)', async () => {
    const created = await call(adminA, 'POST', `/api/integrations/${id}/backfill`, {
      streams: ['events'],
      from_ts: daysAgo(6),
      to_ts: daysAgo(5),
    });
    const running = created.json().id as string;
    await t.container.database.db
      .updateTable('backfill_jobs')
      .set({ status: 'running' })
      .where('id', '=', running)
      .execute();
    const res = await call(adminA, 'POST', `/api/backfill-jobs/${running}/cancel`);
    expect(res.statusCode).toBe(202);
    expect(res.json()).toMatchObject({ status: 'running', cancel_requested: true });
  });
});

describe('a job run by a worker, and the diagnostics', () => {
  beforeAll(async () => {
    // The jobs made by the tests above are not for the worker to run.
    await t.container.database.db
      .updateTable('backfill_jobs')
      .set({ status: 'cancelled' })
      .where('status', 'in', ['queued', 'running'])
      .execute();
    consumers = startConsumers(t.container.queue, t.container.jobs, t.container.logger);
    heartbeat = await t.container.processes.start('worker', 60_000);
  });

  it('runs to completion: every event of the window reaches normalization, chunk by chunk', async () => {
    vendor.reset();
    const id = await integration(adminA, orgA);
    const from = Math.floor((Date.now() - 4 * DAY_MS) / HOUR_MS) * HOUR_MS;
    const to = from + 3 * DAY_MS;
    const res = await call(adminA, 'POST', `/api/integrations/${id}/backfill`, {
      streams: ['events'],
      from_ts: iso(from),
      to_ts: iso(to),
    });
    expect(res.statusCode, res.body).toBe(201);
    const jobId = res.json().id as string;
    const job = await waitFor(
      async () => (await call(adminA, 'GET', `/api/backfill-jobs/${jobId}`)).json(),
      (j) => j.status === 'completed',
    );
    const expected = vendor.eventsIn('events', new Date(from), new Date(to));
    expect(expected.length).toBe(12);
    expect(job).toMatchObject({ status: 'completed', events: 12, pages: 6 });
    expect(job.progress.events).toMatchObject({ done: true, events: 12, pages: 6, cursor: null });
    expect(job.started_at).not.toBeNull();
    expect(job.finished_at).not.toBeNull();
    const counters = await waitFor(
      () =>
        t.container.database.db
          .selectFrom('stream_counters')
          .select(['events_in', 'duplicates'])
          .where('integration_id', '=', id)
          .where('stream', '=', 'events')
          .execute(),
      (rows) => rows.reduce((s, r) => s + Number(r.events_in), 0) >= 12,
    );
    expect(counters.reduce((s, r) => s + Number(r.events_in), 0)).toBe(12);
    // Vendor usage of the backfill is counted for the cost summary.
    const usage = await t.container.database.db
      .selectFrom('collector_usage')
      .selectAll()
      .where('integration_id', '=', id)
      .execute();
    expect(usage.reduce((s, r) => s + Number(r.pages), 0)).toBe(6);
    expect(usage.reduce((s, r) => s + Number(r.events), 0)).toBe(12);
  });

  it('diagnostics: the API and the worker share the broker, and a ping makes the round trip', async () => {
    const res = await call(root, 'GET', '/api/backfill-jobs/diagnostics');
    expect(res.statusCode, res.body).toBe(200);
    const d = res.json();
    expect(d.same_broker).toBe(true);
    expect(d.round_trip.ok).toBe(true);
    expect(typeof d.round_trip.ms).toBe('number');
    expect(d.api.queue_backend).toBe(t.container.queue.backend);
    expect(d.api.broker.backend).toBe(t.container.queue.backend);
    expect(d.workers.length).toBeGreaterThanOrEqual(1);
    expect(d.workers.every((w: Json) => w.same_broker === true)).toBe(true);
    expect(d.queue).toEqual(
      expect.objectContaining({
        waiting: expect.any(Number),
        active: expect.any(Number),
        delayed: expect.any(Number),
        failed: expect.any(Number),
      }),
    );
    // Never credentials: the body names no password or URL userinfo.
    expect(res.body).not.toMatch(/password|@/i);
    if (t.container.queue.backend === 'bullmq') expect(d.api.broker.prefix).toBe(t.container.config.redisPrefix);
  });

  it('diagnostics: a worker on another broker makes same_broker false', async () => {
    const db = t.container.database.db;
    const other = JSON.stringify({
      backend: 'bullmq',
      scheme: 'redis',
      host: 'elsewhere',
      port: 6379,
      db: '3',
      prefix: 'other',
    });
    await db
      .insertInto('process_heartbeats')
      .values({
        id: 'stray:1:worker',
        role: 'worker',
        hostname: 'stray',
        pid: 1,
        started_at: new Date(),
        last_seen_at: new Date(),
        queue_backend: 'bullmq',
        broker: other,
      })
      .execute();
    try {
      const d = (await call(root, 'GET', '/api/backfill-jobs/diagnostics')).json();
      expect(d.same_broker).toBe(false);
      const stray = d.workers.find((w: Json) => w.process === 'stray:1:worker');
      expect(stray).toMatchObject({ same_broker: false, broker: { host: 'elsewhere', prefix: 'other' } });
    } finally {
      await db.deleteFrom('process_heartbeats').where('id', '=', 'stray:1:worker').execute();
    }
  });

  it('diagnostics: lists queued jobs older than 5 minutes, in scope only; 403 without user.manage', async () => {
    const id = await integration(adminA, orgA);
    const old = new Date(Date.now() - 10 * 60_000);
    const stuckId = newId();
    await t.container.database.db
      .insertInto('backfill_jobs')
      .values({
        id: stuckId,
        organization_id: orgA,
        integration_id: id,
        streams: JSON.stringify(['events']),
        from_ts: old,
        to_ts: old,
        status: 'queued',
        events: 0,
        created_at: old,
        updated_at: old,
      })
      .execute();
    const a = (await call(adminA, 'GET', '/api/backfill-jobs/diagnostics')).json();
    expect(a.stuck_jobs.map((j: Json) => j.id)).toContain(stuckId);
    expect(a.stuck_jobs.find((j: Json) => j.id === stuckId).waiting_seconds).toBeGreaterThanOrEqual(590);
    const b = (await call(adminB, 'GET', '/api/backfill-jobs/diagnostics')).json();
    expect(b.stuck_jobs.map((j: Json) => j.id)).not.toContain(stuckId);
    expect((await call(viewerA, 'GET', '/api/backfill-jobs/diagnostics')).statusCode).toBe(403);
  });
});
