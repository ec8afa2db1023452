// Pipeline health: collection per stream from collector_state (statuses, lag, gaps against
// the connector's retention), quarantine, new fields, events in; scoping; the 60 s cache
// (per caller for the list, per integration for one, shared among readers).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/support/app.js';
import { createOrganization, createPrincipal, type Principal } from '../../../test/support/identity.js';
import { quarantine } from '../../../test/support/quarantine.js';
import { registerConnector } from '../../connectors/index.js';
import { DAY_MS, pullConfigSchema, VendorError, type Connector } from '../../connectors/sdk.js';
import { manualClock } from '../../core/clock.js';
import { newId } from '../../core/ids.js';
import { wirePipelineHealth } from './index.js';

type Json = Record<string, unknown>;
type Health = Json & {
  status: string;
  issues: string[];
  collection: { mode: string; collecting: boolean; streams: Json[] };
  quarantine: Json;
  new_fields: { count: number; paths: Json[] };
  events_in: Json;
};

const fake: Connector = {
  platform: 'health_vendor',
  display_name: 'Health vendor',
  vendor: 'Test',
  description: 'A connector that is never called: pipeline health reads stored data only.',
  auth: 'api_token',
  config_schema: pullConfigSchema({ api_key: { type: 'string', writeOnly: true } }, ['api_key']),
  streams: [
    {
      name: 'events',
      display_name: 'Events',
      description: 'date',
      cursor: 'date',
      defaultWindowMs: 3_600_000,
      intervalMs: 300_000,
      retentionDays: 7,
      pageSize: 100,
      maxWindowMs: DAY_MS,
      settleMs: 0,
    },
    {
      name: 'feed',
      display_name: 'Feed',
      description: 'opaque',
      cursor: 'opaque',
      defaultWindowMs: 3_600_000,
      intervalMs: 60_000,
      retentionDays: 30,
      pageSize: 100,
      maxWindowMs: DAY_MS,
      settleMs: 0,
    },
  ],
  fetchPage: () => Promise.reject(new VendorError('unavailable', 'never called')),
  test: () => Promise.reject(new VendorError('unavailable', 'never called')),
};
registerConnector(fake);

let t: TestApp;
let orgA: number;
let orgB: number;
let pullA: number;
let pullA2: number;
let pushA: number;
let offA: number;
let intB: number;
let viewerA: Principal;
let root: Principal;

