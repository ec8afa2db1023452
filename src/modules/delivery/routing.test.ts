import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/support/app.js';
import { addRoute, engineFor, fakes, routedBatch, sleep, until } from '../../../test/support/delivery-engine.js';
import { createOrganization } from '../../../test/support/identity.js';
import { statementCounter } from '../../../test/support/db.js';
import { createIntegration, outboxText } from '../../../test/support/normalization.js';
import type { OrgDataStep } from '../organizations/jobs.js';
import { DELIVERY_HOUSEKEEPING_QUEUE, PURGE_DLQ_JOB, PURGE_LINEAGE_JOB, PURGE_TAPS_JOB } from './jobs.js';
import { ledgerRows } from '../../../test/support/ledger.js';

let t: TestApp;
const db = () => t.container.database.db;

async function expectBalanced(orgId: number) {
  const rows = await ledgerRows(t, { organization_id: orgId });
  expect(rows.length).toBeGreaterThan(0);
  for (const r of rows) expect(r, `ledger of ${r.integration_id}/${r.stream}`).toMatchObject({ unaccounted: 0 });
  return rows;
}

async function ledgerOf(orgId: number) {
  const rows = await db()
    .selectFrom('ledger')
    .select(['outcome', 'destination_id', 'reason', 'count'])
    .where('organization_id', '=', orgId)
    .execute();
  return Object.fromEntries(
    rows.map((r) => [[r.outcome, r.destination_id, r.reason].filter(Boolean).join(':'), Number(r.count)]),
  );
}

beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t?.close());
beforeEach(async () => {
  await db().deleteFrom('normalized_batches').execute();
  await db().deleteFrom('delivery_batches').execute();
});

