import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/support/app.js';
import {
  createOrganization,
  createPrincipal,
  type Principal,
  insertDestination,
} from '../../../test/support/identity.js';
import { integration } from '../../../test/support/quarantine.js';
import { newId } from '../../core/ids.js';

let t: TestApp;
let orgA: number;
let orgB: number;
let intA: number;
let root: Principal;
let adminA: Principal;
let viewerA: Principal;

type Json = Record<string, unknown>;
const db = () => t.container.database.db;
const HOUR = 3_600_000;
const hourStart = (ms: number) => new Date(Math.floor(ms / HOUR) * HOUR);

function call(who: Principal, url: string) {
  return t.app.inject({ method: 'GET', url, headers: who.headers });
}

const destination = (
  organizationId: number | null,
  name: string,
  extra: { enabled?: boolean; disabled_reason?: string } = {},
) =>
  insertDestination(t, organizationId, name, {
    enabled: extra.enabled ?? true,
    disabled_reason: extra.disabled_reason ?? null,
  });

async function outbox(
  destinationId: string,
  organizationId: number,
  events: number,
  createdAt: Date,
  kind: 'primary' | 'shadow' | 'reprocess' = 'primary',
) {
  await db()
    .insertInto('delivery_batches')
    .values({
      id: newId(),
      destination_id: destinationId,
      organization_id: organizationId,
      integration_id: intA,
      stream: 'events',
      source_batch_id: newId(),
      kind,
      event_count: events,
      bytes: 10,
      event_ids: '',
      events: '',
      created_at: createdAt,
    })
    .execute();
}

async function stats(
  destinationId: string,
  hour: Date,
  values: {
    delivered?: number;
    requests?: number;
    failed_requests?: number;
    latency_ms_sum?: number;
    latency_ms_max?: number;
    bytes?: number;
  },
) {
  await db()
    .insertInto('destination_stats')
    .values({ destination_id: destinationId, hour, ...values })
    .execute();
}

beforeAll(async () => {
  t = await createTestApp({ env: { WEIR_TOKEN_RATE_LIMIT: '1000000' } });
  orgA = await createOrganization(t, 'Org A');
  orgB = await createOrganization(t, 'Org B');
  intA = await integration(t, orgA, 'a-push');
  root = await createPrincipal(t, { role: 'admin' });
  adminA = await createPrincipal(t, { role: 'admin', organizationId: orgA });
  viewerA = await createPrincipal(t, { role: 'viewer', organizationId: orgA });
});
afterAll(async () => t?.close());
beforeEach(async () => {
  for (const table of [
    'destinations',
    'destination_state',
    'destination_stats',
    'dlq_events',
    'delivery_batches',
    'ledger',
    'stream_counters',
    'tap_sessions',
    'tap_samples',
    'normalized_batches',
    'accepted_batches',
  ] as const) {
    await db().deleteFrom(table).execute();
  }
});