async function integration(
  organizationId: number,
  platform: string,
  config: Json = {},
  isActive = true,
): Promise<number> {
  const row = await t.container.database.db
    .insertInto('integrations')
    .values({
      organization_id: organizationId,
      name: `i-${newId()}`,
      platform,
      config: JSON.stringify(config),
      is_active: isActive,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

async function state(integrationId: number, stream: string, values: Json): Promise<void> {
  await t.container.database.db
    .insertInto('collector_state')
    .values({ integration_id: integrationId, stream, organization_id: orgA, ...values })
    .onConflict((oc) => oc.columns(['integration_id', 'stream']).doUpdateSet(values))
    .execute();
}

const ago = (ms: number) => new Date(Date.now() - ms);
const get = (who: Principal, url: string) => t.app.inject({ method: 'GET', url, headers: who.headers });
const one = async (who: Principal, id: number) => {
  const res = await get(who, `/api/integrations/${id}/pipeline-health`);
  expect(res.statusCode, res.body).toBe(200);
  return res.json<Health & { cached_at: string }>();
};
const stream = (h: Health, name: string) => h.collection.streams.find((s) => s.stream === name);

beforeAll(async () => {
  t = await createTestApp({ env: { WEIR_TOKEN_RATE_LIMIT: '1000000' } });
  orgA = await createOrganization(t, 'Org A');
  orgB = await createOrganization(t, 'Org B');
  pullA = await integration(orgA, 'health_vendor', { collect: true, api_key: 'k' });
  pullA2 = await integration(orgA, 'health_vendor', { collect: true, api_key: 'k' });
  pushA = await integration(orgA, 'custom');
  offA = await integration(orgA, 'health_vendor', { collect: true, api_key: 'k' }, false);
  intB = await integration(orgB, 'custom');
  viewerA = await createPrincipal(t, { role: 'viewer', organizationId: orgA });
  root = await createPrincipal(t, { role: 'admin' });
  // pullA: the date stream's watermark is older than the vendor's 7-day retention; the feed fails.
  await state(pullA, 'events', {
    watermark_at: ago(10 * DAY_MS),
    last_run_at: ago(60_000),
    last_success_at: ago(60_000),
  });
  await state(pullA, 'feed', {
    last_run_at: ago(60_000),
    last_success_at: ago(3_600_000),
    consecutive_failures: 2,
    last_error: 'vendor answered 503',
  });
  // pullA2: caught up, with a gap the collector recorded yesterday; the feed stopped at its ceiling.
  await state(pullA2, 'events', {
    watermark_at: ago(120_000),
    last_run_at: ago(60_000),
    last_success_at: ago(60_000),
    gap_from: ago(9 * DAY_MS),
    gap_to: ago(7 * DAY_MS),
    gap_detected_at: ago(DAY_MS),
  });
  await state(pullA2, 'feed', { last_run_at: ago(60_000), last_success_at: ago(60_000), last_run_capped: true });
});
afterAll(async () => t?.close());

describe('GET /api/integrations/{integration_id}/pipeline-health', () => {
  it('reports a watermark behind the vendor retention as a gap, and a failing stream', async () => {
    const h = await one(viewerA, pullA);
    expect(h).toMatchObject({
      integration_id: pullA,
      platform: 'health_vendor',
      organization_id: orgA,
      is_active: true,
      status: 'failing',
    });
    expect(h.collection).toMatchObject({ mode: 'pull', collecting: true });
    const events = stream(h, 'events')!;
    expect(events).toMatchObject({
      status: 'lagging',
      cursor: 'date',
      consecutive_failures: 0,
      gap: { recorded: false, detected_at: null },
    });
    expect(Number(events.lag_seconds)).toBeGreaterThanOrEqual(10 * 86_400 - 5);
    const gap = events.gap as { from: string; to: string };
    expect(Date.parse(gap.from)).toBe(Date.parse(String(events.watermark_at)));
    expect(Math.abs(Date.parse(gap.to) - (Date.now() - 7 * DAY_MS))).toBeLessThan(60_000);
    expect(stream(h, 'feed')).toMatchObject({
      status: 'failing',
      cursor: 'opaque',
      lag_seconds: null,
      watermark_at: null,
      consecutive_failures: 2,
      last_error: 'vendor answered 503',
    });
    expect(h.issues.join('\n')).toMatch(/feed: 2 failed cycle\(s\) in a row: vendor answered 503/);
    expect(h.issues.join('\n')).toMatch(/events: losing data between/);
    expect(h.cached_at).toMatch(/Z$/);
  });

  it('reports a recorded gap, a capped stream, and never_run streams', async () => {
    const h = await one(viewerA, pullA2);
    expect(h.status).toBe('degraded');
    expect(stream(h, 'events')).toMatchObject({ status: 'ok', gap: { recorded: true } });
    expect(Date.parse(String((stream(h, 'events')!.gap as Json).detected_at))).toBeLessThan(Date.now());
    expect(stream(h, 'feed')).toMatchObject({ status: 'capped', last_run_capped: true });
    const fresh = await integration(orgA, 'health_vendor', { collect: true, api_key: 'k' });
    const n = await one(viewerA, fresh);
    expect(n.collection.streams.map((s) => [s.stream, s.status])).toEqual([
      ['events', 'never_run'],
      ['feed', 'never_run'],
    ]);
    expect(n.status).toBe('idle');
    const off = await one(viewerA, offA);
    expect(off).toMatchObject({ status: 'inactive', collection: { collecting: false, streams: [] } });
  });

  it('counts quarantine, new fields and events in from stored data', async () => {
    await quarantine(t, [
      { organizationId: orgA, integrationId: pushA, errorKind: 'no_mapping', createdAt: ago(3_600_000) },
      { organizationId: orgA, integrationId: pushA, errorKind: 'cast_failed', createdAt: ago(3 * DAY_MS) },
      {
        organizationId: orgA,
        integrationId: pushA,
        errorKind: 'cast_failed',
        createdAt: ago(2 * DAY_MS),
        status: 'reprocessed',
      },
    ]);
    const db = t.container.database.db;
    await db
      .insertInto('drift_fields')
      .values(
        Array.from({ length: 7 }, (_, i) => ({
          id: newId(),
          organization_id: orgA,
          integration_id: pushA,
          stream: 'events',
          path: `extra.f${i}`,
          value_type: 'string',
          first_seen_at: ago(DAY_MS),
          last_seen_at: ago(1000 * (10 - i)),
        })),
      )
      .execute();
    await db
      .insertInto('drift_fields')
      .values({
        id: newId(),
        organization_id: orgA,
        integration_id: pushA,
        stream: 'events',
        path: 'ignored.one',
        value_type: 'string',
        status: 'ignored',
        first_seen_at: ago(DAY_MS),
        last_seen_at: ago(0),
      })
      .execute();
    const today = new Date().toISOString().slice(0, 10);
    await db
      .insertInto('stream_counters')
      .values([
        {
          organization_id: orgA,
          integration_id: pushA,
          stream: 'events',
          day: today,
          events_in: 40,
          last_event_at: ago(5_000),
        },
        {
          organization_id: orgA,
          integration_id: pushA,
          stream: 'audit',
          day: today,
          events_in: 2,
          last_event_at: ago(50_000),
        },
        { organization_id: orgA, integration_id: pushA, stream: 'events', day: '2020-01-01', events_in: 1_000 },
      ])
      .execute();
    const h = await one(viewerA, pushA);
    expect(h).toMatchObject({ status: 'degraded', collection: { mode: 'push', collecting: false, streams: [] } });
    expect(h.quarantine).toEqual({ open: 2, last_24h: 1, by_error_kind: { no_mapping: 1, cast_failed: 1 } });
    expect(h.new_fields.count).toBe(7);
    expect(h.new_fields.paths.map((p) => p.path)).toEqual(['extra.f6', 'extra.f5', 'extra.f4', 'extra.f3', 'extra.f2']);
    expect(h.events_in).toMatchObject({ total: 42, by_stream: { events: 40, audit: 2 } });
    expect(Date.parse(String(h.events_in.last_event_at))).toBeGreaterThan(Date.now() - 10_000);
  });

  it("is 404 outside the caller's scope and for unknown integrations", async () => {
    expect((await get(viewerA, `/api/integrations/${intB}/pipeline-health`)).statusCode).toBe(404);
    expect((await get(viewerA, '/api/integrations/2000000000/pipeline-health')).statusCode).toBe(404);
    expect((await get(root, `/api/integrations/${intB}/pipeline-health`)).statusCode).toBe(200);
  });
});

describe('GET /api/integrations/pipeline-health', () => {
  it('lists every integration of the scope (the static path is not taken for an integration id)', async () => {
    const res = await get(viewerA, '/api/integrations/pipeline-health');
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json<{ cached_at: string; items: Health[] }>();
    const ids = body.items.map((i) => i.integration_id);
    expect(ids).toEqual(expect.arrayContaining([pullA, pullA2, pushA, offA]));
    expect(ids).not.toContain(intB);
    expect(body.items.find((i) => i.integration_id === pullA)?.status).toBe('failing');
    const all = (await get(root, '/api/integrations/pipeline-health')).json<{ items: Health[] }>();
    expect(all.items.map((i) => i.integration_id)).toContain(intB);
    const doc = (await t.app.inject({ method: 'GET', url: '/api/openapi.json' })).json<{
      paths: Record<string, Json>;
    }>();
    expect(doc.paths['/api/integrations/pipeline-health']?.get).toBeDefined();
    expect(doc.paths['/api/integrations/{integration_id}/pipeline-health']?.get).toBeDefined();
  });
});

describe('the 60 s cache', () => {
  it('keeps the list per caller: the same answer within 60 s, another user computes their own', async () => {
    const first = await createPrincipal(t, { role: 'viewer', organizationId: orgA });
    const second = await createPrincipal(t, { role: 'viewer', organizationId: orgA });
    const before = (await get(first, '/api/integrations/pipeline-health')).json<{
      cached_at: string;
      items: Health[];
    }>();
    const openOf = (b: { items: Health[] }) => Number(b.items.find((i) => i.integration_id === pushA)!.quarantine.open);
    await quarantine(t, [{ organizationId: orgA, integrationId: pushA, createdAt: ago(60_000) }]);
    const again = (await get(first, '/api/integrations/pipeline-health')).json<{
      cached_at: string;
      items: Health[];
    }>();
    expect(again).toEqual(before);
    const other = (await get(second, '/api/integrations/pipeline-health')).json<{
      cached_at: string;
      items: Health[];
    }>();
    expect(openOf(other)).toBe(openOf(before) + 1);
    expect(Date.parse(other.cached_at)).toBeGreaterThanOrEqual(Date.parse(before.cached_at));
    expect(await t.container.cache.ttl(`pipeline-health:list:user:${first.id}:${orgA}`)).toBeGreaterThan(50_000);
  });

  it("shares one integration's answer among its readers until it expires", async () => {
    const a = await createPrincipal(t, { role: 'viewer', organizationId: orgA });
    const id = await integration(orgA, 'health_vendor', { collect: true, api_key: 'k' });
    const first = await one(a, id);
    await state(id, 'feed', { last_run_at: ago(1000), consecutive_failures: 5 });
    expect(await one(root, id)).toEqual(first);

    // The same service with a short life and a test clock: a new answer once it expired.
    const clock = manualClock(new Date('2030-01-01T00:00:00Z'));
    const short = wirePipelineHealth({
      db: t.container.database.db,
      cache: t.container.cache,
      clock,
      settings: { current: async () => ({ default_interval_seconds: 300 }) as never },
      ttlMs: 200,
    });
    await t.container.cache.del(`pipeline-health:integration:${id}`);
    const scope = { global: false, organizationIds: [orgA] };
    const x = await short.service.get(scope, id);
    clock.advance(30_000);
    const y = await short.service.get(scope, id);
    // A computed answer holds Dates; the cached one their JSON form.
    expect(new Date(y.cached_at).toISOString()).toBe(new Date(x.cached_at).toISOString());
    await new Promise((r) => setTimeout(r, 300));
    const z = await short.service.get(scope, id);
    expect(new Date(z.cached_at).toISOString()).toBe('2030-01-01T00:00:30.000Z');
    expect(z.status).toBe('failing');
  });
});