describe("routing a batch (the pass's write)", () => {
  it('writes one outbox row per destination, the ledger and route statistics', async () => {
    const org = await createOrganization(t, 'route-basic');
    const integration = await createIntegration(t, org);
    const f = fakes();
    const a = f.destination(org);
    const route = await addRoute(t, org, {
      destinations: [a.id],
      condition: { field: 'class_uid', op: 'eq', value: 3002 },
    });
    const d = engineFor(t, f);
    const batch = await routedBatch(t, d, org, integration, [
      { class_uid: 3002, n: 1 },
      { class_uid: 1001 },
      { class_uid: 3002, n: 2 },
    ]);
    const rows = await db().selectFrom('delivery_batches').selectAll().where('organization_id', '=', org).execute();
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      destination_id: a.id,
      kind: 'primary',
      event_count: 2,
      source_batch_id: batch.id,
      attempts: 0,
      integration_id: integration,
      stream: 'events',
    });
    expect(rows[0]!.event_ids.split(',')).toEqual([batch.records[0]!.id, batch.records[2]!.id]);
    const lines = (await outboxText(t, rows[0]!.events)).split('\n');
    expect(lines.map((l) => JSON.parse(l))).toEqual([
      { class_uid: 3002, n: 1 },
      { class_uid: 3002, n: 2 },
    ]);
    expect(rows[0]!.bytes).toBe(lines.reduce((n, l) => n + Buffer.byteLength(l), 0));
    expect(await ledgerOf(org)).toEqual({ [`copies:${a.id}`]: 2, routed: 2, 'filtered:no_route': 1 });
    const stats = await db().selectFrom('route_stats').selectAll().where('route_id', '=', route).execute();
    expect(stats).toMatchObject([{ matched: 2, sampled_out: 0, organization_id: org }]);
    expect(await expectBalanced(org)).toMatchObject([
      { events_in: 3, filtered: 1, routed: 2, copies_added: 0, pending: 2, pending_normalization: 0 },
    ]);
  });

  it('fans out, counts every filtered reason, writes shadow copies and keeps copies of a revoked destination', async () => {
    const org = await createOrganization(t, 'route-fanout');
    const other = await createOrganization(t, 'route-fanout-other');
    const integration = await createIntegration(t, org);
    const f = fakes();
    const shadow = f.destination(org);
    const a = f.destination(org, {}, { shadow_destination_id: shadow.id });
    const b = f.destination(null); // global
    const off = f.destination(org, {}, { enabled: false });
    const foreign = f.destination(other);
    const revoked = f.destination(org, {}, { enabled: false, disabled_reason: 'credential_revoked' });
    // class 1: A and B (fan-out, non-final), then revoked; class 2: only unusable destinations; class 3: sampled out; class 4: dropped on purpose.
    await addRoute(t, org, {
      destinations: [a.id, b.id],
      condition: { field: 'class_uid', op: 'eq', value: 1 },
      final: false,
    });
    await addRoute(t, org, { destinations: [revoked.id], condition: { field: 'class_uid', op: 'eq', value: 1 } });
    await addRoute(t, org, {
      destinations: [off.id, foreign.id, 'deleted-destination'],
      condition: { field: 'class_uid', op: 'eq', value: 2 },
    });
    await addRoute(t, org, {
      destinations: [a.id],
      condition: { field: 'class_uid', op: 'eq', value: 3 },
      transforms: [{ type: 'sample', rate: 0.000001 }],
    });
    await addRoute(t, org, { destinations: [], condition: { field: 'class_uid', op: 'eq', value: 4 } });
    const d = engineFor(t, f);
    await routedBatch(t, d, org, integration, [
      { class_uid: 1 },
      { class_uid: 1 },
      { class_uid: 2 },
      { class_uid: 3 },
      { class_uid: 4 },
      { class_uid: 5 },
    ]);

    const rows = await db()
      .selectFrom('delivery_batches')
      .select(['destination_id', 'kind', 'event_count'])
      .where('organization_id', '=', org)
      .execute();
    const byDest = Object.fromEntries(rows.map((r) => [`${r.destination_id}:${r.kind}`, r.event_count]));
    expect(byDest).toEqual({
      [`${a.id}:primary`]: 2,
      [`${b.id}:primary`]: 2,
      [`${revoked.id}:primary`]: 2,
      [`${shadow.id}:shadow`]: 2,
    });
    expect(await ledgerOf(org)).toEqual({
      routed: 2,
      [`copies:${a.id}`]: 2,
      [`copies:${b.id}`]: 2,
      [`copies:${revoked.id}`]: 2,
      'filtered:destination_disabled': 1,
      'filtered:sampled_out': 1,
      'filtered:dropped_by_route': 1,
      'filtered:no_route': 1,
    });
    const [bal] = await expectBalanced(org);
    expect(bal).toMatchObject({ events_in: 6, routed: 2, copies_added: 4, filtered: 4, pending: 6 });

    // Delivery: A, B and the shadow deliver; the revoked destination has no lane, its copies wait.
    const lanes = d.loops[0]!.start();
    try {
      await until(
        async () =>
          (await db().selectFrom('delivery_batches').select('id').where('organization_id', '=', org).execute())
            .length === 1,
        5_000,
        'delivery',
      );
      expect(f.received.get(shadow.id)).toHaveLength(2);
      expect(f.received.get(revoked.id)).toBeUndefined();
      const after = await ledgerOf(org);
      expect(after).toMatchObject({
        [`delivered:${a.id}`]: 2,
        [`delivered:${b.id}`]: 2,
        [`shadow_delivered:${shadow.id}`]: 2,
      });
      expect(await expectBalanced(org)).toMatchObject([{ delivered: 4, pending: 2 }]);

      // A new credential: the destination is enabled again and its waiting copies flow.
      f.update(revoked.id, { enabled: true, disabled_reason: null });
      await until(() => f.received.get(revoked.id)?.length === 2, 5_000, 'revoked destination to deliver');
      await until(async () => (await ledgerRows(t, { organization_id: org }))[0]?.pending === 0, 5_000, 'empty outbox');
      expect(await expectBalanced(org)).toMatchObject([{ delivered: 6, pending: 0, copies_added: 4, events_in: 6 }]);
    } finally {
      await lanes.stop();
    }
  });

  it('writes lineage when it is on, none when off', async () => {
    const org = await createOrganization(t, 'route-lineage');
    const integration = await createIntegration(t, org);
    const f = fakes();
    const a = f.destination(org);
    const route = await addRoute(t, org, {
      destinations: [a.id],
      condition: { field: 'class_uid', op: 'eq', value: 1 },
    });
    const withLineage = engineFor(t, f, { lineage: true });
    const on = await routedBatch(t, withLineage, org, integration, [{ class_uid: 1 }, { class_uid: 9 }]);
    const events = await db()
      .selectFrom('lineage_events')
      .selectAll()
      .where('organization_id', '=', org)
      .orderBy('event_id')
      .execute();
    expect(
      events.map((e) => ({
        id: e.event_id,
        routes: e.routes,
        filtered: e.filtered,
        batch: e.normalized_batch_id,
        mv: e.mapping_version_id,
      })),
    ).toEqual([
      { id: on.records[0]!.id, routes: [route], filtered: null, batch: on.id, mv: 'mv-1' },
      { id: on.records[1]!.id, routes: [], filtered: 'no_route', batch: on.id, mv: 'mv-1' },
    ]);
    const copies = await db()
      .selectFrom('lineage_copies')
      .selectAll()
      .where('event_id', '=', on.records[0]!.id)
      .execute();
    const outbox = await db()
      .selectFrom('delivery_batches')
      .select('id')
      .where('source_batch_id', '=', on.id)
      .executeTakeFirstOrThrow();
    expect(copies).toMatchObject([
      { destination_id: a.id, delivery_batch_id: outbox.id, route_id: route, kind: 'primary' },
    ]);

    const lanes = withLineage.loops[0]!.start();
    await until(() => f.received.get(a.id)?.length === 1, 5_000, 'delivery');
    await lanes.stop();
    const attempts = await db()
      .selectFrom('lineage_attempts')
      .selectAll()
      .where('delivery_batch_id', '=', outbox.id)
      .execute();
    expect(attempts).toMatchObject([{ attempt: 1, outcome: 'delivered', destination_id: a.id }]);

    const off = await routedBatch(t, engineFor(t, f, { lineage: false }), org, integration, [{ class_uid: 1 }]);
    expect(
      await db().selectFrom('lineage_events').select('event_id').where('normalized_batch_id', '=', off.id).execute(),
    ).toEqual([]);
    await expectBalanced(org);
  });

  it('picks up route edits within a poll', async () => {
    const org = await createOrganization(t, 'route-edit');
    const integration = await createIntegration(t, org);
    const f = fakes();
    const a = f.destination(org);
    const d = engineFor(t, f);
    await routedBatch(t, d, org, integration, [{ class_uid: 1 }]);
    await addRoute(t, org, { destinations: [a.id] });
    await sleep(30); // past the fingerprint check period (pollMs)
    await routedBatch(t, d, org, integration, [{ class_uid: 1 }]);
    expect(await ledgerOf(org)).toEqual({ 'filtered:no_route': 1, routed: 1, [`copies:${a.id}`]: 1 });
    await expectBalanced(org);
  });
  it('sends no statement while idle (exclusive), and a lane woken by a routed batch delivers it', async () => {
    const org = await createOrganization(t, 'route-idle');
    const integration = await createIntegration(t, org);
    const f = fakes();
    const a = f.destination(org);
    await addRoute(t, org, { destinations: [a.id] });
    const statements = statementCounter();
    // Exclusive, as embedded: the lane sleeps until woken too.
    const d = engineFor(t, f, { db: db().withPlugin(statements.plugin), exclusive: true, directoryRefreshMs: 30_000 });
    const run = d.loops[0]!.start();
    try {
      await sleep(300);
      statements.reset();
      await sleep(1_000);
      // A lane polling every pollMs (20 ms) would claim about 50 times.
      expect(statements.count()).toBeLessThanOrEqual(2);
      await routedBatch(t, d, org, integration, [{ class_uid: 1 }]);
      // The lane woken by the write delivers without waiting for its 30 s safety claim.
      await until(() => f.received.get(a.id)?.length === 1, 5_000, 'the batch delivered');
    } finally {
      await run.stop();
    }
  });
});

