import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/support/app.js';
import {
  addRoute,
  engineFor,
  fakes,
  routedBatch,
  sleep,
  testTelemetry,
  until,
} from '../../../test/support/delivery-engine.js';
import { createOrganization } from '../../../test/support/identity.js';
import { createIntegration } from '../../../test/support/normalization.js';
import type { DeliverySettingsInput } from '../../pipeline/delivery/settings.js';
import { DeliveryError } from '../../pipeline/sinks/types.js';
import { ledgerRows } from '../../../test/support/ledger.js';

let t: TestApp;
const db = () => t.container.database.db;

beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t?.close());
beforeEach(async () => {
  await db().deleteFrom('normalized_batches').execute();
  await db().deleteFrom('delivery_batches').execute();
});

async function expectBalanced(orgId: number) {
  const rows = await ledgerRows(t, { organization_id: orgId });
  for (const r of rows) expect(r, `ledger of ${r.integration_id}/${r.stream}`).toMatchObject({ unaccounted: 0 });
  return rows;
}

const outbox = (destinationId: string) =>
  db().selectFrom('delivery_batches').selectAll().where('destination_id', '=', destinationId).execute();
const dlq = (destinationId: string) =>
  db().selectFrom('dlq_events').selectAll().where('destination_id', '=', destinationId).orderBy('event_id').execute();
const events = (n: number, from = 0) =>
  Array.from({ length: n }, (_, i) => ({ class_uid: 1, n: from + i, user: { email_addr: `user${i}@example.com` } }));

/** An organization with one integration and one destination (the fake sink) routed everything. */
async function scenario(
  name: string,
  delivery: DeliverySettingsInput = {},
  engineOptions: Parameters<typeof engineFor>[2] = {},
) {
  const org = await createOrganization(t, name);
  const integration = await createIntegration(t, org);
  const f = fakes();
  const dest = f.destination(org, delivery);
  await addRoute(t, org, { destinations: [dest.id] });
  const d = engineFor(t, f, engineOptions);
  return { org, integration, f, dest, d };
}

