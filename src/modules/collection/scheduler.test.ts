// The beat's side of collection: which streams it enqueues and when, idempotence of a slot,
// the pause switch, housekeeping, and the lag gauges read from the state rows.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/support/app.js';
import { testTelemetry } from '../../../test/support/delivery-engine.js';
import { createOrganization } from '../../../test/support/identity.js';
import { FAKE_PLATFORM, fakeVendorConnector } from '../../../test/support/vendors/fake-vendor.js';
import { registerConnector } from '../../connectors/index.js';
import { newId } from '../../core/ids.js';
import { disabledTelemetry, type Telemetry } from '../../platform/telemetry/index.js';
import { DEFAULT_COLLECTOR_SETTINGS, type CollectorSettings } from '../collector-config/settings.js';
import { COLLECT_QUEUE, wireCollection } from './index.js';
import { collectionTasks, SCHEDULE_TASK } from './jobs.js';

registerConnector(fakeVendorConnector);

let t: TestApp;
const db = () => t.container.database.db;

beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t?.close());

function engineWith(o: { settings?: Partial<CollectorSettings>; telemetry?: Telemetry } = {}) {
  const c = t.container;
  return wireCollection({
    db: c.database.db,
    clock: c.clock,
    logger: c.logger,
    telemetry: o.telemetry ?? disabledTelemetry(),
    queue: c.queue,
    accept: c.ingest.accept,
    lock: c.lock,
    config: c.config.collection,
    integrations: c.integrations.service,
    runtime: c.connectorRuntime,
    settings: { current: async () => ({ ...DEFAULT_COLLECTOR_SETTINGS, ...o.settings }) },
    observeGauges: Boolean(o.telemetry),
  });
}