describe('organization deletion', () => {
  it("deletes the organization's outbox, DLQ, ledger, statistics and lineage, and nothing of another", async () => {
    const org = await createOrganization(t, 'delete-me');
    const keep = await createOrganization(t, 'keep-me');
    const f = fakes();
    const steps: OrgDataStep[] = [];
    const batches: [number, number][] = [];
    for (const o of [org, keep]) {
      const integration = await createIntegration(t, o);
      const dest = f.destination(o);
      await addRoute(t, o, { destinations: [dest.id] });
      batches.push([o, integration]);
    }
    const d = engineFor(t, f, { lineage: true, dataDeletion: { addStep: (s) => steps.push(s) } });
    for (const [o, integration] of batches)
      await routedBatch(t, d, o, integration, [{ class_uid: 1 }, { class_uid: 2 }]);
    await db()
      .insertInto('dlq_events')
      .values({
        id: 'dlq-del',
        destination_id: 'd',
        organization_id: org,
        integration_id: 1,
        stream: 's',
        event_id: 'e',
        delivery_batch_id: 'b',
        event: '{}',
        error_kind: 'rejected',
        reason: 'r',
        status_code: null,
        attempts: 1,
      })
      .execute();
    const orgEvents = (
      await db().selectFrom('lineage_events').select('event_id').where('organization_id', '=', org).execute()
    ).map((r) => r.event_id);
    const copiesOf = async (ids: string[]) =>
      db().selectFrom('lineage_copies').select('delivery_batch_id').where('event_id', 'in', ids).execute();
    expect(await copiesOf(orgEvents)).toHaveLength(2);
    expect(steps.map((s) => s.name)).toEqual([
      'lineage_attempts',
      'lineage_copies',
      'lineage_events',
      'delivery_batches',
      'dlq_events',
      'ledger',
      'ledger_hours',
      'route_stats',
    ]);
    for (const step of steps) await step.run(org);
    const count = async (
      table: 'delivery_batches' | 'dlq_events' | 'ledger' | 'ledger_hours' | 'route_stats' | 'lineage_events',
      o: number,
    ) =>
      (
        await db()
          .selectFrom(table)
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('organization_id', '=', o)
          .executeTakeFirstOrThrow()
      ).n;
    for (const table of [
      'delivery_batches',
      'dlq_events',
      'ledger',
      'ledger_hours',
      'route_stats',
      'lineage_events',
    ] as const) {
      expect(Number(await count(table, org)), table).toBe(0);
    }
    // (Routing both events writes no hourly term: the hours' deletion is tested in dashboard/hours.test.ts.)
    for (const table of ['delivery_batches', 'ledger', 'route_stats', 'lineage_events'] as const) {
      expect(Number(await count(table, keep)), table).toBeGreaterThan(0);
    }
    expect(await copiesOf(orgEvents)).toEqual([]);
    const keptEvents = (
      await db().selectFrom('lineage_events').select('event_id').where('organization_id', '=', keep).execute()
    ).map((r) => r.event_id);
    expect(await copiesOf(keptEvents)).toHaveLength(2);
  });
});

