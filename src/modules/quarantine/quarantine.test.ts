import { sql } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/support/app.js';
import { createOrganization, createPrincipal, type Principal, injectAs } from '../../../test/support/identity.js';
import { integration, quarantine, stored } from '../../../test/support/quarantine.js';
import { newId } from '../../core/ids.js';
import { MAX_BULK_IDS } from '../../platform/http/schemas.js';

let t: TestApp;
let orgA: number;
let orgB: number;
let intA: number;
let intA2: number;
let intB: number;
let root: Principal;
let adminA: Principal;
let operatorA: Principal;
let viewerA: Principal;

type Json = Record<string, unknown>;
type Page = { total: number; limit: number; offset: number; items: Json[] };

const call = (who: Principal, method: 'GET' | 'POST', url: string, payload?: unknown) =>
  injectAs(t, who, method, url, payload);

beforeAll(async () => {
  t = await createTestApp({ env: { WEIR_TOKEN_RATE_LIMIT: '1000000' } });
  orgA = await createOrganization(t, 'Org A');
  orgB = await createOrganization(t, 'Org B');
  intA = await integration(t, orgA, 'a-push');
  intA2 = await integration(t, orgA, 'a-other');
  intB = await integration(t, orgB, 'b-push');
  root = await createPrincipal(t, { role: 'admin' });
  adminA = await createPrincipal(t, { role: 'admin', organizationId: orgA });
  operatorA = await createPrincipal(t, { role: 'operator', organizationId: orgA });
  viewerA = await createPrincipal(t, { role: 'viewer', organizationId: orgA });
});
afterAll(async () => t?.close());
beforeEach(async () => {
  await t.container.database.db.deleteFrom('quarantine_events').execute();
});

describe('GET /api/quarantine', () => {
  it('lists quarantined events newest first in the envelope, without the raw event', async () => {
    const [older, reprocessed, newer] = await quarantine(t, [
      { organizationId: orgA, integrationId: intA },
      { organizationId: orgA, integrationId: intA, status: 'reprocessed' },
      {
        organizationId: orgA,
        integrationId: intA2,
        stream: 'audit',
        errorKind: 'cast_failed',
        errorDetail: 'time: not a timestamp',
      },
      { organizationId: orgB, integrationId: intB },
    ]);
    const res = await call(operatorA, 'GET', '/api/quarantine');
    expect(res.statusCode).toBe(200);
    const body = res.json<Page>();
    expect(body).toMatchObject({ total: 2, limit: 50, offset: 0 });
    expect(body.items.map((i) => i.id)).toEqual([newer, older]);
    expect(body.items[0]).toEqual({
      id: newer,
      organization_id: orgA,
      integration_id: intA2,
      stream: 'audit',
      received_at: expect.stringMatching(/Z$/),
      error_kind: 'cast_failed',
      error_detail: 'time: not a timestamp',
      mapping_version_id: null,
      status: 'quarantined',
      attempts: 1,
      created_at: expect.stringMatching(/Z$/),
      updated_at: expect.stringMatching(/Z$/),
      reprocessed_at: null,
    });
    const all = (await call(operatorA, 'GET', '/api/quarantine?status=all')).json<Page>();
    expect(all.items.map((i) => i.id)).toEqual([newer, reprocessed, older]);
    const done = (await call(operatorA, 'GET', '/api/quarantine?status=reprocessed')).json<Page>();
    expect(done.items.map((i) => i.id)).toEqual([reprocessed]);
  });

  it('filters by integration, stream, error kind, organization and creation window; pages', async () => {
    const [first, , third] = await quarantine(t, [
      { organizationId: orgA, integrationId: intA, createdAt: new Date('2025-05-01T10:00:00Z') },
      {
        organizationId: orgA,
        integrationId: intA,
        errorKind: 'missing_required',
        createdAt: new Date('2025-05-02T10:00:00Z'),
      },
      { organizationId: orgA, integrationId: intA2, stream: 'audit', createdAt: new Date('2025-05-03T10:00:00Z') },
    ]);
    const get = async (query: string, who = adminA) => {
      const res = await call(who, 'GET', `/api/quarantine?${query}`);
      expect(res.statusCode, `${query}: ${res.body}`).toBe(200);
      return res.json<Page>();
    };
    expect((await get(`integration_id=${intA2}`)).items.map((i) => i.id)).toEqual([third]);
    expect((await get('stream=audit')).total).toBe(1);
    expect((await get('error_kind=missing_required')).total).toBe(1);
    expect((await get(`org_id=${orgA}`)).total).toBe(3);
    expect((await get(`organization_id=${orgB}`, root)).total).toBe(0);
    expect((await get('since=2025-05-02T10:00:00Z')).total).toBe(2);
    expect((await get('until=2025-05-02T10:00:00Z')).items.map((i) => i.id)).toEqual([first]);
    // Offsets are honoured: 12:00+02:00 is 10:00Z.
    expect((await get('since=2025-05-02T12:00:00%2B02:00&until=2025-05-03T00:00:00Z')).total).toBe(1);
    const page = await get('limit=1&offset=1');
    expect(page).toMatchObject({ total: 3, limit: 1, offset: 1 });
    expect(page.items).toHaveLength(1);
  });

  it('answers 422 for a bad filter, naming it', async () => {
    for (const q of [
      'error_kind=oops',
      'status=deleted',
      'since=yesterday',
      'limit=501',
      'offset=-1',
      'integration=1',
      'integration_id=x',
    ]) {
      const res = await call(adminA, 'GET', `/api/quarantine?${q}`);
      expect(res.statusCode, q).toBe(422);
      expect(typeof res.json().detail).toBe('string');
    }
  });

  it('is quarantine.read: an operator reads it, a viewer gets 403', async () => {
    expect((await call(viewerA, 'GET', '/api/quarantine')).statusCode).toBe(403);
    expect((await call(viewerA, 'GET', '/api/quarantine/bulk/ids')).statusCode).toBe(403);
    expect((await call(operatorA, 'GET', '/api/quarantine/bulk/ids')).statusCode).toBe(200);
  });
});

