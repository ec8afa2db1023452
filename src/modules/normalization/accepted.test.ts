// The ledger's queued events and the normalization transaction: an accepted batch leaves
// pending_normalization in the transaction that counts it in, once however often its job
// runs, and also when the worker takes its job before the accepting transaction committed
// (BullMQ hands the job out at once; the database queue commits job and row together).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/support/app.js';
import { usingPostgres } from '../../../test/support/db.js';
import { createOrganization } from '../../../test/support/identity.js';
import { createIntegration, ingestBatch, runNormalize, sleep } from '../../../test/support/normalization.js';
import { ledgerRows } from '../../../test/support/ledger.js';

let t: TestApp;
let org: number;
beforeAll(async () => {
  t = await createTestApp();
  org = await createOrganization(t, 'accepted');
});
afterAll(async () => t?.close());

const db = () => t.container.database.db;
const balance = async (integrationId: number) => (await ledgerRows(t, { integration_id: integrationId }))[0];
const events = (n: number) => Array.from({ length: n }, (_, i) => ({ n: i }));

describe('accepted batches in the ledger', () => {
  it('counts an accepted batch in and pending until its normalization commits, once however often its job runs', async () => {
    const integration = await createIntegration(t, org);
    const batch = ingestBatch(org, integration, 'app', events(7));
    await t.container.ingest.accept(batch);
    expect(await balance(integration)).toMatchObject({
      events_in: 7,
      pending_normalization: 7,
      pending: 7,
      unaccounted: 0,
    });

    await runNormalize(t, batch);
    // No mapping: all quarantined, nothing pending.
    expect(await balance(integration)).toMatchObject({
      events_in: 7,
      quarantined: 7,
      pending_normalization: 0,
      pending: 0,
      unaccounted: 0,
    });
    await runNormalize(t, batch, 2);
    expect(await balance(integration)).toMatchObject({
      events_in: 7,
      quarantined: 7,
      pending_normalization: 0,
      pending: 0,
      unaccounted: 0,
    });
    const rows = await db().selectFrom('accepted_batches').select('event_count').where('id', '=', batch.id).execute();
    expect(rows.every((r) => r.event_count === 0)).toBe(true);
  });

  it('purges the markers a redelivered or early job leaves, with the routed batches', async () => {
    const integration = await createIntegration(t, org);
    const batch = ingestBatch(org, integration, 'app', events(2));
    await runNormalize(t, batch);
    expect(
      await db().selectFrom('accepted_batches').select('event_count').where('id', '=', batch.id).execute(),
    ).toEqual([{ event_count: 0 }]);
    const store = (await import('./store.js')).createNormalizationStore(db());
    await store.purgeBatches(new Date(Date.now() + 2 * 3_600_000), 7, 100);
    expect(await db().selectFrom('accepted_batches').select('id').where('id', '=', batch.id).execute()).toEqual([]);
  });

  // Two transactions at once: PostgreSQL (PGlite is one connection, and runs the database queue).
  it.runIf(usingPostgres)(
    'counts a batch once when its job is normalized before the accepting transaction commits',
    async () => {
      const integration = await createIntegration(t, org);
      const batch = ingestBatch(org, integration, 'app', events(5));
      const accepting = await db().startTransaction().execute();
      await accepting
        .insertInto('accepted_batches')
        .values({
          id: batch.id,
          organization_id: org,
          integration_id: integration,
          stream: 'app',
          event_count: 5,
          accepted_at: new Date(),
        })
        .execute();
      const normalizing = runNormalize(t, batch);
      await sleep(300);
      await accepting.commit().execute();
      await normalizing;
      expect(await balance(integration)).toMatchObject({
        events_in: 5,
        quarantined: 5,
        pending_normalization: 0,
        pending: 0,
        unaccounted: 0,
      });
    },
  );
});
