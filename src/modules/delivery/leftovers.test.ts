import { sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/support/app.js';
import { addRoute, engineFor, fakes, pendingBatch, until } from '../../../test/support/delivery-engine.js';
import { createOrganization } from '../../../test/support/identity.js';
import { ledgerRows } from '../../../test/support/ledger.js';
import { createIntegration, outboxText } from '../../../test/support/normalization.js';
import { up as retireRoutingStage } from '../../platform/db/migrations/0025_retire_routing_stage.js';
import { DELIVERY_HOUSEKEEPING_QUEUE } from './jobs.js';
import { ROUTE_LEFTOVER_JOB } from './leftovers.js';

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

async function ledger(orgId: number) {
  const [row] = await ledgerRows(t, { organization_id: orgId });
  return row;
}

describe('normalized batches an earlier version left pending', () => {
  it('migration 0025 queues a job for each; the job routes it with the pass, and the lanes deliver it', async () => {
    const org = await createOrganization(t, 'leftover-migration');
    const integration = await createIntegration(t, org);
    const f = fakes();
    const a = f.destination(org);
    await addRoute(t, org, { destinations: [a.id], condition: { field: 'class_uid', op: 'eq', value: 3002 } });
    const batch = await pendingBatch(t, org, integration, [{ class_uid: 3002, n: 1 }, { class_uid: 1001 }]);
    // Before: its events are pending (the routing backlog), nowhere else.
    expect(await ledger(org)).toMatchObject({ events_in: 2, pending: 2, unaccounted: 0 });

    const migrationDb = db() as unknown as Kysely<unknown>;
    await retireRoutingStage(migrationDb);
    await retireRoutingStage(migrationDb); // a second run queues nothing twice
    const jobs = await db()
      .selectFrom('jobs')
      .select(['queue', 'name', 'payload', 'state'])
      .where('id', '=', `route-leftover:${batch.id}`)
      .execute();
    // The migration may not import the module: the names it writes are the module's.
    expect(jobs).toEqual([
      {
        queue: DELIVERY_HOUSEKEEPING_QUEUE,
        name: ROUTE_LEFTOVER_JOB,
        payload: { batch_id: batch.id },
        state: 'waiting',
      },
    ]);

    const d = engineFor(t, f);
    const handler = d.jobs.find((j) => j.queue === DELIVERY_HOUSEKEEPING_QUEUE)!.handlers[ROUTE_LEFTOVER_JOB]!;
    const job = { id: 'j', queue: DELIVERY_HOUSEKEEPING_QUEUE, name: ROUTE_LEFTOVER_JOB, attempt: 1, maxAttempts: 10 };
    await handler({ ...job, payload: jobs[0]!.payload }, new AbortController().signal);
    const nb = await db()
      .selectFrom('normalized_batches')
      .selectAll()
      .where('id', '=', batch.id)
      .executeTakeFirstOrThrow();
    expect(nb).toMatchObject({ route_state: 'done', events: '' });
    const [row] = await db()
      .selectFrom('delivery_batches')
      .selectAll()
      .where('source_batch_id', '=', batch.id)
      .execute();
    expect(row).toMatchObject({ destination_id: a.id, kind: 'primary', event_count: 1 });
    expect(JSON.parse(await outboxText(t, row!.events))).toEqual({ class_uid: 3002, n: 1 });
    expect(await ledger(org)).toMatchObject({ events_in: 2, filtered: 1, routed: 1, pending: 1, unaccounted: 0 });

    // A redelivered job writes nothing twice.
    await handler({ ...job, payload: jobs[0]!.payload, attempt: 2 }, new AbortController().signal);
    expect(
      await db().selectFrom('delivery_batches').select('id').where('organization_id', '=', org).execute(),
    ).toHaveLength(1);

    const lanes = d.loops[0]!.start();
    try {
      await until(() => f.received.get(a.id)?.length === 1, 5_000, 'delivery');
      await until(async () => (await ledger(org))?.pending === 0, 5_000, 'empty outbox');
    } finally {
      await lanes.stop();
    }
    expect(f.received.get(a.id)).toEqual([batch.records[0]!.id]);
    expect(await ledger(org)).toMatchObject({ events_in: 2, filtered: 1, delivered: 1, pending: 0, unaccounted: 0 });
  });

  it('a batch routed meanwhile (by a dispatcher of the earlier version) is not routed again', async () => {
    const org = await createOrganization(t, 'leftover-routed');
    const integration = await createIntegration(t, org);
    const f = fakes();
    const a = f.destination(org);
    await addRoute(t, org, { destinations: [a.id] });
    const batch = await pendingBatch(t, org, integration, [{ class_uid: 1 }]);
    await db().updateTable('normalized_batches').set({ route_state: 'done' }).where('id', '=', batch.id).execute();
    const d = engineFor(t, f);
    expect(await d.routeLeftover(batch.id)).toBe(false);
    expect(await d.routeLeftover('no-such-batch')).toBe(false);
    expect(await db().selectFrom('delivery_batches').select('id').where('organization_id', '=', org).execute()).toEqual(
      [],
    );
  });

  it('a batch written without a state is a done mark', async () => {
    const { rows } = await sql<{ d: string }>`
      select column_default as d from information_schema.columns
      where table_name = 'normalized_batches' and column_name = 'route_state'`.execute(db());
    expect(rows[0]!.d).toContain("'done'");
  });
});