describe('housekeeping', () => {
  it('purges old DLQ rows, lineage and expired taps', async () => {
    const old = new Date(Date.now() - 40 * 86_400_000);
    const base = {
      destination_id: 'd',
      organization_id: 1,
      integration_id: 1,
      stream: 's',
      delivery_batch_id: 'b',
      event: '{}',
      error_kind: 'rejected',
      reason: 'r',
      status_code: null,
      attempts: 1,
    };
    await db()
      .insertInto('dlq_events')
      .values([
        { ...base, id: 'dlq-old', event_id: 'e1', created_at: old },
        { ...base, id: 'dlq-new', event_id: 'e2' },
      ])
      .execute();
    await db()
      .insertInto('lineage_events')
      .values({
        event_id: 'lin-old',
        organization_id: 1,
        integration_id: 1,
        stream: 's',
        mapping_version_id: null,
        received_at: old,
        normalized_batch_id: 'b',
        routes: JSON.stringify([]),
        filtered: null,
        created_at: old,
      })
      .execute();
    await db()
      .insertInto('tap_sessions')
      .values({
        id: 'tap-old',
        destination_id: 'd',
        expires_at: new Date(Date.now() - 3_600_000),
        max_events: 10,
        created_by: null,
      })
      .execute();
    await db()
      .insertInto('tap_samples')
      .values({ session_id: 'tap-old', destination_id: 'd', event: '{}', at: new Date(Date.now() - 3_600_000) })
      .execute();
    const d = engineFor(t, fakes());
    const job = (name: string) =>
      d.jobs[0]!.handlers[name]!(
        { id: name, queue: DELIVERY_HOUSEKEEPING_QUEUE, name, payload: {}, attempt: 1, maxAttempts: 1 },
        new AbortController().signal,
      );
    await job(PURGE_DLQ_JOB);
    await job(PURGE_LINEAGE_JOB);
    await job(PURGE_TAPS_JOB);
    expect((await db().selectFrom('dlq_events').select('id').execute()).map((r) => r.id)).toEqual(['dlq-new']);
    expect(
      await db().selectFrom('lineage_events').select('event_id').where('event_id', '=', 'lin-old').execute(),
    ).toEqual([]);
    expect(await db().selectFrom('tap_sessions').select('id').where('id', '=', 'tap-old').execute()).toEqual([]);
    expect(await db().selectFrom('tap_samples').select('id').where('session_id', '=', 'tap-old').execute()).toEqual([]);
  });
});
