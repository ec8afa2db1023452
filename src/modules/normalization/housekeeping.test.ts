import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/support/app.js';
import { createOrganization } from '../../../test/support/identity.js';
import {
  catchAll,
  createIntegration,
  ingestBatch,
  outputs,
  publishMapping,
  runJob,
  runNormalize,
  sleep,
} from '../../../test/support/normalization.js';
import { newId } from '../../core/ids.js';
import { NORMALIZATION_HOUSEKEEPING_QUEUE, PURGE_BATCHES_JOB, PURGE_QUARANTINE_JOB, TRIM_SAMPLES_JOB } from './jobs.js';
import { ORG_TABLES } from './store.js';

let t: TestApp;
beforeAll(async () => {
  // Refresh rarely: reprocessing must not depend on the interval.
  t = await createTestApp({ env: { WEIR_MAPPING_REFRESH_MS: '30000' } });
});
afterAll(async () => t?.close());

const db = () => t.container.database.db;
const DAY = 86_400_000;

const doc = {
  product: { name: 'App', vendor_name: 'Acme' },
  rules: [{ name: 'all', class_uid: 3004, activity_id: 1, set: [{ target: 'entity.name', from: 'name' }] }],
};

async function quarantineRow(
  organizationId: number,
  integrationId: number,
  ageMs: number,
  raw: Record<string, unknown> = { a: 1 },
) {
  const id = newId();
  const at = new Date(Date.now() - ageMs);
  await db()
    .insertInto('quarantine_events')
    .values({
      id,
      organization_id: organizationId,
      integration_id: integrationId,
      stream: 's',
      received_at: at,
      raw: JSON.stringify(raw),
      error_kind: 'no_mapping',
      error_detail: 'x',
      mapping_version_id: null,
      created_at: at,
      updated_at: at,
    })
    .execute();
  return id;
}

