import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/support/app.js';
import {
  createOrganization,
  createPrincipal,
  type Principal,
  injectAs,
  insertIntegration,
} from '../../../test/support/identity.js';
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

const call = (who: Principal, method: 'GET' | 'POST' | 'DELETE', url: string, payload?: unknown) =>
  injectAs(t, who, method, url, payload);

const integration = (organizationId: number, name: string) => insertIntegration(t, organizationId, name);

let seenAt = Date.parse('2025-03-01T00:00:00Z');
async function field(
  organizationId: number,
  integrationId: number,
  path: string,
  extra: Partial<{ stream: string; status: 'new' | 'ignored' | 'mapped'; count: number }> = {},
): Promise<string> {
  const id = newId();
  seenAt += 60_000;
  await t.container.database.db
    .insertInto('drift_fields')
    .values({
      id,
      organization_id: organizationId,
      integration_id: integrationId,
      stream: extra.stream ?? 'events',
      path,
      value_type: 'string',
      status: extra.status ?? 'new',
      count: extra.count ?? 3,
      example: 'j***@example.com',
      first_seen_at: new Date(seenAt - 3_600_000),
      last_seen_at: new Date(seenAt),
    })
    .execute();
  return id;
}

async function statusOf(id: string): Promise<string | undefined> {
  return (
    await t.container.database.db.selectFrom('drift_fields').select('status').where('id', '=', id).executeTakeFirst()
  )?.status;
}

beforeAll(async () => {
  t = await createTestApp({ env: { WEIR_TOKEN_RATE_LIMIT: '1000000' } });
  orgA = await createOrganization(t, 'Org A');
  orgB = await createOrganization(t, 'Org B');
  intA = await integration(orgA, 'a-push');
  intA2 = await integration(orgA, 'a-other');
  intB = await integration(orgB, 'b-push');
  root = await createPrincipal(t, { role: 'admin' });
  adminA = await createPrincipal(t, { role: 'admin', organizationId: orgA });
  operatorA = await createPrincipal(t, { role: 'operator', organizationId: orgA });
  viewerA = await createPrincipal(t, { role: 'viewer', organizationId: orgA });
});
afterAll(async () => t?.close());
beforeEach(async () => {
  await t.container.database.db.deleteFrom('drift_fields').execute();
});

describe('GET /api/drift', () => {
  it('lists every status by default, most recently seen first, in the envelope', async () => {
    const older = await field(orgA, intA, 'user.email');
    const ignored = await field(orgA, intA, 'user.phone', { status: 'ignored' });
    const newest = await field(orgA, intA2, 'client.geo[].city', { stream: 'audit', count: 12 });
    await field(orgB, intB, 'secret.path');
    const res = await call(viewerA, 'GET', '/api/drift');
    expect(res.statusCode).toBe(200);
    const body = res.json<{ total: number; limit: number; offset: number; items: Json[] }>();
    expect(body).toMatchObject({ total: 3, limit: 50, offset: 0 });
    expect(body.items.map((i) => i.id)).toEqual([newest, ignored, older]);
    expect(body.items[0]).toEqual({
      id: newest,
      organization_id: orgA,
      integration_id: intA2,
      stream: 'audit',
      path: 'client.geo[].city',
      value_type: 'string',
      status: 'new',
      count: 12,
      example: 'j***@example.com',
      first_seen_at: expect.stringMatching(/Z$/),
      last_seen_at: expect.stringMatching(/Z$/),
    });
  });

  it('filters by integration, stream, status, path prefix and organization; pages with limit and offset', async () => {
    await field(orgA, intA, 'user.email');
    await field(orgA, intA, 'user_name');
    await field(orgA, intA, 'user%x', { status: 'mapped' });
    await field(orgA, intA2, 'user.email', { stream: 'audit' });
    const ids = async (query: string, who = adminA) => {
      const res = await call(who, 'GET', `/api/drift?${query}`);
      expect(res.statusCode, res.body).toBe(200);
      return res.json<{ total: number; items: Json[] }>();
    };
    expect((await ids(`integration_id=${intA2}`)).total).toBe(1);
    expect((await ids('stream=audit')).items.map((i) => i.integration_id)).toEqual([intA2]);
    expect((await ids('status=mapped')).items.map((i) => i.path)).toEqual(['user%x']);
    // The prefix is text, not a LIKE pattern: '_' and '%' match only themselves.
    expect((await ids('path_prefix=user.')).total).toBe(2);
    expect((await ids('path_prefix=user_')).items.map((i) => i.path)).toEqual(['user_name']);
    expect((await ids('path_prefix=user%25')).items.map((i) => i.path)).toEqual(['user%x']);
    expect((await ids(`org_id=${orgA}`)).total).toBe(4);
    expect((await ids(`organization_id=${orgB}`, root)).total).toBe(0);
    const page = await ids('limit=2&offset=3');
    expect(page).toMatchObject({ total: 4, limit: 2, offset: 3 });
    expect(page.items).toHaveLength(1);
  });

  it('answers 422 for a bad status, an unknown parameter or a limit above 500', async () => {
    for (const q of ['status=open', 'state=new', 'limit=501', 'integration_id=abc']) {
      const res = await call(adminA, 'GET', `/api/drift?${q}`);
      expect(res.statusCode, q).toBe(422);
      expect(typeof res.json().detail).toBe('string');
    }
  });

  it('shows another organization nothing; a platform caller sees everything', async () => {
    await field(orgB, intB, 'b.only');
    expect((await call(adminA, 'GET', '/api/drift')).json().total).toBe(0);
    expect((await call(root, 'GET', '/api/drift')).json().total).toBe(1);
  });
});

