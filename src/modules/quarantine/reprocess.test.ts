import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/support/app.js';
import { createOrganization, createPrincipal, type Principal } from '../../../test/support/identity.js';
import { integration, quarantine, stored } from '../../../test/support/quarantine.js';
import { newId } from '../../core/ids.js';
import type { ReprocessItem, ReprocessOutcome } from './service.js';
import { catchAll, outputs } from '../../../test/support/normalization.js';

let t: TestApp;
let orgA: number;
let orgB: number;
let intA: number;
let intB: number;
let operatorA: Principal;

type Json = Record<string, unknown>;

function call(who: Principal, url: string, payload?: unknown) {
  return t.app.inject({
    method: 'POST',
    url,
    headers: who.headers,
    ...(payload !== undefined ? { payload: payload as Json } : {}),
  });
}

/** Replaces the normalization service's reprocess with a scripted one. */
function fakeReprocess(decide: (item: ReprocessItem) => ReprocessOutcome) {
  return vi
    .spyOn(t.container.normalization.service, 'reprocess')
    .mockImplementation(async (items: ReprocessItem[]) => items.map(decide));
}

const success = (item: ReprocessItem): ReprocessOutcome => ({ id: item.id, ok: true, mapping_version_id: 'version-2' });
const failure = (item: ReprocessItem): ReprocessOutcome => ({
  id: item.id,
  ok: false,
  error_kind: 'cast_failed',
  error_detail: 'src_endpoint.ip: not an IP',
  mapping_version_id: 'version-2',
});

beforeAll(async () => {
  t = await createTestApp({ env: { WEIR_TOKEN_RATE_LIMIT: '1000000' } });
  orgA = await createOrganization(t, 'Org A');
  orgB = await createOrganization(t, 'Org B');
  intA = await integration(t, orgA, 'a-push');
  intB = await integration(t, orgB, 'b-push');
  operatorA = await createPrincipal(t, { role: 'operator', organizationId: orgA });
});
afterAll(async () => t?.close());
beforeEach(async () => {
  await t.container.database.db.deleteFrom('quarantine_events').execute();
});
afterEach(() => {
  vi.restoreAllMocks();
});