describe('GET /api/quarantine/{event_id}', () => {
  it('answers the event with its raw content', async () => {
    const [id] = await quarantine(t, [
      { organizationId: orgA, integrationId: intA, raw: { user: 'alice', token: 'abc123' } },
    ]);
    const res = await call(operatorA, 'GET', `/api/quarantine/${id}`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      id,
      organization_id: orgA,
      error_kind: 'no_mapping',
      status: 'quarantined',
      raw: { user: 'alice', token: 'abc123' },
    });
  });

  it('answers 404 for another organization, an unknown id and an id that is not a UUID', async () => {
    const [foreign] = await quarantine(t, [{ organizationId: orgB, integrationId: intB }]);
    for (const id of [foreign, newId(), 'not-a-uuid', "1' or '1'='1"]) {
      const res = await call(adminA, 'GET', `/api/quarantine/${encodeURIComponent(id!)}`);
      expect(res.statusCode, id).toBe(404);
      expect(res.json().detail).toBe('Quarantined event not found');
    }
    expect((await call(root, 'GET', `/api/quarantine/${foreign}`)).statusCode).toBe(200);
  });
});

describe('GET /api/quarantine/bulk/ids', () => {
  it(`answers at most ${MAX_BULK_IDS} ids of the filtered events, newest first, with total and truncated`, async () => {
    const ids = await quarantine(
      t,
      Array.from({ length: MAX_BULK_IDS + 2 }, () => ({ organizationId: orgA, integrationId: intA })),
    );
    await quarantine(t, [
      { organizationId: orgA, integrationId: intA2, errorKind: 'cast_failed' },
      { organizationId: orgB, integrationId: intB },
    ]);
    const all = (await call(adminA, 'GET', `/api/quarantine/bulk/ids?integration_id=${intA}`)).json<{
      ids: string[];
      total: number;
      truncated: boolean;
    }>();
    expect(all.total).toBe(MAX_BULK_IDS + 2);
    expect(all.truncated).toBe(true);
    expect(all.ids).toEqual(ids.slice(2).reverse());
    const few = (await call(adminA, 'GET', '/api/quarantine/bulk/ids?error_kind=cast_failed')).json();
    expect(few).toMatchObject({ total: 1, truncated: false });
    expect((await call(adminA, 'GET', '/api/quarantine/bulk/ids?limit=10')).statusCode).toBe(422);
  });
});

