// The collection engine against the fake vendor, on the test app's database and queue, with
// the normalization consumers running so collected events really reach stream_counters.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/support/app.js';
import { testTelemetry } from '../../../test/support/delivery-engine.js';
import { createOrganization, createPrincipal } from '../../../test/support/identity.js';
import {
  FAKE_PLATFORM,
  fakeVendorConnector,
  startFakeVendor,
  type FakeVendor,
} from '../../../test/support/vendors/fake-vendor.js';
import { registerConnector } from '../../connectors/index.js';
import { disabledTelemetry, type Telemetry } from '../../platform/telemetry/index.js';
import { NORMALIZE_QUEUE, type AcceptBatch, type Admission } from '../../pipeline/envelope.js';
import type { Consumer } from '../../platform/queue/port.js';
import { startConsumers } from '../../roles/jobs.js';
import { DEFAULT_COLLECTOR_SETTINGS, type CollectorSettings } from '../collector-config/settings.js';
import { wireCollection } from './index.js';
import { parseDateCursor } from './windows.js';

registerConnector(fakeVendorConnector);

let t: TestApp;
let consumers: Consumer[] = [];
const vendors: FakeVendor[] = [];
const db = () => t.container.database.db;

beforeAll(async () => {
  t = await createTestApp();
  consumers = startConsumers(
    t.container.queue,
    t.container.jobs.filter((j) => j.queue === NORMALIZE_QUEUE),
    t.container.logger,
  );
});
afterAll(async () => {
  await Promise.all(consumers.map((c) => c.close()));
  await t?.close();
  await Promise.all(vendors.map((v) => v.close()));
});

/** A fresh vendor and an organization with one collecting integration of it. */
async function scenario(
  name: string,
  config: Record<string, unknown> = {},
  vendorOptions: Parameters<typeof startFakeVendor>[0] = {},
) {
  const vendor = await startFakeVendor(vendorOptions);
  vendors.push(vendor);
  const orgId = await createOrganization(t, name);
  const admin = await createPrincipal(t, { role: 'admin', organizationId: orgId });
  const res = await t.app.inject({
    method: 'POST',
    url: '/api/integrations/',
    headers: admin.headers,
    payload: { name, platform: FAKE_PLATFORM, organization_id: orgId, config: { ...vendor.config(), ...config } },
  });
  expect(res.statusCode, res.body).toBe(201);
  return { vendor, orgId, admin, integrationId: res.json<{ id: number }>().id };
}

/** The engine wired on the test app with replaced parts (acceptance, settings, telemetry). */
function engineWith(
  o: {
    accept?: AcceptBatch;
    admission?: Admission;
    settings?: Partial<CollectorSettings>;
    telemetry?: Telemetry;
    lockTtlMs?: number;
  } = {},
) {
  const c = t.container;
  return wireCollection({
    db: c.database.db,
    clock: c.clock,
    logger: c.logger,
    telemetry: o.telemetry ?? disabledTelemetry(),
    queue: c.queue,
    accept: o.accept ?? c.ingest.accept,
    ...(o.admission ? { admission: o.admission } : {}),
    lock: c.lock,
    config: { ...c.config.collection, lockTtlMs: o.lockTtlMs ?? c.config.collection.lockTtlMs },
    integrations: c.integrations.service,
    runtime: c.connectorRuntime,
    settings: { current: async () => ({ ...DEFAULT_COLLECTOR_SETTINGS, ...o.settings }) },
    observeGauges: Boolean(o.telemetry),
  }).engine;
}

const state = async (integrationId: number, stream: string) =>
  (await t.container.collection.engine.getState(integrationId, stream))!;

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Waits until normalization has counted `n` events of the stream in; returns its counters. */
async function counted(integrationId: number, stream: string, n: number) {
  return until(`${n} events in for ${stream}`, async () => {
    const row = await db()
      .selectFrom('stream_counters')
      .select([
        sql<number>`coalesce(sum(events_in), 0)::int`.as('events_in'),
        sql<number>`coalesce(sum(duplicates), 0)::int`.as('duplicates'),
      ])
      .where('integration_id', '=', integrationId)
      .where('stream', '=', stream)
      .executeTakeFirstOrThrow();
    return Number(row.events_in) >= n
      ? { events_in: Number(row.events_in), duplicates: Number(row.duplicates) }
      : undefined;
  });
}
const keys = async (integrationId: number, stream: string) =>
  (
    await db()
      .selectFrom('collected_keys')
      .select('key')
      .where('integration_id', '=', integrationId)
      .where('stream', '=', stream)
      .execute()
  )
    .map((r) => r.key)
    .sort();