async function integration(
  orgId: number,
  config: Record<string, unknown>,
  extra: { is_active?: boolean; collection_filters?: object; platform?: string } = {},
) {
  const row = await db()
    .insertInto('integrations')
    .values({
      organization_id: orgId,
      name: `i-${newId()}`,
      platform: extra.platform ?? FAKE_PLATFORM,
      is_active: extra.is_active ?? true,
      config: JSON.stringify({ base_url: 'http://127.0.0.1:9', api_token: 'token-xyz', ...config }),
      ...(extra.collection_filters ? { collection_filters: JSON.stringify(extra.collection_filters) } : {}),
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

const runsOf = (integrationId: number) =>
  db()
    .selectFrom('collector_runs')
    .selectAll()
    .where('integration_id', '=', integrationId)
    .orderBy('created_at')
    .execute();
const stateOf = (integrationId: number) =>
  db()
    .selectFrom('collector_state')
    .selectAll()
    .where('integration_id', '=', integrationId)
    .orderBy('stream')
    .execute();

describe('collection.schedule', () => {
  it('enqueues one cycle per due stream of every collecting integration, then waits for the interval', async () => {
    const org = await createOrganization(t, 'schedule');
    const collecting = await integration(org, { collect: true, interval_seconds: 120 });
    const notCollecting = await integration(org, { collect: false });
    const inactive = await integration(org, { collect: true }, { is_active: false });
    const partner = await integration(org, { collect: true, partner: true });
    const onlyAlerts = await integration(org, { collect: true }, { collection_filters: { streams: ['alerts'] } });
    const push = await integration(org, { collect: true }, { platform: 'custom' });
    const { engine } = engineWith();
    const waitingBefore = (await t.container.queue.counts(COLLECT_QUEUE)).waiting;

    const now = new Date();
    await engine.schedule(now);
    expect((await runsOf(collecting)).map((r) => [r.stream, r.reason, r.status])).toEqual(
      expect.arrayContaining([
        ['events', 'schedule', 'queued'],
        ['alerts', 'schedule', 'queued'],
      ]),
    );
    expect(await runsOf(collecting)).toHaveLength(2);
    for (const id of [notCollecting, inactive, partner, push]) expect(await runsOf(id)).toEqual([]);
    expect((await runsOf(onlyAlerts)).map((r) => r.stream)).toEqual(['alerts']);
    const states = await stateOf(collecting);
    // The integration's interval wins over the stream's (60 s).
    for (const s of states) expect(s.next_run_at!.getTime()).toBe(now.getTime() + 120_000);
    expect((await t.container.queue.counts(COLLECT_QUEUE)).waiting - waitingBefore).toBe(3);

    // Not due again before the interval; due after it (a new slot, a new job).
    await engine.schedule(new Date(now.getTime() + 60_000));
    expect(await runsOf(collecting)).toHaveLength(2);
    await engine.schedule(new Date(now.getTime() + 121_000));
    expect(await runsOf(collecting)).toHaveLength(4);
    const onlyAlertsStates = await stateOf(onlyAlerts);
    // The stream's own interval when the integration sets none.
    expect(onlyAlertsStates.map((s) => s.next_run_at!.getTime())).toEqual([now.getTime() + 121_000 + 60_000]);
  });

  it('is idempotent per slot: a second scheduler reading the same state enqueues nothing new', async () => {
    const org = await createOrganization(t, 'idempotent');
    const id = await integration(org, { collect: true });
    const a = engineWith().engine;
    const b = engineWith().engine;
    const now = new Date();
    await Promise.all([a.schedule(now), b.schedule(now)]);
    expect(await runsOf(id)).toHaveLength(2);
    expect((await stateOf(id)).map((s) => s.next_run_at!.getTime())).toEqual([
      now.getTime() + 60_000,
      now.getTime() + 60_000,
    ]);
  });

  it('enqueues nothing while collection is paused, and is a beat task of its own period', async () => {
    const org = await createOrganization(t, 'paused');
    const id = await integration(org, { collect: true });
    const paused = engineWith({ settings: { paused: true } });
    await paused.engine.schedule(new Date());
    expect(await runsOf(id)).toEqual([]);
    const tasks = collectionTasks({
      scheduler: { schedule: async () => 0, housekeeping: async () => ({ keys: 0, runs: 0 }) },
      queue: t.container.queue,
      scheduleMs: 1234,
    });
    expect(tasks.find((task) => task.name === SCHEDULE_TASK)?.everyMs).toBe(1234);
    expect(t.container.beatTasks.map((task) => task.name)).toContain(SCHEDULE_TASK);
  });

  it('housekeeping drops dedup keys older than the deduplication period and runs older than 7 days', async () => {
    const org = await createOrganization(t, 'housekeeping');
    const id = await integration(org, { collect: true });
    const now = Date.now();
    await db()
      .insertInto('collected_keys')
      .values([
        { integration_id: id, stream: 'events', key: 'old', seen_at: new Date(now - 3 * 3_600_000) },
        { integration_id: id, stream: 'events', key: 'young', seen_at: new Date(now - 60_000) },
      ])
      .execute();
    const run = (rid: string, ageMs: number, status: 'succeeded' | 'running') => ({
      id: rid,
      organization_id: org,
      integration_id: id,
      stream: 'events',
      reason: 'schedule' as const,
      status,
      created_at: new Date(now - ageMs),
    });
    await db()
      .insertInto('collector_runs')
      .values([
        run('old-run', 8 * 86_400_000, 'succeeded'),
        run('recent-run', 86_400_000, 'succeeded'),
        run('old-running', 8 * 86_400_000, 'running'),
      ])
      .execute();
    const removed = await engineWith({ settings: { dedup_hours: 2 } }).engine.housekeeping();
    expect(removed.keys).toBeGreaterThanOrEqual(1);
    expect(
      (await db().selectFrom('collected_keys').select('key').where('integration_id', '=', id).execute()).map(
        (r) => r.key,
      ),
    ).toEqual(['young']);
    expect((await runsOf(id)).map((r) => r.id).sort()).toEqual(['old-running', 'recent-run']);
  });

  it('reports watermark lag for date streams only, and cursor lag from the last success', async () => {
    const org = await createOrganization(t, 'gauges');
    const id = await integration(org, { collect: true });
    const now = Date.now();
    await db()
      .insertInto('collector_state')
      .values([
        {
          integration_id: id,
          stream: 'events',
          organization_id: org,
          watermark_at: new Date(now - 3_600_000),
          last_success_at: new Date(now - 5_000),
        },
        {
          integration_id: id,
          stream: 'alerts',
          organization_id: org,
          cursor: '42',
          last_success_at: new Date(now - 10_000),
        },
      ])
      .execute();
    const tel = testTelemetry();
    engineWith({ telemetry: tel.telemetry });
    const mine = (points: { attributes: Record<string, unknown>; value: number }[]) =>
      points.filter((p) => p.attributes.integration_id === String(id));
    const watermark = mine(await tel.points('collector_watermark_lag_seconds'));
    expect(watermark.map((p) => p.attributes.stream)).toEqual(['events']);
    expect(watermark[0]!.value).toBeGreaterThanOrEqual(3600);
    expect(watermark[0]!.value).toBeLessThan(3700);
    const cursor = mine(await tel.points('collector_cursor_lag_seconds'));
    expect(Object.fromEntries(cursor.map((p) => [p.attributes.stream, p.value]))).toMatchObject({
      events: expect.any(Number),
      alerts: expect.any(Number),
    });
    expect(cursor.find((p) => p.attributes.stream === 'events')!.value).toBeLessThan(60);
    await tel.shutdown();
  });
});