describe('discard', () => {
  it('removes the events in scope; foreign and unknown ids are reported as not found and untouched', async () => {
    const [a1, a2, foreign] = await quarantine(t, [
      { organizationId: orgA, integrationId: intA },
      { organizationId: orgA, integrationId: intA2, status: 'reprocessed' },
      { organizationId: orgB, integrationId: intB },
    ]);
    const unknown = newId();
    const res = await call(operatorA, 'POST', '/api/quarantine/bulk/discard', { ids: [a1, a2, foreign, unknown, a1] });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      requested: 4,
      discarded: 2,
      errors: [
        { id: foreign, code: 'resource.not_found', detail: 'not found' },
        { id: unknown, code: 'resource.not_found', detail: 'not found' },
      ],
    });
    expect(await stored(t, a1!)).toBeUndefined();
    expect(await stored(t, a2!)).toBeUndefined();
    expect(await stored(t, foreign!)).toMatchObject({ status: 'quarantined' });
    const audit = await t.container.database.db
      .selectFrom('audit_log')
      .selectAll()
      .where('operation_id', '=', 'quarantine.bulk_discard')
      .orderBy('seq', 'desc')
      .executeTakeFirstOrThrow();
    expect(audit).toMatchObject({ outcome: 'success', organization_id: orgA, target_type: 'quarantine_event' });
    expect(audit.details).toMatchObject({ discarded: 2, not_found: [foreign, unknown] });
    expect([...(audit.details.ids as string[])].sort()).toEqual([a1, a2].sort());
  });

  it("discards one event: 204, then 404; another organization's event is 404 and stays", async () => {
    const [id, foreign] = await quarantine(t, [
      { organizationId: orgA, integrationId: intA },
      { organizationId: orgB, integrationId: intB },
    ]);
    const res = await call(operatorA, 'POST', `/api/quarantine/${id}/discard`);
    expect(res.statusCode).toBe(204);
    expect(res.body).toBe('');
    expect(await stored(t, id!)).toBeUndefined();
    expect((await call(operatorA, 'POST', `/api/quarantine/${id}/discard`)).statusCode).toBe(404);
    expect((await call(adminA, 'POST', `/api/quarantine/${foreign}/discard`)).statusCode).toBe(404);
    expect((await call(adminA, 'POST', '/api/quarantine/nope/discard')).statusCode).toBe(404);
    expect(await stored(t, foreign!)).toBeDefined();
    const audit = await t.container.database.db
      .selectFrom('audit_log')
      .selectAll()
      .where('operation_id', '=', 'quarantine.discard')
      .where('outcome', '=', 'success')
      .executeTakeFirstOrThrow();
    expect(audit).toMatchObject({ target_type: 'quarantine_event', target_id: id, organization_id: orgA });
  });

  it('removes nothing when its audit entry cannot be written: one transaction', async () => {
    const [id] = await quarantine(t, [{ organizationId: orgA, integrationId: intA }]);
    const db = t.container.database.db;
    await sql`create function weir_test_refuse_audit() returns trigger language plpgsql as $$
      begin
        if new.operation_id = 'quarantine.bulk_discard' and new.outcome = 'success' then raise exception 'audit write refused by the test'; end if;
        return new;
      end $$`.execute(db);
    await sql`create trigger weir_test_refuse_audit before insert on audit_log for each row execute function weir_test_refuse_audit()`.execute(
      db,
    );
    try {
      const res = await call(operatorA, 'POST', '/api/quarantine/bulk/discard', { ids: [id] });
      expect(res.statusCode).toBe(500);
      expect(typeof res.json().detail).toBe('string');
    } finally {
      await sql`drop trigger weir_test_refuse_audit on audit_log`.execute(db);
      await sql`drop function weir_test_refuse_audit()`.execute(db);
    }
    expect(await stored(t, id!)).toMatchObject({ status: 'quarantined' });
    const failed = await db
      .selectFrom('audit_log')
      .selectAll()
      .where('operation_id', '=', 'quarantine.bulk_discard')
      .orderBy('seq', 'desc')
      .executeTakeFirstOrThrow();
    expect(failed.outcome).toBe('error');
  });
});

describe('bulk bodies', () => {
  it(`take 1 to ${MAX_BULK_IDS} UUID strings in a field named ids, and nothing else`, async () => {
    for (const op of ['discard', 'reprocess']) {
      const url = `/api/quarantine/bulk/${op}`;
      const many = Array.from({ length: MAX_BULK_IDS + 1 }, () => newId());
      const over = await call(operatorA, 'POST', url, { ids: many });
      expect(over.statusCode, op).toBe(422);
      expect(over.json().detail).toContain(String(MAX_BULK_IDS));
      const ok = await call(operatorA, 'POST', url, { ids: many.slice(0, MAX_BULK_IDS) });
      expect(ok.statusCode, op).toBe(200);
      expect(ok.json()).toMatchObject({ requested: MAX_BULK_IDS, errors: expect.any(Array) });
      expect(ok.json().errors).toHaveLength(MAX_BULK_IDS);
      for (const body of [
        { event_ids: [many[0]] },
        { ids: [many[0]], event_ids: [many[0]] },
        { ids: [] },
        { ids: ['not-a-uuid'] },
        { ids: [1] },
        {},
      ]) {
        const res = await call(operatorA, 'POST', url, body);
        expect(res.statusCode, `${op} ${JSON.stringify(body)}`).toBe(422);
        expect(typeof res.json().detail).toBe('string');
      }
    }
  });

  it('are quarantine.discard: a viewer gets 403 and nothing changes', async () => {
    const [id] = await quarantine(t, [{ organizationId: orgA, integrationId: intA }]);
    expect((await call(viewerA, 'POST', '/api/quarantine/bulk/discard', { ids: [id] })).statusCode).toBe(403);
    expect((await call(viewerA, 'POST', '/api/quarantine/bulk/reprocess', { ids: [id] })).statusCode).toBe(403);
    expect((await call(viewerA, 'POST', `/api/quarantine/${id}/discard`)).statusCode).toBe(403);
    expect(await stored(t, id!)).toMatchObject({ status: 'quarantined', attempts: 1 });
  });
});
