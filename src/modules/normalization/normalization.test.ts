import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/support/app.js';
import { createOrganization } from '../../../test/support/identity.js';
import {
  catchAll,
  createIntegration,
  ingestBatch,
  outputs,
  publishMapping,
  runNormalize,
  sleep,
} from '../../../test/support/normalization.js';
import { NORMALIZE_JOB, NORMALIZE_QUEUE } from '../../pipeline/envelope.js';
import { startConsumers } from '../../roles/jobs.js';

const REFRESH_MS = 100;

let t: TestApp;
let org: number;
beforeAll(async () => {
  // Lineage on: it keeps each event's envelope (mapping version, received_at) beside the outbox.
  t = await createTestApp({ env: { WEIR_MAPPING_REFRESH_MS: String(REFRESH_MS), WEIR_LINEAGE_ENABLED: 'true' } });
  org = await createOrganization(t, 'acme');
  await catchAll(t, org);
});
afterAll(async () => t?.close());

const db = () => t.container.database.db;

/** Entity Management (3004): `name` -> entity.name (required through `entity`), `msg` -> message (a string). */
function entityDoc(tag: string) {
  return {
    product: { name: 'App', vendor_name: 'Acme' },
    rules: [
      {
        name: 'skip',
        when: { path: 'kind', eq: 'skip' },
        class_uid: 3004,
        activity_id: 2,
        set: [{ target: 'entity.name', value: 'x' }],
      },
      {
        name: 'all',
        when: { path: 'kind', ne: 'other' },
        class_uid: 3004,
        activity_id: 1,
        set: [
          { target: 'entity.name', from: 'name' },
          { target: 'entity.type', value: tag, when: { path: 'name', exists: true } },
          { target: 'message', from: 'msg' },
          { target: 'time', from: 'ts', cast: 'timestamp' },
        ],
      },
    ],
  };
}

async function counters(integrationId: number, stream: string) {
  return db()
    .selectFrom('stream_counters')
    .selectAll()
    .where('integration_id', '=', integrationId)
    .where('stream', '=', stream)
    .executeTakeFirst();
}

async function quarantine(integrationId: number) {
  return db()
    .selectFrom('quarantine_events')
    .selectAll()
    .where('integration_id', '=', integrationId)
    .orderBy('id')
    .execute();
}

/** What the one pass wrote for a batch: its outbox events (catch-all route) with their lineage envelope. */
async function records(batchId: string) {
  const lineage = await db()
    .selectFrom('lineage_events')
    .selectAll()
    .where('normalized_batch_id', '=', batchId)
    .execute();
  const envelope = new Map(lineage.map((l) => [l.event_id, l]));
  return (await outputs(t, batchId)).map(({ id, ocsf }) => {
    const l = envelope.get(id)!;
    return {
      id,
      organization_id: l.organization_id,
      integration_id: l.integration_id,
      stream: l.stream,
      received_at: new Date(l.received_at).toISOString(),
      mapping_version_id: l.mapping_version_id,
      ocsf,
    };
  });
}