describe('a collection cycle', () => {
  it('collects every event of a date stream and an opaque stream exactly once, page by page', async () => {
    const { vendor, integrationId } = await scenario('collect-all');
    const eventIds = vendor.addEvents('events', 35);
    const alertIds = vendor.addEvents('alerts', 25);
    const engine = t.container.collection.engine;

    const first = await engine.runCycle(integrationId, 'events');
    expect(first).toMatchObject({ status: 'succeeded', pages: 4, events: 35, capped: false, error: null });
    const s = await state(integrationId, 'events');
    expect(s).toMatchObject({
      cursor: null,
      consecutive_failures: 0,
      last_run_capped: false,
      last_error: null,
      last_events: 35,
      events_total: 35,
    });
    expect(s.watermark_at!.getTime()).toBeGreaterThan(Date.now() - 60_000);
    expect(s.last_success_at).not.toBeNull();
    expect(await engine.getRun(first.run_id)).toMatchObject({
      status: 'succeeded',
      pages: 4,
      events: 35,
      reason: 'trigger',
    });

    const alerts = await engine.runCycle(integrationId, 'alerts');
    expect(alerts).toMatchObject({ status: 'succeeded', pages: 3, events: 25 });
    expect((await state(integrationId, 'alerts')).watermark_at).toBeNull();

    expect(await counted(integrationId, 'events', 35)).toEqual({ events_in: 35, duplicates: 0 });
    expect(await counted(integrationId, 'alerts', 25)).toEqual({ events_in: 25, duplicates: 0 });
    expect(await keys(integrationId, 'events')).toEqual([...eventIds].sort());
    expect(await keys(integrationId, 'alerts')).toEqual([...alertIds].sort());

    // Caught up: nothing new; then only what the vendor added since.
    expect(await engine.runCycle(integrationId, 'events')).toMatchObject({ status: 'succeeded', events: 0 });
    vendor.addEvents('alerts', 3);
    expect(await engine.runCycle(integrationId, 'alerts')).toMatchObject({ status: 'succeeded', events: 3 });
    expect(await counted(integrationId, 'alerts', 28)).toEqual({ events_in: 28, duplicates: 0 });

    const usage = await db()
      .selectFrom('collector_usage')
      .selectAll()
      .where('integration_id', '=', integrationId)
      .where('stream', '=', 'events')
      .executeTakeFirstOrThrow();
    expect(usage).toMatchObject({ pages: 5, events: 35, filtered: 0, errors: 0, rate_limited: 0 });
    expect(usage.requests).toBe(5);
    expect(usage.bytes).toBeGreaterThan(0);
  });

  it('does not move the cursor past a page whose acceptance failed, and the next cycle resumes there', async () => {
    const { vendor, integrationId } = await scenario('accept-fails');
    const ids = vendor.addEvents('events', 25);
    let accepts = 0;
    const refusing: AcceptBatch = async (batch) => {
      if (++accepts > 1) throw new Error('queue refused the batch');
      await t.container.ingest.accept(batch);
    };
    const failed = await engineWith({ accept: refusing }).runCycle(integrationId, 'events');
    expect(failed).toMatchObject({ status: 'failed', pages: 1, events: 10, error: 'queue refused the batch' });
    const s = await state(integrationId, 'events');
    // Page 1 was accepted: the cursor points at page 2 of the same window; no window completed.
    expect(parseDateCursor(s.cursor)).toMatchObject({ page: '10' });
    expect(s.watermark_at).toBeNull();
    expect(s).toMatchObject({ consecutive_failures: 1, last_error: 'queue refused the batch', events_total: 10 });
    expect(s.next_run_at!.getTime()).toBeGreaterThan(Date.now() + 20_000);

    const resumed = await t.container.collection.engine.runCycle(integrationId, 'events');
    // Pages 2 and 3 of the open window, then the window that opened since (empty).
    expect(resumed).toMatchObject({ status: 'succeeded', events: 15 });
    expect(resumed.pages).toBeGreaterThanOrEqual(2);
    expect(await counted(integrationId, 'events', 25)).toEqual({ events_in: 25, duplicates: 0 });
    expect(await keys(integrationId, 'events')).toEqual([...ids].sort());
    expect(await state(integrationId, 'events')).toMatchObject({
      consecutive_failures: 0,
      last_error: null,
      cursor: null,
    });
  });

  it('skips a cycle whose stream is still locked, and counts it', async () => {
    const { integrationId } = await scenario('locked');
    const tel = testTelemetry();
    const engine = engineWith({ telemetry: tel.telemetry });
    const lease = await t.container.lock.acquire(`collect:${integrationId}:events`, 30_000);
    try {
      const skipped = await engine.runCycle(integrationId, 'events');
      expect(skipped).toMatchObject({ status: 'skipped_locked', pages: 0 });
      expect(await engine.getRun(skipped.run_id)).toMatchObject({ status: 'skipped_locked' });
      await engine.runCycle(integrationId, 'events');
    } finally {
      await lease!.release();
    }
    expect((await state(integrationId, 'events')).cycles_skipped_locked).toBe(2);
    expect(await tel.points('collector_cycles_skipped_locked_total')).toEqual([
      { attributes: { integration_id: String(integrationId), stream: 'events' }, value: 2 },
    ]);
    expect(await engine.runCycle(integrationId, 'events')).toMatchObject({ status: 'succeeded' });
    await tel.shutdown();
  });

  it('stops at the page ceiling with last_run_capped, and the next cycles continue until the backlog is done', async () => {
    const { vendor, integrationId } = await scenario('capped');
    vendor.addEvents('events', 45);
    const engine = engineWith({ settings: { max_pages_per_cycle: 2 } });
    expect(await engine.runCycle(integrationId, 'events')).toMatchObject({
      status: 'succeeded',
      pages: 2,
      events: 20,
      capped: true,
    });
    const s = await state(integrationId, 'events');
    expect(s.last_run_capped).toBe(true);
    expect(s.next_run_at!.getTime()).toBeLessThanOrEqual(Date.now());
    expect(parseDateCursor(s.cursor)?.page).toBe('20');
    expect(await engine.runCycle(integrationId, 'events')).toMatchObject({ pages: 2, events: 20, capped: true });
    expect(await engine.runCycle(integrationId, 'events')).toMatchObject({ events: 5, capped: false });
    expect((await state(integrationId, 'events')).last_run_capped).toBe(false);
    expect(await counted(integrationId, 'events', 45)).toEqual({ events_in: 45, duplicates: 0 });
  });

  it("pauses with its cursor where it is while the pipeline refuses the integration's events (backlog budget, disk floor), and says why in the state", async () => {
    const { vendor, integrationId, admin } = await scenario('paused');
    vendor.addEvents('events', 35);
    const full = Object.assign(new Error('Destination "s3" (d1) has 600000 events waiting, over its backlog budget'), {
      code: 'delivery.backlog_full',
    });
    let refuseAfter = 0;
    let checks = 0;
    const admission: Admission = {
      check: async () => (++checks > refuseAfter ? full : undefined),
      checkNow: () => undefined,
    };
    const engine = engineWith({ admission });
    // Refused from the start: no page is fetched, the cursor does not move.
    const paused = await engine.runCycle(integrationId, 'events');
    expect(paused).toMatchObject({ status: 'paused', pages: 0, events: 0, error: full.message });
    expect(await engine.getRun(paused.run_id)).toMatchObject({ status: 'paused' });
    expect(vendor.requests).toBe(0);
    const listed = await t.app.inject({
      method: 'GET',
      url: `/api/collectors/state?integration_id=${integrationId}`,
      headers: admin.headers,
    });
    expect(
      listed.json<{ paused_reason: string | null; stream: string }[]>().find((r) => r.stream === 'events'),
    ).toMatchObject({ paused_reason: full.message });
    // Refused after the first page: the cycle ends there (capped, the cursor after page 1).
    refuseAfter = checks + 1;
    expect(await engine.runCycle(integrationId, 'events')).toMatchObject({
      status: 'succeeded',
      pages: 1,
      events: 10,
      capped: true,
    });
    expect(parseDateCursor((await state(integrationId, 'events')).cursor)?.page).toBe('10');
    // Admitted again: the rest, and the reason is gone.
    refuseAfter = Number.POSITIVE_INFINITY;
    expect(await engine.runCycle(integrationId, 'events')).toMatchObject({
      status: 'succeeded',
      events: 25,
      capped: false,
    });
    expect(await state(integrationId, 'events')).toMatchObject({ paused_reason: null });
    expect(await counted(integrationId, 'events', 35)).toEqual({ events_in: 35, duplicates: 0 });
  });

  it('keeps its lock through a page slower than the lock lease', async () => {
    const { vendor, integrationId } = await scenario('slow-pages', {}, { pageDelayMs: 1_300 });
    vendor.addEvents('alerts', 15);
    expect(await engineWith({ lockTtlMs: 900 }).runCycle(integrationId, 'alerts')).toMatchObject({
      status: 'succeeded',
      pages: 2,
      events: 15,
    });
  });

  it('counts failures with their message, backs off (Retry-After wins), and recovers', async () => {
    const { vendor, integrationId } = await scenario('failing');
    vendor.addEvents('events', 3);
    const engine = t.container.collection.engine;
    vendor.badRequest(1);
    const before = Date.now();
    expect(await engine.runCycle(integrationId, 'events')).toMatchObject({ status: 'failed' });
    let s = await state(integrationId, 'events');
    expect(s.consecutive_failures).toBe(1);
    expect(s.last_error).toMatch(/HTTP 400/);
    expect(s.last_error).not.toContain(vendor.token);
    expect(s.next_run_at!.getTime() - before).toBeGreaterThanOrEqual(30_000);
    expect(s.next_run_at!.getTime() - before).toBeLessThan(40_000);

    vendor.badRequest(1);
    await engine.runCycle(integrationId, 'events');
    s = await state(integrationId, 'events');
    expect(s.consecutive_failures).toBe(2);
    expect(s.next_run_at!.getTime() - Date.now()).toBeGreaterThan(50_000);

    // A Retry-After longer than a cycle may wait: rate_limited, and the next run honours it.
    vendor.rateLimit(1, 7200);
    await engine.runCycle(integrationId, 'events');
    s = await state(integrationId, 'events');
    expect(s.consecutive_failures).toBe(3);
    expect(s.last_error).toMatch(/rate limited/);
    expect(s.next_run_at!.getTime() - Date.now()).toBeGreaterThan(7_000_000);
    expect(
      await db()
        .selectFrom('collector_usage')
        .select(['rate_limited', 'errors'])
        .where('integration_id', '=', integrationId)
        .executeTakeFirstOrThrow(),
    ).toMatchObject({ rate_limited: 1, errors: 2 });

    expect(await engine.runCycle(integrationId, 'events')).toMatchObject({ status: 'succeeded', events: 3 });
    s = await state(integrationId, 'events');
    expect(s).toMatchObject({ consecutive_failures: 0, last_error: null });
    expect(s.last_error_at).not.toBeNull();
  });

  it('records a gap when the watermark fell behind the vendor retention and restarts at the retention limit', async () => {
    const { vendor, integrationId, orgId } = await scenario('gap');
    const old = new Date(Date.now() - 10 * 86_400_000);
    await db()
      .insertInto('collector_state')
      .values({ integration_id: integrationId, stream: 'events', organization_id: orgId, watermark_at: old })
      .execute();
    vendor.addEvents('events', 4);
    const outcome = await t.container.collection.engine.runCycle(integrationId, 'events');
    expect(outcome).toMatchObject({ status: 'succeeded', events: 4 });
    const s = await state(integrationId, 'events');
    expect(s.gap_from).toEqual(old);
    expect(Math.abs(s.gap_to!.getTime() - (Date.now() - 7 * 86_400_000))).toBeLessThan(60_000);
    expect(s.gap_detected_at).not.toBeNull();
    expect(s.watermark_at!.getTime()).toBeGreaterThan(Date.now() - 60_000);
  });

  it('drops events the collection filters exclude (counted as filtered) and stops cleanly on shutdown', async () => {
    const { vendor, integrationId } = await scenario('filtered', {}, { pageDelayMs: 0 });
    const ids = vendor.addEvents('alerts', 12);
    await db()
      .updateTable('integrations')
      .set({ collection_filters: JSON.stringify({ exclude: [{ field: 'id', op: 'in', value: ids.slice(0, 4) }] }) })
      .where('id', '=', integrationId)
      .execute();
    expect(await t.container.collection.engine.runCycle(integrationId, 'alerts')).toMatchObject({
      status: 'succeeded',
      events: 8,
    });
    expect(
      await db()
        .selectFrom('collector_usage')
        .select(['events', 'filtered'])
        .where('integration_id', '=', integrationId)
        .executeTakeFirstOrThrow(),
    ).toEqual({ events: 8, filtered: 4 });

    vendor.addEvents('alerts', 30);
    vendor.pageDelayMs = 400;
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 600);
    const stopped = await t.container.collection.engine.runCycle(integrationId, 'alerts', controller.signal);
    expect(stopped.status).toBe('failed');
    expect(stopped.error).toMatch(/stopped/);
    const s = await state(integrationId, 'alerts');
    // Stopping is not a vendor failure: nothing counted, the cursor keeps what was accepted.
    expect(s.consecutive_failures).toBe(0);
    vendor.pageDelayMs = 0;
    expect(await t.container.collection.engine.runCycle(integrationId, 'alerts')).toMatchObject({
      status: 'succeeded',
      events: 30 - stopped.events,
    });
  });
});