describe('normalization housekeeping', () => {
  it('purges quarantined events past their organization retention (7 days by default)', async () => {
    const a = await createOrganization(t, 'default-retention');
    const b = await createOrganization(t, 'long-retention');
    await db().updateTable('organizations').set({ retention_days: 30 }).where('id', '=', b).execute();
    const ia = await createIntegration(t, a);
    const ib = await createIntegration(t, b);
    const keptA = await quarantineRow(a, ia, 6 * DAY);
    await quarantineRow(a, ia, 8 * DAY);
    const keptB = await quarantineRow(b, ib, 8 * DAY);
    await quarantineRow(b, ib, 31 * DAY);

    await runJob(t, NORMALIZATION_HOUSEKEEPING_QUEUE, PURGE_QUARANTINE_JOB);
    const left = await db()
      .selectFrom('quarantine_events')
      .select('id')
      .where('organization_id', 'in', [a, b])
      .orderBy('id')
      .execute();
    expect(left.map((r) => r.id)).toEqual([keptA, keptB].sort());
  });

  it('purges routed normalized batches past their organization retention, never pending ones', async () => {
    const org = await createOrganization(t, 'batch-retention');
    const integration = await createIntegration(t, org);
    const batch = (ageMs: number, routeState: 'done' | 'pending') => {
      const at = new Date(Date.now() - ageMs);
      return {
        id: newId(),
        organization_id: org,
        integration_id: integration,
        stream: 's',
        source: 'push',
        event_count: 1,
        bytes: 1,
        events: '',
        route_state: routeState,
        created_at: at,
      };
    };
    const kept = batch(6 * DAY, 'done');
    // Not routed yet (a dispatcher outage): its events are counted nowhere else, so it stays.
    const pending = batch(30 * DAY, 'pending');
    await db()
      .insertInto('normalized_batches')
      .values([kept, batch(8 * DAY, 'done'), pending])
      .execute();

    await runJob(t, NORMALIZATION_HOUSEKEEPING_QUEUE, PURGE_BATCHES_JOB);
    const left = await db()
      .selectFrom('normalized_batches')
      .select('id')
      .where('organization_id', '=', org)
      .orderBy('id')
      .execute();
    expect(left.map((r) => r.id)).toEqual([kept.id, pending.id].sort());
  });

  it('keeps the newest 50 raw samples per stream and none older than 7 days', async () => {
    const org = await createOrganization(t, 'samples');
    const integration = await createIntegration(t, org);
    const rows = Array.from({ length: 60 }, (_, i) => ({
      id: newId(),
      organization_id: org,
      integration_id: integration,
      stream: 'busy',
      received_at: new Date(Date.now() - i * 60_000),
      raw: JSON.stringify({ i }),
    }));
    rows.push({
      id: newId(),
      organization_id: org,
      integration_id: integration,
      stream: 'quiet',
      received_at: new Date(Date.now() - 8 * DAY),
      raw: JSON.stringify({ old: true }),
    });
    rows.push({
      id: newId(),
      organization_id: org,
      integration_id: integration,
      stream: 'quiet',
      received_at: new Date(),
      raw: JSON.stringify({ fresh: true }),
    });
    await db().insertInto('raw_samples').values(rows).execute();

    await runJob(t, NORMALIZATION_HOUSEKEEPING_QUEUE, TRIM_SAMPLES_JOB);
    const busy = await db()
      .selectFrom('raw_samples')
      .select('raw')
      .where('integration_id', '=', integration)
      .where('stream', '=', 'busy')
      .execute();
    expect(busy).toHaveLength(50);
    expect(busy.map((r) => (r.raw as { i: number }).i).sort((x, y) => x - y)).toEqual(
      Array.from({ length: 50 }, (_, i) => i),
    );
    const quiet = await db()
      .selectFrom('raw_samples')
      .select('raw')
      .where('integration_id', '=', integration)
      .where('stream', '=', 'quiet')
      .execute();
    expect(quiet.map((r) => r.raw)).toEqual([{ fresh: true }]);
  });

  it('beat enqueues one housekeeping job per task and slot', async () => {
    const tasks = t.container.beatTasks.filter((x) =>
      [PURGE_QUARANTINE_JOB, TRIM_SAMPLES_JOB, PURGE_BATCHES_JOB].includes(x.name),
    );
    expect(tasks).toHaveLength(3);
    const now = new Date('2026-11-21T10:01:00Z');
    for (const task of tasks) {
      await task.run(now);
      await task.run(new Date(now.getTime() + 60_000));
    }
    const counts = await t.container.queue.counts(NORMALIZATION_HOUSEKEEPING_QUEUE);
    expect(counts.waiting + counts.delayed).toBe(3);
  });

  it("deletes an organization's normalization data with the organization", async () => {
    const steps = t.container.organizations.dataDeletion.steps();
    for (const table of ORG_TABLES) expect(steps).toContain(table);

    const org = await createOrganization(t, 'doomed');
    const other = await createOrganization(t, 'survivor');
    const integration = await createIntegration(t, org);
    const otherIntegration = await createIntegration(t, other);
    await publishMapping(t, org, 'custom', 's', doc);
    await publishMapping(t, other, 'custom', 's', doc);
    // The first batch this app normalizes: the registry loads on first use and sees both.
    await db().insertInto('ocsf_policies').values({ organization_id: org, mode: 'lenient' }).execute();
    for (const [o, i] of [
      [org, integration],
      [other, otherIntegration],
    ] as const) {
      await runNormalize(t, ingestBatch(o, i, 's', [{ name: 'x', extra: 1 }, { nope: true }]));
      await quarantineRow(o, i, 0);
    }
    await t.container.normalization.aggregates.flush();
    // A batch of each still waiting for normalization.
    for (const [o, i] of [
      [org, integration],
      [other, otherIntegration],
    ] as const) {
      await db()
        .insertInto('accepted_batches')
        .values({
          id: newId(),
          organization_id: o,
          integration_id: i,
          stream: 's',
          event_count: 3,
          accepted_at: new Date(),
        })
        .execute();
    }

    const id = newId();
    await db()
      .insertInto('org_data_deletions')
      .values({ id, organization_id: org, requested_by: null, state: 'queued', detail: JSON.stringify({}) })
      .execute();
    await t.container.organizations.dataDeletion.run(id, 1, 1);
    const deletion = await db()
      .selectFrom('org_data_deletions')
      .selectAll()
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    expect(deletion.state).toBe('completed');

    for (const table of ORG_TABLES) {
      const count = async (o: number) =>
        Number(
          (
            await sql<{
              n: number;
            }>`select count(*)::int as n from ${sql.table(table)} where organization_id = ${o}`.execute(db())
          ).rows[0]!.n,
        );
      expect(await count(org), table).toBe(0);
      if (!['ocsf_policies', 'ingestion_tokens'].includes(table)) expect(await count(other), table).toBeGreaterThan(0);
    }
  });
});