describe('delivery lanes', () => {
  it('retries with backoff, then delivers; Retry-After is respected', async () => {
    const { org, integration, f, dest, d } = await scenario('lane-retry', { max_attempts: 5 });
    const times: number[] = [];
    f.behaviours.set(dest.id, async (_b, _s, call) => {
      times.push(Date.now());
      if (call === 1) throw new DeliveryError('http_5xx', 'HTTP 503', { statusCode: 503 });
      if (call === 2) throw new DeliveryError('rate_limited', 'HTTP 429', { statusCode: 429, retryAfterMs: 400 });
      return {};
    });
    await routedBatch(t, d, org, integration, events(3));
    const run = d.loops[0]!.start();
    try {
      await until(() => f.received.get(dest.id)?.length === 3, 5_000, 'delivery');
      await until(async () => (await outbox(dest.id)).length === 0, 2_000, 'outbox drained');
    } finally {
      await run.stop();
    }
    expect(times).toHaveLength(3);
    expect(times[2]! - times[1]!).toBeGreaterThanOrEqual(390);
    const state = await db()
      .selectFrom('destination_state')
      .selectAll()
      .where('destination_id', '=', dest.id)
      .executeTakeFirstOrThrow();
    expect(state).toMatchObject({ breaker_state: 'closed', consecutive_failures: 0, last_error: 'HTTP 429' });
    expect(state.last_success_at).not.toBeNull();
    const stats = await db()
      .selectFrom('destination_stats')
      .selectAll()
      .where('destination_id', '=', dest.id)
      .executeTakeFirstOrThrow();
    expect(stats).toMatchObject({ requests: 3, failed_requests: 2, delivered: 3, dead_lettered: 0 });
    expect(await expectBalanced(org)).toMatchObject([{ delivered: 3, pending: 0, dead_lettered: 0 }]);
  });

  it('dead-letters retries_exhausted after max_attempts, and a permanent refusal at once', async () => {
    const { org, integration, f, dest, d } = await scenario('lane-dlq', { max_attempts: 2 });
    f.behaviours.set(dest.id, async () => {
      throw new DeliveryError('connection', 'connection refused');
    });
    await routedBatch(t, d, org, integration, events(2));
    const run = d.loops[0]!.start();
    try {
      await until(async () => (await dlq(dest.id)).length === 2, 5_000, 'retries exhausted');
    } finally {
      await run.stop();
    }
    expect(f.calls.get(dest.id)).toBe(2);
    const rows = await dlq(dest.id);
    expect(rows.map((r) => ({ kind: r.error_kind, reason: r.reason, attempts: r.attempts, status: r.status }))).toEqual(
      [
        { kind: 'retries_exhausted', reason: 'connection refused', attempts: 2, status: 'dead' },
        { kind: 'retries_exhausted', reason: 'connection refused', attempts: 2, status: 'dead' },
      ],
    );
    expect(JSON.parse(rows[0]!.event)).toMatchObject({ class_uid: 1 });
    expect(await outbox(dest.id)).toEqual([]);
    expect(await expectBalanced(org)).toMatchObject([{ dead_lettered: 2, pending: 0 }]);

    // Permanent: one request, every event dead-lettered with the error's kind.
    const org2 = await createOrganization(t, 'lane-permanent');
    const integration2 = await createIntegration(t, org2);
    const f2 = fakes();
    const p = f2.destination(org2, { max_attempts: 5 });
    f2.behaviours.set(p.id, async () => {
      throw new DeliveryError('http_4xx', 'HTTP 400 bad request', { statusCode: 400 });
    });
    await addRoute(t, org2, { destinations: [p.id] });
    const d2 = engineFor(t, f2);
    await routedBatch(t, d2, org2, integration2, events(3));
    const run2 = d2.loops[0]!.start();
    try {
      await until(async () => (await dlq(p.id)).length === 3, 5_000, 'permanent failure');
    } finally {
      await run2.stop();
    }
    expect(f2.calls.get(p.id)).toBe(1);
    expect((await dlq(p.id)).map((r) => [r.error_kind, r.status_code, r.attempts])).toEqual(
      Array(3).fill(['http_4xx', 400, 1]),
    );
    expect(await expectBalanced(org2)).toMatchObject([{ dead_lettered: 3, delivered: 0, pending: 0 }]);
  });

  it('partial results: accepted delivered, rejected dead-lettered, retried later', async () => {
    const { org, integration, f, dest, d } = await scenario('lane-partial', { max_attempts: 5 });
    f.behaviours.set(dest.id, async (batch, _s, call) => {
      if (call > 1) return {};
      const refuse = batch.events().findIndex((e) => e.n === 1);
      const later = batch.events().findIndex((e) => e.n === 2);
      return {
        rejected: [{ index: refuse, reason: 'mapping conflict', statusCode: 400 }],
        retry: [{ index: later, reason: 'queue full', statusCode: 429 }],
      };
    });
    const b = await routedBatch(t, d, org, integration, events(4));
    const run = d.loops[0]!.start();
    try {
      await until(
        async () => f.received.get(dest.id)?.length === 3 && (await outbox(dest.id)).length === 0,
        5_000,
        'partial delivery',
      );
    } finally {
      await run.stop();
    }
    expect(f.calls.get(dest.id)).toBe(2);
    expect(f.received.get(dest.id)).toEqual([b.records[0]!.id, b.records[3]!.id, b.records[2]!.id]);
    expect((await dlq(dest.id)).map((r) => [r.event_id, r.error_kind, r.reason, r.status_code])).toEqual([
      [b.records[1]!.id, 'rejected', 'mapping conflict', 400],
    ]);
    expect(await expectBalanced(org)).toMatchObject([{ delivered: 3, dead_lettered: 1, pending: 0 }]);
  });

  it('splits a row larger than max_events over several requests and coalesces small rows', async () => {
    const { org, integration, f, dest, d } = await scenario('lane-batching', { max_events: 4 });
    const sizes: number[] = [];
    f.behaviours.set(dest.id, async (batch) => {
      sizes.push(batch.ids.length);
      return {};
    });
    await routedBatch(t, d, org, integration, events(10));
    await routedBatch(t, d, org, integration, events(1, 10));
    await routedBatch(t, d, org, integration, events(1, 11));
    const run = d.loops[0]!.start();
    try {
      await until(() => f.received.get(dest.id)?.length === 12, 5_000, 'delivery');
    } finally {
      await run.stop();
    }
    expect(sizes.reduce((a, b) => a + b, 0)).toBe(12);
    expect(Math.max(...sizes)).toBeLessThanOrEqual(4);
    expect(sizes.length).toBeLessThanOrEqual(4); // 4 + 4 + 2, then the two single rows together
    expect(await expectBalanced(org)).toMatchObject([{ delivered: 12, pending: 0 }]);
  });

  it('opens the breaker after threshold failures, claims nothing while open, closes on a successful probe', async () => {
    const tel = testTelemetry();
    const { org, integration, f, dest, d } = await scenario(
      'lane-breaker',
      { breaker_threshold: 2, breaker_cooldown_ms: 1_500, max_attempts: 50, backoff_base_ms: 10, backoff_max_ms: 100 },
      { telemetry: tel.telemetry, lagRefreshMs: 50 },
    );
    let healthy = false;
    f.behaviours.set(dest.id, async () => {
      if (!healthy) throw new DeliveryError('http_5xx', 'HTTP 502', { statusCode: 502 });
      return {};
    });
    await routedBatch(t, d, org, integration, events(2));
    const run = d.loops[0]!.start();
    try {
      await until(
        async () =>
          (
            await db()
              .selectFrom('destination_state')
              .select('breaker_state')
              .where('destination_id', '=', dest.id)
              .executeTakeFirst()
          )?.breaker_state === 'open',
        5_000,
        'breaker open',
      );
      const callsWhenOpened = f.calls.get(dest.id)!;
      expect(callsWhenOpened).toBe(2);
      expect(await tel.points('collector_destination_breaker_state')).toEqual([
        { attributes: { destination_id: dest.id }, value: 1 },
      ]);
      await sleep(250);
      expect(f.calls.get(dest.id)).toBe(callsWhenOpened); // nothing claimed, no attempt spent
      const [row] = await outbox(dest.id);
      expect(row).toMatchObject({ attempts: 2, lease_owner: null });
      expect(await tel.points('collector_dataplane_consumer_lag')).toContainEqual({
        attributes: { partition: `destination:${dest.id}` },
        value: 2,
      });
      healthy = true;
      await until(() => f.received.get(dest.id)?.length === 2, 5_000, 'probe delivery');
      await until(
        async () =>
          (
            await db()
              .selectFrom('destination_state')
              .select('breaker_state')
              .where('destination_id', '=', dest.id)
              .executeTakeFirst()
          )?.breaker_state === 'closed',
        2_000,
        'breaker closed',
      );
      expect(f.calls.get(dest.id)).toBe(3);
      expect(await tel.points('collector_destination_breaker_state')).toEqual([
        { attributes: { destination_id: dest.id }, value: 0 },
      ]);
      expect(await tel.points('collector_dispatch_failures_total')).toEqual([
        { attributes: { destination_id: dest.id, error_kind: 'http_5xx' }, value: 2 },
      ]);
      expect(await tel.points('collector_events_sent_total')).toEqual([
        { attributes: { destination_id: dest.id, kind: 'primary' }, value: 2 },
      ]);
    } finally {
      await run.stop();
      await tel.shutdown();
    }
    await expectBalanced(org);
  });

  it('isolation: a destination that hangs does not slow a healthy one', async () => {
    const org = await createOrganization(t, 'lane-isolation');
    const integration = await createIntegration(t, org);
    const f = fakes();
    const stuck = f.destination(org, { timeout_ms: 60_000, concurrency: 1 });
    const healthy = f.destination(org);
    f.behaviours.set(stuck.id, () => new Promise(() => {})); // never answers, ignores the signal
    await addRoute(t, org, { destinations: [stuck.id, healthy.id] });
    const d = engineFor(t, f);
    const run = d.loops[0]!.start();
    try {
      for (let i = 0; i < 5; i++) await routedBatch(t, d, org, integration, events(20, i * 20));
      await until(() => f.received.get(healthy.id)?.length === 100, 5_000, 'healthy destination to receive everything');
      expect(f.calls.get(stuck.id)).toBe(1);
      expect(f.received.get(stuck.id)).toBeUndefined();
    } finally {
      await run.stop();
    }
    // Stopping gave the hung request's rows back at once.
    const left = await outbox(stuck.id);
    expect(left.reduce((n, r) => n + r.event_count, 0)).toBe(100);
    expect(left.every((r) => r.lease_owner === null && r.attempts === 0)).toBe(true);
    expect(await expectBalanced(org)).toMatchObject([{ delivered: 100, pending: 100, copies_added: 100 }]);
  });

  it('times out a request after timeout_ms and retries it', async () => {
    const { org, integration, f, dest, d } = await scenario('lane-timeout', { timeout_ms: 150, max_attempts: 5 });
    f.behaviours.set(dest.id, (_b, signal, call) =>
      call === 1 ? new Promise(() => {}) : Promise.resolve(signal.aborted ? {} : {}),
    );
    await routedBatch(t, d, org, integration, events(2));
    const run = d.loops[0]!.start();
    try {
      await until(() => f.received.get(dest.id)?.length === 2, 5_000, 'delivery after the timeout');
    } finally {
      await run.stop();
    }
    const state = await db()
      .selectFrom('destination_state')
      .selectAll()
      .where('destination_id', '=', dest.id)
      .executeTakeFirstOrThrow();
    expect(state.last_error).toBe('no answer within 150 ms');
    await expectBalanced(org);
  });

  it('re-delivers rows whose lease holder died', async () => {
    const { org, integration, f, dest, d } = await scenario('lane-lease');
    await routedBatch(t, d, org, integration, events(3));
    // A dispatcher claimed the rows and was killed before it could settle.
    await db()
      .updateTable('delivery_batches')
      .set({ lease_owner: 'dead-dispatcher', leased_until: new Date(Date.now() + 1_500) })
      .where('destination_id', '=', dest.id)
      .execute();
    const run = d.loops[0]!.start();
    try {
      await sleep(300);
      expect(f.received.get(dest.id)).toBeUndefined();
      await until(() => f.received.get(dest.id)?.length === 3, 5_000, 'redelivery after the lease');
      await until(async () => (await outbox(dest.id)).length === 0, 2_000, 'outbox drained');
    } finally {
      await run.stop();
    }
    expect(await expectBalanced(org)).toMatchObject([{ delivered: 3, pending: 0 }]);
  });

  it('writes masked samples for an open tap session, up to its max', async () => {
    const { org, integration, f, dest, d } = await scenario('lane-tap');
    await db()
      .insertInto('tap_sessions')
      .values({
        id: 'tap-1',
        destination_id: dest.id,
        expires_at: new Date(Date.now() + 60_000),
        max_events: 3,
        created_by: null,
      })
      .execute();
    const run = d.loops[0]!.start();
    try {
      await until(() => d.engine.breakerStates().length === 1, 5_000, 'the lane');
      await sleep(150); // the lane sees the session (checked every pollMs)
      await routedBatch(t, d, org, integration, events(5));
      await until(() => f.received.get(dest.id)?.length === 5, 5_000, 'delivery');
      await until(
        async () =>
          (await db().selectFrom('tap_samples').select('id').where('session_id', '=', 'tap-1').execute()).length === 3,
        2_000,
        'samples',
      );
      await routedBatch(t, d, org, integration, events(2, 5));
      await until(() => f.received.get(dest.id)?.length === 7, 5_000, 'second delivery');
      await sleep(100);
    } finally {
      await run.stop();
    }
    const samples = await db()
      .selectFrom('tap_samples')
      .selectAll()
      .where('session_id', '=', 'tap-1')
      .orderBy('id')
      .execute();
    expect(samples).toHaveLength(3);
    const first = JSON.parse(samples[0]!.event) as { user: { email_addr: string }; class_uid: number };
    expect(first.class_uid).toBe(1);
    expect(first.user.email_addr).not.toContain('user0@example.com');
    expect(samples.every((s) => s.destination_id === dest.id)).toBe(true);
    expect(await expectBalanced(org)).toMatchObject([{ delivered: 7, pending: 0 }]);
  });

  it('counts dead-lettered events in collector_dlq_total', async () => {
    const tel = testTelemetry();
    const { org, integration, f, dest, d } = await scenario('lane-metrics', {}, { telemetry: tel.telemetry });
    f.behaviours.set(dest.id, async () => {
      throw new DeliveryError('auth', 'HTTP 401', { statusCode: 401 });
    });
    await routedBatch(t, d, org, integration, events(2));
    const run = d.loops[0]!.start();
    try {
      await until(async () => (await dlq(dest.id)).length === 2, 5_000, 'dead letters');
    } finally {
      await run.stop();
      expect(await tel.points('collector_dlq_total')).toEqual([
        { attributes: { destination_id: dest.id, error_kind: 'auth' }, value: 2 },
      ]);
      expect(await tel.points('collector_dispatch_failures_total')).toEqual([
        { attributes: { destination_id: dest.id, error_kind: 'auth' }, value: 1 },
      ]);
      await tel.shutdown();
    }
    await expectBalanced(org);
  });
});