describe('reprocess (normalization faked)', () => {
  it('bulk: successes are marked reprocessed, failures keep waiting with the new error; the rest are reported', async () => {
    const [good, bad, done, foreign] = await quarantine(t, [
      { organizationId: orgA, integrationId: intA, raw: { ip: '198.51.100.7' } },
      { organizationId: orgA, integrationId: intA, raw: { ip: 'nope' } },
      { organizationId: orgA, integrationId: intA, status: 'reprocessed' },
      { organizationId: orgB, integrationId: intB },
    ]);
    const unknown = newId();
    const spy = fakeReprocess((item) => ((item.raw as { ip?: string }).ip === 'nope' ? failure(item) : success(item)));
    const res = await call(operatorA, '/api/quarantine/bulk/reprocess', { ids: [good, bad, done, foreign, unknown] });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({
      requested: 5,
      reprocessed: 1,
      failed: 1,
      failures: [
        {
          id: bad,
          error_kind: 'cast_failed',
          error_detail: 'src_endpoint.ip: not an IP',
          mapping_version_id: 'version-2',
        },
      ],
      errors: [
        { id: foreign, code: 'resource.not_found', detail: 'not found' },
        { id: unknown, code: 'resource.not_found', detail: 'not found' },
        { id: done, code: 'quarantine.already_reprocessed', detail: 'already reprocessed' },
      ],
    });
    // Only the waiting events of the caller's scope reach normalization, with their raw content.
    expect(spy).toHaveBeenCalledTimes(1);
    const items = spy.mock.calls[0]![0];
    expect(items.map((i) => i.id).sort()).toEqual([good, bad].sort());
    const first = items.find((i) => i.id === good)!;
    expect(first).toMatchObject({
      organization_id: orgA,
      integration_id: intA,
      stream: 'events',
      raw: { ip: '198.51.100.7' },
    });
    expect(first.received_at).toBeInstanceOf(Date);

    expect(await stored(t, good!)).toMatchObject({
      status: 'reprocessed',
      attempts: 2,
      mapping_version_id: 'version-2',
      error_kind: 'no_mapping',
      reprocessed_at: expect.any(Date),
    });
    expect(await stored(t, bad!)).toMatchObject({
      status: 'quarantined',
      attempts: 2,
      mapping_version_id: 'version-2',
      error_kind: 'cast_failed',
      error_detail: 'src_endpoint.ip: not an IP',
      reprocessed_at: null,
    });
    expect(await stored(t, done!)).toMatchObject({ status: 'reprocessed', attempts: 1 });
    expect(await stored(t, foreign!)).toMatchObject({ status: 'quarantined', attempts: 1 });

    const audit = await t.container.database.db
      .selectFrom('audit_log')
      .selectAll()
      .where('operation_id', '=', 'quarantine.bulk_reprocess')
      .orderBy('seq', 'desc')
      .executeTakeFirstOrThrow();
    expect(audit).toMatchObject({ outcome: 'success', organization_id: orgA });
    expect(audit.details).toMatchObject({
      reprocessed: 1,
      failed: 1,
      not_found: [foreign, unknown],
      already_reprocessed: [done],
    });
  });

  it('single: answers the event with its new state; 409 once reprocessed; 404 outside the scope', async () => {
    const [one, two, foreign] = await quarantine(t, [
      { organizationId: orgA, integrationId: intA },
      { organizationId: orgA, integrationId: intA },
      { organizationId: orgB, integrationId: intB },
    ]);
    const spy = fakeReprocess((item) => (item.id === one ? success(item) : failure(item)));
    const ok = await call(operatorA, `/api/quarantine/${one}/reprocess`);
    expect(ok.statusCode, ok.body).toBe(200);
    expect(ok.json()).toMatchObject({
      id: one,
      status: 'reprocessed',
      attempts: 2,
      mapping_version_id: 'version-2',
      reprocessed_at: expect.stringMatching(/Z$/),
    });
    expect(ok.json()).not.toHaveProperty('raw');

    const again = await call(operatorA, `/api/quarantine/${one}/reprocess`);
    expect(again.statusCode).toBe(409);
    expect(again.json().error.code).toBe('quarantine.already_reprocessed');

    const failed = await call(operatorA, `/api/quarantine/${two}/reprocess`);
    expect(failed.statusCode).toBe(200);
    expect(failed.json()).toMatchObject({
      id: two,
      status: 'quarantined',
      attempts: 2,
      error_kind: 'cast_failed',
      error_detail: 'src_endpoint.ip: not an IP',
      reprocessed_at: null,
    });

    for (const id of [foreign, newId(), 'not-a-uuid'])
      expect((await call(operatorA, `/api/quarantine/${id}/reprocess`)).statusCode, id).toBe(404);
    expect(spy).toHaveBeenCalledTimes(2);
    expect(await stored(t, foreign!)).toMatchObject({ attempts: 1 });
  });

  it('changes nothing when normalization itself fails (one transaction)', async () => {
    const [id] = await quarantine(t, [{ organizationId: orgA, integrationId: intA }]);
    vi.spyOn(t.container.normalization.service, 'reprocess').mockRejectedValue(new Error('database went away'));
    const res = await call(operatorA, '/api/quarantine/bulk/reprocess', { ids: [id] });
    expect(res.statusCode).toBe(500);
    expect(typeof res.json().detail).toBe('string');
    expect(await stored(t, id!)).toMatchObject({ status: 'quarantined', attempts: 1, error_kind: 'no_mapping' });
  });
});