describe('GET /destinations/health (batch)', () => {
  it('answers every visible destination with its status, and the ledger of the scope', async () => {
    const now = Date.now();
    const idle = await destination(orgA, 'a-idle');
    const open = await destination(orgA, 'b-open');
    const busy = await destination(orgA, 'c-busy');
    const failing = await destination(orgA, 'd-failing');
    await destination(orgA, 'e-off', { enabled: false, disabled_reason: 'credential_revoked' });
    const global = await destination(null, 'f-global');
    await destination(orgB, 'b-only');
    await db()
      .insertInto('destination_state')
      .values({
        destination_id: open,
        breaker_state: 'open',
        consecutive_failures: 5,
        last_error: 'HTTP 503 password=hunter22',
        last_error_at: new Date(now - 1000),
      })
      .execute();
    await db()
      .insertInto('destination_state')
      .values({
        destination_id: failing,
        last_error: 'HTTP 400',
        last_error_at: new Date(now - 5000),
        last_success_at: new Date(now - 60_000),
      })
      .execute();
    await stats(busy, hourStart(now), { delivered: 40, requests: 2 });
    await stats(global, hourStart(now), { delivered: 7, requests: 1 });
    await outbox(busy, orgA, 5, new Date(now - 120_000));
    await outbox(busy, orgA, 100, new Date(now - 10_000), 'shadow');
    await db()
      .insertInto('dlq_events')
      .values({
        id: newId(),
        destination_id: failing,
        organization_id: orgA,
        integration_id: intA,
        stream: 'events',
        event_id: newId(),
        delivery_batch_id: newId(),
        event: '{}',
        error_kind: 'rejected',
        reason: 'HTTP 400',
        attempts: 1,
      })
      .execute();

    const res = await call(viewerA, '/api/collectors/destinations/health');
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json<{ items: Json[]; ledger: { totals: Json; rows: Json[] }; generated_at: string }>();
    expect(body.generated_at).toMatch(/Z$/);
    expect(body.items.map((i) => [i.name, i.status])).toEqual([
      ['a-idle', 'idle'],
      ['b-open', 'unhealthy'],
      ['c-busy', 'healthy'],
      ['d-failing', 'degraded'],
      ['e-off', 'unhealthy'],
      ['f-global', 'healthy'],
    ]);
    const byName = new Map(body.items.map((i) => [i.name, i]));
    expect(byName.get('a-idle')).toEqual({
      destination_id: idle,
      name: 'a-idle',
      type: 'http',
      organization_id: orgA,
      enabled: true,
      disabled_reason: null,
      breaker_state: 'closed',
      consecutive_failures: 0,
      dlq_count: 0,
      pending_events: 0,
      oldest_pending_at: null,
      lag_seconds: 0,
      last_success_at: null,
      current_error: null,
      last_error: null,
      last_error_at: null,
      last_test_at: null,
      last_test_ok: null,
      delivered_last_hour: 0,
      status: 'idle',
      backlog: {
        events: 0,
        bytes: 0,
        max_events: 500_000,
        max_bytes: 512 * 1_048_576,
        when_full: 'block',
        state: 'ok',
      },
    });
    expect(byName.get('b-open')).toMatchObject({
      breaker_state: 'open',
      consecutive_failures: 5,
      last_error_at: expect.stringMatching(/Z$/),
    });
    expect(String(byName.get('b-open')!.last_error)).not.toContain('hunter22');
    // Shadow rows are not this destination's backlog.
    expect(byName.get('c-busy')).toMatchObject({
      pending_events: 5,
      delivered_last_hour: 40,
      oldest_pending_at: expect.stringMatching(/Z$/),
    });
    expect(byName.get('c-busy')!.lag_seconds).toBeGreaterThanOrEqual(119);
    expect(byName.get('d-failing')).toMatchObject({ dlq_count: 1, current_error: 'HTTP 400', last_error: 'HTTP 400' });
    expect(byName.get('e-off')).toMatchObject({ enabled: false, disabled_reason: 'credential_revoked' });
    // A global destination's hourly statistics span every organization: withheld without platform scope.
    expect(byName.get('f-global')).toMatchObject({ organization_id: null, delivered_last_hour: null });
    const rootItems = (await call(root, '/api/collectors/destinations/health')).json<{ items: Json[] }>().items;
    expect(rootItems).toHaveLength(7);
    expect(rootItems.find((i) => i.name === 'f-global')).toMatchObject({ delivered_last_hour: 7 });
    expect(body.ledger.totals).toMatchObject({ pending: 5 });
  });

  it('balances the ledger per stream: in + copies added = delivered + filtered + quarantined + dead-lettered + pending', async () => {
    const d1 = await destination(orgA, 'one');
    const d2 = await destination(orgA, 'two');
    const day = new Date().toISOString().slice(0, 10);
    const key = { organization_id: orgA, integration_id: intA, stream: 'events', day };
    await db()
      .insertInto('stream_counters')
      .values({ ...key, events_in: 10, bytes_in: 1, normalized: 9, flagged: 0, quarantined: 1 })
      .execute();
    await db()
      .insertInto('ledger')
      .values([
        { ...key, outcome: 'filtered', reason: 'no_route', count: 2 },
        { ...key, outcome: 'routed', count: 6 },
        { ...key, outcome: 'copies', destination_id: d1, reason: d1, count: 6 },
        { ...key, outcome: 'copies', destination_id: d2, reason: d2, count: 3 },
        { ...key, outcome: 'delivered', destination_id: d1, count: 6 },
        { ...key, outcome: 'dead_lettered', destination_id: d2, reason: 'rejected', count: 1 },
        { ...key, outcome: 'shadow_delivered', destination_id: d2, count: 4 },
      ])
      .execute();
    await outbox(d2, orgA, 2, new Date());
    // One batch still waiting for routing.
    await db()
      .insertInto('normalized_batches')
      .values({
        id: newId(),
        organization_id: orgA,
        integration_id: intA,
        stream: 'events',
        source: 'push',
        event_count: 1,
        bytes: 1,
        events: '',
        route_state: 'pending',
      })
      .execute();
    // And 5 events accepted, still waiting for normalization: in and pending.
    await db()
      .insertInto('accepted_batches')
      .values({
        id: newId(),
        organization_id: orgA,
        integration_id: intA,
        stream: 'events',
        event_count: 5,
        accepted_at: new Date(),
      })
      .execute();
    const { ledger } = (await call(adminA, '/api/collectors/destinations/health')).json<{
      ledger: { totals: Json; rows: Json[] };
    }>();
    expect(ledger.rows).toEqual([
      {
        organization_id: orgA,
        integration_id: intA,
        stream: 'events',
        events_in: 15,
        quarantined: 1,
        filtered: 2,
        filtered_by_reason: { no_route: 2 },
        routed: 6,
        copies_added: 3,
        replayed: 0,
        delivered: 6,
        dead_lettered: 1,
        dead_lettered_by_reason: { rejected: 1 },
        dlq_reprocessed: 0,
        dropped: 0,
        dropped_by_reason: {},
        pending: 8,
        pending_normalization: 5,
        unaccounted: 0,
        shadow_delivered: 4,
        shadow_dropped: 0,
      },
    ]);
    expect(ledger.totals).toMatchObject({ events_in: 15, pending_normalization: 5, unaccounted: 0 });
    // Organization B sees none of it.
    const adminB = await createPrincipal(t, { role: 'admin', organizationId: orgB });
    expect(
      (await call(adminB, '/api/collectors/destinations/health')).json<{ ledger: { rows: Json[] } }>().ledger.rows,
    ).toEqual([]);

    const single = (await call(adminA, `/api/collectors/destinations/${d2}/health`)).json<{ ledger: Json[] }>();
    expect(single.ledger).toEqual([
      {
        organization_id: orgA,
        integration_id: intA,
        stream: 'events',
        copies: 3,
        delivered: 0,
        dead_lettered: 1,
        dead_lettered_by_reason: { rejected: 1 },
        dlq_reprocessed: 0,
        dropped: 0,
        dropped_by_reason: {},
        pending: 2,
        shadow_delivered: 4,
        shadow_dropped: 0,
      },
    ]);
  });
});