describe('normalization worker', () => {
  it('quarantines a stream without a mapping as no_mapping and creates its definition once', async () => {
    const integration = await createIntegration(t, org);
    const batch = ingestBatch(org, integration, 'app', [{ a: 1 }, { a: 2 }]);
    await runNormalize(t, batch);
    await runNormalize(t, ingestBatch(org, integration, 'app', [{ a: 3 }]));

    const q = await quarantine(integration);
    expect(q).toHaveLength(3);
    expect(q[0]).toMatchObject({
      organization_id: org,
      stream: 'app',
      error_kind: 'no_mapping',
      mapping_version_id: null,
      status: 'quarantined',
      raw: { a: 1 },
    });
    expect(q[0]!.error_detail).toContain('no live mapping');
    expect(q.map((r) => r.id).sort()).toEqual(
      [...batch.ids, ...q.filter((r) => !batch.ids.includes(r.id)).map((r) => r.id)].sort(),
    );

    const defs = await db()
      .selectFrom('mapping_definitions')
      .selectAll()
      .where('organization_id', '=', org)
      .where('stream', '=', 'app')
      .execute();
    expect(defs).toHaveLength(1);
    expect(defs[0]).toMatchObject({ platform: 'custom', name: 'custom / app', live_version_id: null });

    expect(await counters(integration, 'app')).toMatchObject({
      events_in: 3,
      normalized: 0,
      quarantined: 3,
      bytes_in: batch.bytes + Buffer.byteLength('[{"a":3}]'),
    });
    const stored = await db()
      .selectFrom('normalized_batches')
      .selectAll()
      .where('id', '=', batch.id)
      .executeTakeFirstOrThrow();
    expect(stored).toMatchObject({
      event_count: 0,
      quarantined_count: 2,
      events: '',
      route_state: 'done',
      source: 'push',
    });
  });

  it('takes batches from the queue port in the worker role', async () => {
    const integration = await createIntegration(t, org);
    await publishMapping(t, org, 'custom', 'queued', entityDoc('Policy'));
    await sleep(REFRESH_MS + 20);
    const batches = [
      ingestBatch(org, integration, 'queued', [{ name: 'a' }]),
      ingestBatch(org, integration, 'queued', [{ name: 'b' }, { kind: 'other' }]),
    ];
    for (const b of batches) await t.container.queue.enqueue(NORMALIZE_QUEUE, NORMALIZE_JOB, b, { jobId: b.id });
    const consumers = startConsumers(
      t.container.queue,
      t.container.jobs.filter((j) => j.queue === NORMALIZE_QUEUE),
      t.container.logger,
    );
    try {
      for (let i = 0; i < 100 && (await t.container.queue.counts(NORMALIZE_QUEUE)).completed < 2; i++) await sleep(50);
    } finally {
      await Promise.all(consumers.map((c) => c.close()));
    }
    expect(await counters(integration, 'queued')).toMatchObject({ events_in: 3, normalized: 2, quarantined: 1 });
    expect((await records(batches[1]!.id)).map((r) => r.ocsf.entity)).toEqual([{ name: 'b', type: 'Policy' }]);
  });

  it('normalizes with the live mapping, counts once however often the job is delivered', async () => {
    const integration = await createIntegration(t, org);
    const version = await publishMapping(t, org, 'custom', 'users', entityDoc('Policy'));
    await sleep(REFRESH_MS + 20);
    const batch = ingestBatch(org, integration, 'users', [
      { name: 'p1', msg: 'created' },
      { kind: 'other' }, // no rule matches
      { name: 'p2', ts: 'not a time' }, // cast fails
      { msg: 'no name' }, // entity missing: a required attribute
      { name: 'p3', msg: { text: 'hi' } }, // message is an object, not a string: invalid OCSF, strict by default (a number would be written as text)
    ]);
    await runNormalize(t, batch);
    await runNormalize(t, batch, 2); // redelivered after a crash

    const recs = await records(batch.id);
    expect(recs).toHaveLength(1);
    expect(recs[0]).toMatchObject({
      id: batch.ids[0],
      organization_id: org,
      integration_id: integration,
      stream: 'users',
      received_at: batch.received_at,
      mapping_version_id: version,
      ocsf: { class_uid: 3004, activity_id: 1, entity: { name: 'p1', type: 'Policy' }, message: 'created' },
    });
    const q = await quarantine(integration);
    expect(q.map((r) => [r.id, r.error_kind, r.mapping_version_id])).toEqual([
      [batch.ids[1], 'no_matching_rule', version],
      [batch.ids[2], 'cast_failed', version],
      [batch.ids[3], 'missing_required', version],
      [batch.ids[4], 'invalid_ocsf', version],
    ]);
    expect(q[2]!.error_detail).toBe('missing required attribute: entity');
    expect(q[3]!.error_detail).toBe('invalid OCSF (1 issue): type at message');
    expect(await counters(integration, 'users')).toMatchObject({
      events_in: 5,
      normalized: 1,
      flagged: 0,
      quarantined: 4,
      bytes_in: batch.bytes,
    });
    const stored = await db()
      .selectFrom('normalized_batches')
      .selectAll()
      .where('id', '=', batch.id)
      .executeTakeFirstOrThrow();
    // The batch's mark of exactly-once: it holds no events, the pass routed them in its transaction.
    expect(stored).toMatchObject({
      event_count: 1,
      flagged_count: 0,
      quarantined_count: 4,
      route_state: 'done',
      events: '',
      bytes: batch.bytes,
    });
    expect(
      await db().selectFrom('delivery_batches').select('event_count').where('source_batch_id', '=', batch.id).execute(),
    ).toEqual([{ event_count: 1 }]);
  });

  it('drops pulled events whose vendor key it accepted before, within the deduplication period', async () => {
    const integration = await createIntegration(t, org);
    await publishMapping(t, org, 'custom', 'pulled', entityDoc('Pulled'));
    await sleep(REFRESH_MS + 20);
    const pulled = (keys: string[]) => ({
      ...ingestBatch(
        org,
        integration,
        'pulled',
        keys.map((k) => ({ name: k })),
      ),
      source: 'pull' as const,
      keys,
    });
    const first = pulled(['a', 'b', 'c']);
    await runNormalize(t, first);
    // The page fetched again after a crash, with one new event; and a repeat within one batch.
    const again = pulled(['b', 'c', 'd', 'd']);
    await runNormalize(t, again);
    expect((await records(again.id)).map((r) => r.ocsf.entity)).toEqual([{ name: 'd', type: 'Pulled' }]);
    expect(await counters(integration, 'pulled')).toMatchObject({ events_in: 4, normalized: 4, duplicates: 3 });
    const keys = await db()
      .selectFrom('collected_keys')
      .select('key')
      .where('integration_id', '=', integration)
      .orderBy('key')
      .execute();
    expect(keys.map((k) => k.key)).toEqual(['a', 'b', 'c', 'd']);
    // Keys older than the period count as new again.
    await db()
      .updateTable('collected_keys')
      .set({ seen_at: new Date(Date.now() - 25 * 3_600_000) })
      .where('key', '=', 'a')
      .execute();
    const later = pulled(['a', 'b']);
    await runNormalize(t, later);
    expect(await counters(integration, 'pulled')).toMatchObject({ events_in: 5, duplicates: 4 });
    // Pushed events carry no keys and are never deduplicated.
    const pushed = ingestBatch(org, integration, 'pulled', [{ name: 'a' }, { name: 'a' }]);
    await runNormalize(t, pushed);
    expect(await counters(integration, 'pulled')).toMatchObject({ events_in: 7, duplicates: 4 });
  });

  it('a newly published version is used after the refresh interval, without restart', async () => {
    const integration = await createIntegration(t, org);
    const v1 = await publishMapping(t, org, 'custom', 'live', entityDoc('v1'));
    await sleep(REFRESH_MS + 20);
    const first = ingestBatch(org, integration, 'live', [{ name: 'a' }]);
    await runNormalize(t, first);
    expect((await records(first.id))[0]).toMatchObject({ mapping_version_id: v1, ocsf: { entity: { type: 'v1' } } });

    const v2 = await publishMapping(t, org, 'custom', 'live', entityDoc('v2'));
    await sleep(REFRESH_MS + 20);
    const second = ingestBatch(org, integration, 'live', [{ name: 'b' }]);
    await runNormalize(t, second);
    expect((await records(second.id))[0]).toMatchObject({ mapping_version_id: v2, ocsf: { entity: { type: 'v2' } } });
  });

  it('uses a built-in mapping when the organization has none, and its own over the built-in', async () => {
    const integration = await createIntegration(t, org);
    const builtin = await publishMapping(t, null, 'custom', 'shared', entityDoc('builtin'));
    await sleep(REFRESH_MS + 20);
    const a = ingestBatch(org, integration, 'shared', [{ name: 'a' }]);
    await runNormalize(t, a);
    expect((await records(a.id))[0]!.mapping_version_id).toBe(builtin);
    // Nothing was created for the organization: the built-in applies.
    expect(
      await db()
        .selectFrom('mapping_definitions')
        .select('id')
        .where('organization_id', '=', org)
        .where('stream', '=', 'shared')
        .execute(),
    ).toEqual([]);

    const own = await publishMapping(t, org, 'custom', 'shared', entityDoc('own'));
    await sleep(REFRESH_MS + 20);
    const b = ingestBatch(org, integration, 'shared', [{ name: 'b' }]);
    await runNormalize(t, b);
    expect((await records(b.id))[0]).toMatchObject({ mapping_version_id: own, ocsf: { entity: { type: 'own' } } });
  });

  it('lenient policy: invalid OCSF is delivered flagged; missing required attributes stay quarantined', async () => {
    const lenientOrg = await createOrganization(t, 'lenient');
    const integration = await createIntegration(t, lenientOrg);
    await db().insertInto('ocsf_policies').values({ organization_id: lenientOrg, mode: 'lenient' }).execute();
    await catchAll(t, lenientOrg);
    await publishMapping(t, lenientOrg, 'custom', 'users', entityDoc('Policy'));
    await sleep(REFRESH_MS + 20);
    const batch = ingestBatch(lenientOrg, integration, 'users', [
      { name: 'p3', msg: { text: 'hi' } },
      { msg: 'no name' },
      { name: 'ok' },
    ]);
    await runNormalize(t, batch);

    const recs = await records(batch.id);
    expect(recs.map((r) => [r.id, r.ocsf.message])).toEqual([
      [batch.ids[0], { text: 'hi' }],
      [batch.ids[2], undefined],
    ]);
    expect((await quarantine(integration)).map((r) => r.error_kind)).toEqual(['missing_required']);
    expect(await counters(integration, 'users')).toMatchObject({
      events_in: 3,
      normalized: 2,
      flagged: 1,
      quarantined: 1,
    });
    expect(
      await db()
        .selectFrom('normalized_batches')
        .select('flagged_count')
        .where('id', '=', batch.id)
        .executeTakeFirstOrThrow(),
    ).toEqual({ flagged_count: 1 });
  });

  it('records drift for unread fields with masked examples, compliance per class and raw samples', async () => {
    const integration = await createIntegration(t, org);
    await publishMapping(t, org, 'custom', 'drifting', entityDoc('Policy'));
    await sleep(REFRESH_MS + 20);
    const events = Array.from({ length: 40 }, (_, i) => ({
      name: `p${i}`,
      msg: i === 39 ? { text: 'ok' } : 'ok',
      actor: { email: `user${i}@example.com`, ip: '198.51.100.23' },
      tags: ['a'],
      ...(i < 20 ? { extra: true } : {}),
    }));
    const batch = ingestBatch(org, integration, 'drifting', events);
    await runNormalize(t, batch);
    await t.container.normalization.aggregates.flush();

    const drift = await db()
      .selectFrom('drift_fields')
      .selectAll()
      .where('integration_id', '=', integration)
      .orderBy('path')
      .execute();
    expect(drift.map((d) => [d.path, d.value_type, d.status])).toEqual([
      ['actor.email', 'string', 'new'],
      ['actor.ip', 'string', 'new'],
      ['extra', 'boolean', 'new'],
      ['tags[]', 'string', 'new'],
    ]);
    const byPath = Object.fromEntries(drift.map((d) => [d.path, d]));
    expect(byPath['actor.email']!.example).toMatch(/^u\*\*\*@example\.com$/);
    expect(byPath['actor.ip']!.example).toBe('198.51.100.x');
    // 39 events mapped (the last is invalid but mapped too): estimates from a 3-event sample.
    expect(byPath['actor.email']!.count).toBe(40);
    expect(byPath['extra']!.count).toBeGreaterThan(0);
    expect(byPath['extra']!.count).toBeLessThan(40);

    // A second batch adds to the counts; an ignored field keeps its status.
    await db().updateTable('drift_fields').set({ status: 'ignored' }).where('id', '=', byPath['tags[]']!.id).execute();
    await runNormalize(t, ingestBatch(org, integration, 'drifting', events.slice(0, 10)));
    await t.container.normalization.aggregates.flush();
    const tags = await db()
      .selectFrom('drift_fields')
      .selectAll()
      .where('id', '=', byPath['tags[]']!.id)
      .executeTakeFirstOrThrow();
    expect(tags).toMatchObject({ status: 'ignored', count: 50 });

    const compliance = await db()
      .selectFrom('ocsf_compliance')
      .selectAll()
      .where('integration_id', '=', integration)
      .execute();
    expect(compliance).toEqual([
      expect.objectContaining({
        organization_id: org,
        class_uid: 3004,
        valid: 49,
        invalid: 1,
        last_error: 'invalid OCSF (1 issue): type at message',
      }),
    ]);
    // One sample write per stream per interval: the second batch came too soon.
    const samples = await db()
      .selectFrom('raw_samples')
      .selectAll()
      .where('integration_id', '=', integration)
      .execute();
    expect(samples).toHaveLength(5);
    expect(samples[0]).toMatchObject({ organization_id: org, stream: 'drifting' });
  });

  it('does not report known_fields as drift, and keeps them under unmapped', async () => {
    const integration = await createIntegration(t, org);
    await publishMapping(t, org, 'custom', 'known', { ...entityDoc('Policy'), known_fields: ['actor', 'tags[]'] });
    await sleep(REFRESH_MS + 20);
    const events = Array.from({ length: 10 }, (_, i) => ({
      name: `p${i}`,
      actor: { email: `u${i}@example.com` },
      tags: ['a'],
      extra: i,
    }));
    const batch = ingestBatch(org, integration, 'known', events);
    await runNormalize(t, batch);
    await t.container.normalization.aggregates.flush();

    const drift = await db()
      .selectFrom('drift_fields')
      .select('path')
      .where('integration_id', '=', integration)
      .execute();
    expect(drift.map((d) => d.path)).toEqual(['extra']);
    const [first] = await records(batch.id);
    expect(first!.ocsf.unmapped).toEqual({ actor: { email: 'u0@example.com' }, tags: ['a'], extra: 0 });
  });

  it('does not record drift for events without a mapping', async () => {
    const integration = await createIntegration(t, org);
    await runNormalize(t, ingestBatch(org, integration, 'unmapped', [{ a: 1 }]));
    await t.container.normalization.aggregates.flush();
    expect(
      await db().selectFrom('drift_fields').select('id').where('integration_id', '=', integration).execute(),
    ).toEqual([]);
    // Samples help write the missing mapping.
    expect(
      await db().selectFrom('raw_samples').select('id').where('integration_id', '=', integration).execute(),
    ).toHaveLength(1);
  });
});