describe('reprocessing quarantined events', () => {
  it('normalizes with the version published just before, writes a reprocess batch and counts no new events', async () => {
    const org = await createOrganization(t, 'reprocess');
    const integration = await createIntegration(t, org);
    await catchAll(t, org);
    // A destination created a moment ago is seen once the worker's snapshot may refresh (a poll).
    await sleep(300);
    const batch = ingestBatch(org, integration, 's', [{ name: 'a' }, { other: 1 }]);
    await runNormalize(t, batch);
    const before = await db()
      .selectFrom('stream_counters')
      .selectAll()
      .where('integration_id', '=', integration)
      .executeTakeFirstOrThrow();
    expect(before).toMatchObject({ events_in: 2, normalized: 0, quarantined: 2 });

    // Published after the worker's last refresh, which is not due for 30 s.
    const version = await publishMapping(t, org, 'custom', 's', doc);
    const rows = await db()
      .selectFrom('quarantine_events')
      .selectAll()
      .where('integration_id', '=', integration)
      .orderBy('id')
      .execute();
    const items = rows.map((r) => ({
      id: r.id,
      organization_id: r.organization_id,
      integration_id: r.integration_id,
      stream: r.stream,
      received_at: r.received_at,
      raw: r.raw as Record<string, unknown>,
    }));
    const outcomes = await t.container.normalization.service.reprocess(items);

    expect(outcomes).toEqual([
      { id: batch.ids[0], ok: true, mapping_version_id: version },
      {
        id: batch.ids[1],
        ok: false,
        error_kind: 'missing_required',
        error_detail: 'missing required attribute: entity',
        mapping_version_id: version,
      },
    ]);
    const out = await db()
      .selectFrom('normalized_batches')
      .selectAll()
      .where('integration_id', '=', integration)
      .where('source', '=', 'reprocess')
      .execute();
    expect(out).toHaveLength(1);
    expect(out[0]).toMatchObject({ event_count: 1, quarantined_count: 0, route_state: 'done', events: '' });
    // Routed in the same pass: the released event is in the outbox, under its own id.
    expect((await outputs(t, out[0]!.id)).map((o) => [o.id, (o.ocsf.entity as { name: string }).name])).toEqual([
      [batch.ids[0], 'a'],
    ]);

    const after = await db()
      .selectFrom('stream_counters')
      .select([
        sql<number>`sum(events_in)::int`.as('events_in'),
        sql<number>`sum(normalized)::int`.as('normalized'),
        sql<number>`sum(quarantined)::int`.as('quarantined'),
      ])
      .where('integration_id', '=', integration)
      .executeTakeFirstOrThrow();
    expect(after).toEqual({ events_in: 2, normalized: 1, quarantined: 2 });
    // The quarantine rows are the quarantine module's to update.
    expect(
      (
        await db().selectFrom('quarantine_events').select('status').where('integration_id', '=', integration).execute()
      ).map((r) => r.status),
    ).toEqual(['quarantined', 'quarantined']);
  });

  it('reports events of a vanished integration, and an empty call, without writing', async () => {
    expect(await t.container.normalization.service.reprocess([])).toEqual([]);
    const org = await createOrganization(t, 'vanished');
    const outcomes = await t.container.normalization.service.reprocess([
      { id: newId(), organization_id: org, integration_id: 999_999, stream: 's', received_at: new Date(), raw: {} },
    ]);
    expect(outcomes).toEqual([
      {
        id: expect.any(String),
        ok: false,
        error_kind: 'no_mapping',
        error_detail: 'the integration no longer exists',
        mapping_version_id: null,
      },
    ]);
  });
});