describe('reprocess with the real normalization stage', () => {
  const DOCUMENT = {
    format_version: 1,
    product: { name: 'Custom app', vendor_name: 'Example' },
    rules: [
      {
        name: 'api call',
        class_uid: 6003,
        activity_id: 2,
        set: [
          { target: 'actor.user.name', from: 'user' },
          { target: 'api.operation', from: 'op' },
          { target: 'src_endpoint.ip', from: 'ip', cast: 'ip' },
          { target: 'severity_id', value: 1 },
        ],
      },
    ],
  };

  /** Makes DOCUMENT the live version of org A's custom/events definition. */
  async function publish(): Promise<string> {
    const db = t.container.database.db;
    const versionId = newId();
    const existing = await db
      .selectFrom('mapping_definitions')
      .select('id')
      .where('organization_id', '=', orgA)
      .where('platform', '=', 'custom')
      .where('stream', '=', 'events')
      .executeTakeFirst();
    const definitionId = existing?.id ?? newId();
    if (!existing)
      await db
        .insertInto('mapping_definitions')
        .values({
          id: definitionId,
          organization_id: orgA,
          platform: 'custom',
          stream: 'events',
          name: 'custom / events',
        })
        .execute();
    await db
      .insertInto('mapping_versions')
      .values({
        id: versionId,
        definition_id: definitionId,
        version: 1,
        document: JSON.stringify(DOCUMENT),
        checksum: versionId,
      })
      .execute();
    await db
      .updateTable('mapping_definitions')
      .set({ live_version_id: versionId, updated_at: new Date() })
      .where('id', '=', definitionId)
      .execute();
    return versionId;
  }

  it('events quarantined as no_mapping fail again without a mapping, then become reprocessed once a version is live', async () => {
    await catchAll(t, orgA);
    const [good, bad] = await quarantine(t, [
      { organizationId: orgA, integrationId: intA, raw: { user: 'alice', op: 'GetObject', ip: '198.51.100.7' } },
      { organizationId: orgA, integrationId: intA, raw: { user: 'bob', op: 'PutObject', ip: 'not-an-ip' } },
    ]);
    const before = await call(operatorA, '/api/quarantine/bulk/reprocess', { ids: [good, bad] });
    expect(before.statusCode, before.body).toBe(200);
    expect(before.json()).toMatchObject({ reprocessed: 0, failed: 2 });
    expect(before.json().failures[0]).toMatchObject({ error_kind: 'no_mapping', mapping_version_id: null });
    expect(await stored(t, good!)).toMatchObject({ status: 'quarantined', attempts: 2, error_kind: 'no_mapping' });

    const versionId = await publish();
    const after = await call(operatorA, '/api/quarantine/bulk/reprocess', { ids: [good, bad] });
    expect(after.statusCode, after.body).toBe(200);
    expect(after.json()).toMatchObject({ reprocessed: 1, failed: 1, errors: [] });
    expect(after.json().failures).toEqual([
      { id: bad, error_kind: 'cast_failed', error_detail: expect.any(String), mapping_version_id: versionId },
    ]);
    expect(await stored(t, good!)).toMatchObject({
      status: 'reprocessed',
      attempts: 3,
      mapping_version_id: versionId,
      reprocessed_at: expect.any(Date),
    });
    expect(await stored(t, bad!)).toMatchObject({
      status: 'quarantined',
      attempts: 3,
      error_kind: 'cast_failed',
      mapping_version_id: versionId,
    });

    // The success went on down the pipeline in the same pass: routed to the organization's outbox.
    const batches = await t.container.database.db
      .selectFrom('normalized_batches')
      .selectAll()
      .where('source', '=', 'reprocess')
      .execute();
    expect(batches).toHaveLength(1);
    expect(batches[0]).toMatchObject({
      organization_id: orgA,
      integration_id: intA,
      stream: 'events',
      event_count: 1,
      route_state: 'done',
    });
    const [record] = await outputs(t, batches[0]!.id);
    expect(record).toMatchObject({ id: good, ocsf: { class_uid: 6003, actor: { user: { name: 'alice' } } } });
  });
});