describe('single field review', () => {
  it('ignores and marks mapped (operator), answering the field with its new status', async () => {
    const id = await field(orgA, intA, 'user.email');
    const ignored = await call(operatorA, 'POST', `/api/drift/${id}/ignore`);
    expect(ignored.statusCode).toBe(200);
    expect(ignored.json()).toMatchObject({ id, status: 'ignored', path: 'user.email' });
    const mapped = await call(operatorA, 'POST', `/api/drift/${id}/mark_mapped`);
    expect(mapped.json()).toMatchObject({ id, status: 'mapped' });
    expect(await statusOf(id)).toBe('mapped');
    const audit = await t.container.database.db
      .selectFrom('audit_log')
      .selectAll()
      .where('operation_id', '=', 'drift.mark_mapped')
      .executeTakeFirstOrThrow();
    expect(audit).toMatchObject({
      target_type: 'drift_field',
      target_id: id,
      organization_id: orgA,
      outcome: 'success',
    });
    expect(audit.details).toMatchObject({ from: 'ignored', to: 'mapped', path: 'user.email' });
  });

  it('deletes a field (drift.delete: admin, not operator): 204, gone', async () => {
    const id = await field(orgA, intA, 'user.email');
    expect((await call(operatorA, 'DELETE', `/api/drift/${id}`)).statusCode).toBe(403);
    const res = await call(adminA, 'DELETE', `/api/drift/${id}`);
    expect(res.statusCode).toBe(204);
    expect(res.body).toBe('');
    expect(await statusOf(id)).toBeUndefined();
    expect((await call(adminA, 'DELETE', `/api/drift/${id}`)).statusCode).toBe(404);
  });

  it('answers 404 for a field of another organization or an unknown id, and leaves it alone', async () => {
    const foreign = await field(orgB, intB, 'b.field');
    for (const url of [
      `/api/drift/${foreign}/ignore`,
      `/api/drift/${foreign}/mark_mapped`,
      '/api/drift/not-an-id/ignore',
    ]) {
      const res = await call(adminA, 'POST', url);
      expect(res.statusCode, url).toBe(404);
      expect(res.json().detail).toBe('Drift field not found');
    }
    expect((await call(adminA, 'DELETE', `/api/drift/${foreign}`)).statusCode).toBe(404);
    expect(await statusOf(foreign)).toBe('new');
  });

  it('refuses a viewer (drift.read only)', async () => {
    const id = await field(orgA, intA, 'user.email');
    expect((await call(viewerA, 'POST', `/api/drift/${id}/ignore`)).statusCode).toBe(403);
    expect((await call(viewerA, 'POST', `/api/drift/${id}/mark_mapped`)).statusCode).toBe(403);
    expect(await statusOf(id)).toBe('new');
  });
});

describe('bulk review', () => {
  it('ignores the fields in scope; foreign and unknown ids are reported as not found and untouched', async () => {
    const a1 = await field(orgA, intA, 'a.one');
    const a2 = await field(orgA, intA, 'a.two', { status: 'mapped' });
    const foreign = await field(orgB, intB, 'b.one');
    const res = await call(operatorA, 'POST', '/api/drift/bulk/ignore', { ids: [a1, a2, foreign, 'nope', a1] });
    expect(res.statusCode).toBe(200);
    const body = res.json<{ requested: number; updated: number; errors: Json[] }>();
    expect(body.requested).toBe(4);
    expect(body.updated).toBe(2);
    expect(body.errors).toEqual([
      { id: foreign, code: 'resource.not_found', detail: 'not found' },
      { id: 'nope', code: 'resource.not_found', detail: 'not found' },
    ]);
    expect([await statusOf(a1), await statusOf(a2), await statusOf(foreign)]).toEqual(['ignored', 'ignored', 'new']);
    const audit = await t.container.database.db
      .selectFrom('audit_log')
      .selectAll()
      .where('operation_id', '=', 'drift.bulk_ignore')
      .executeTakeFirstOrThrow();
    expect(audit.details).toMatchObject({ status: 'ignored', not_found: [foreign, 'nope'] });
  });

  it('marks mapped in bulk', async () => {
    const a1 = await field(orgA, intA, 'a.one');
    const res = await call(adminA, 'POST', '/api/drift/bulk/mark_mapped', { ids: [a1] });
    expect(res.json()).toEqual({ requested: 1, updated: 1, errors: [] });
    expect(await statusOf(a1)).toBe('mapped');
  });

  it(`takes 1 to ${MAX_BULK_IDS} ids in a field named ids, nothing else`, async () => {
    const many = Array.from({ length: MAX_BULK_IDS + 1 }, () => newId());
    const over = await call(adminA, 'POST', '/api/drift/bulk/ignore', { ids: many });
    expect(over.statusCode).toBe(422);
    expect(over.json().detail).toContain(String(MAX_BULK_IDS));
    const ok = await call(adminA, 'POST', '/api/drift/bulk/ignore', { ids: many.slice(0, MAX_BULK_IDS) });
    expect(ok.statusCode).toBe(200);
    expect(ok.json()).toMatchObject({ requested: MAX_BULK_IDS, updated: 0 });
    expect((await call(adminA, 'POST', '/api/drift/bulk/ignore', { ids: [] })).statusCode).toBe(422);
    expect((await call(adminA, 'POST', '/api/drift/bulk/ignore', { field_ids: [many[0]] })).statusCode).toBe(422);
    expect((await call(adminA, 'POST', '/api/drift/bulk/ignore', { ids: [many[0]], status: 'new' })).statusCode).toBe(
      422,
    );
    expect((await call(viewerA, 'POST', '/api/drift/bulk/mark_mapped', { ids: [many[0]] })).statusCode).toBe(403);
  });
});