describe('GET /destinations/{id}/health', () => {
  it("answers one destination; another organization's is 404", async () => {
    const a = await destination(orgA, 'mine');
    const b = await destination(orgB, 'theirs');
    const res = await call(viewerA, `/api/collectors/destinations/${a}/health`);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({
      destination_id: a,
      status: 'idle',
      ledger: [],
      generated_at: expect.stringMatching(/Z$/),
    });
    expect((await call(adminA, `/api/collectors/destinations/${b}/health`)).statusCode).toBe(404);
    expect((await call(root, `/api/collectors/destinations/${b}/health`)).statusCode).toBe(200);
  });
});

describe('GET /destinations/{id}/metrics', () => {
  it('answers an hourly series with zeros filled in, and totals', async () => {
    const d = await destination(orgA, 'metered');
    const current = hourStart(Date.now());
    const earlier = new Date(current.getTime() - 2 * HOUR);
    await stats(d, earlier, {
      delivered: 10,
      bytes: 1000,
      requests: 2,
      failed_requests: 1,
      latency_ms_sum: 300,
      latency_ms_max: 200,
    });
    await stats(d, current, { delivered: 5, bytes: 500, requests: 1, latency_ms_sum: 100, latency_ms_max: 100 });
    await stats(d, new Date(current.getTime() - 30 * HOUR), { delivered: 99, requests: 1 });
    const res = await call(viewerA, `/api/collectors/destinations/${d}/metrics?hours=3`);
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json<{ series: Json[]; totals: Json; hours: number; per_organization: boolean; from: string }>();
    expect(body).toMatchObject({ hours: 3, per_organization: false, from: earlier.toISOString() });
    expect(body.series.map((p) => [p.hour, p.delivered])).toEqual([
      [earlier.toISOString(), 10],
      [new Date(earlier.getTime() + HOUR).toISOString(), 0],
      [current.toISOString(), 5],
    ]);
    expect(body.series[0]).toMatchObject({
      requests: 2,
      failed_requests: 1,
      latency_ms_avg: 150,
      latency_ms_max: 200,
      bytes: 1000,
    });
    expect(body.totals).toEqual({
      delivered: 15,
      bytes: 1500,
      requests: 3,
      failed_requests: 1,
      dead_lettered: 0,
      latency_ms_avg: 133,
      latency_ms_max: 200,
    });
    expect(
      (await call(viewerA, `/api/collectors/destinations/${d}/metrics`)).json<{ series: Json[] }>().series,
    ).toHaveLength(24);
    expect((await call(viewerA, `/api/collectors/destinations/${d}/metrics?hours=169`)).statusCode).toBe(422);
    expect((await call(viewerA, `/api/collectors/destinations/${d}/metrics?hours=0`)).statusCode).toBe(422);
  });

  it("on a global destination without platform scope answers only the organization's ledger counts", async () => {
    const g = await destination(null, 'global-metrics');
    await stats(g, hourStart(Date.now()), { delivered: 50, requests: 5 });
    const day = new Date().toISOString().slice(0, 10);
    await db()
      .insertInto('ledger')
      .values([
        {
          organization_id: orgA,
          integration_id: intA,
          stream: 'events',
          day,
          outcome: 'delivered',
          destination_id: g,
          count: 20,
        },
        {
          organization_id: orgB,
          integration_id: 999,
          stream: 'events',
          day,
          outcome: 'delivered',
          destination_id: g,
          count: 30,
        },
      ])
      .execute();
    const a = (await call(adminA, `/api/collectors/destinations/${g}/metrics`)).json();
    expect(a).toMatchObject({
      per_organization: true,
      series: [],
      totals: null,
      ledger: [{ day, delivered: 20, dead_lettered: 0, dlq_reprocessed: 0 }],
    });
    const r = (await call(root, `/api/collectors/destinations/${g}/metrics?hours=1`)).json();
    expect(r).toMatchObject({ per_organization: false, totals: { delivered: 50 }, ledger: [{ day, delivered: 50 }] });
  });
});

describe('lineage when it is off', () => {
  it('answers an empty list for a visible destination and for any event; 404 for a foreign destination', async () => {
    const a = await destination(orgA, 'lineage-a');
    const b = await destination(orgB, 'lineage-b');
    const res = await call(adminA, `/api/collectors/destinations/${a}/lineage`);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual([]);
    expect(res.headers['x-total-count']).toBe('0');
    expect((await call(adminA, `/api/collectors/destinations/${b}/lineage`)).statusCode).toBe(404);
    const event = await call(adminA, `/api/collectors/lineage/${newId()}`);
    expect(event.statusCode).toBe(200);
    expect(event.json()).toEqual([]);
    expect((await call(viewerA, `/api/collectors/lineage/${newId()}`)).statusCode).toBe(403);
  });
});
