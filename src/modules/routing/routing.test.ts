import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/support/app.js';
import {
  createOrganization,
  createPrincipal,
  type Principal,
  injectAs,
  insertDestination,
} from '../../../test/support/identity.js';

let t: TestApp;
let orgA: number;
let orgB: number;
let root: Principal;
let adminA: Principal;
let adminB: Principal;
let viewerA: Principal;
let destA: string;
let destA2: string;
let destB: string;
let destGlobal: string;

type Json = Record<string, unknown>;
const BASE = '/api/collectors/routes';

const call = (who: Principal, method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: unknown) =>
  injectAs(t, who, method, url, payload);

const destination = (organizationId: number | null, name: string) =>
  insertDestination(t, organizationId, name, { config: JSON.stringify({ url: 'http://127.0.0.1:9/' }) });

async function create(who: Principal, body: Json): Promise<Json> {
  const res = await call(who, 'POST', BASE, body);
  expect(res.statusCode, res.body).toBe(201);
  return res.json<Json>();
}

async function positions(organizationId: number): Promise<string[]> {
  const rows = await t.container.database.db
    .selectFrom('routes')
    .select(['name'])
    .where('organization_id', '=', organizationId)
    .orderBy('position')
    .execute();
  return rows.map((r) => r.name);
}

beforeAll(async () => {
  t = await createTestApp({ env: { WEIR_TOKEN_RATE_LIMIT: '1000000' } });
  orgA = await createOrganization(t, 'Org A');
  orgB = await createOrganization(t, 'Org B');
  root = await createPrincipal(t, { role: 'admin' });
  adminA = await createPrincipal(t, { role: 'admin', organizationId: orgA });
  adminB = await createPrincipal(t, { role: 'admin', organizationId: orgB });
  viewerA = await createPrincipal(t, { role: 'viewer', organizationId: orgA });
  destA = await destination(orgA, 'siem-a');
  destA2 = await destination(orgA, 'lake-a');
  destB = await destination(orgB, 'siem-b');
  destGlobal = await destination(null, 'shared');
});
afterAll(async () => t?.close());
beforeEach(async () => {
  await t.container.database.db.deleteFrom('routes').execute();
});

describe('create, read, list', () => {
  it('creates a route with defaults, version 1, and reads it back', async () => {
    const body = await create(adminA, {
      name: ' Auth events ',
      condition: { field: 'class_uid', op: 'eq', value: 3002 },
      destination_ids: [destA, destGlobal],
    });
    expect(body).toEqual({
      id: expect.any(String),
      organization_id: orgA,
      name: 'Auth events',
      description: '',
      position: 1,
      enabled: true,
      condition: { field: 'class_uid', op: 'eq', value: 3002 },
      condition_text: 'class_uid = 3002',
      transforms: [],
      destination_ids: [destA, destGlobal],
      final: true,
      version: 1,
      created_at: expect.stringMatching(/Z$/),
      updated_at: expect.stringMatching(/Z$/),
    });
    const got = await call(viewerA, 'GET', `${BASE}/${body.id as string}`);
    expect(got.statusCode).toBe(200);
    expect(got.json()).toEqual(body);
    const versions = await t.container.database.db
      .selectFrom('route_versions')
      .selectAll()
      .where('route_id', '=', body.id as string)
      .execute();
    expect(versions).toHaveLength(1);
    expect(versions[0]!.definition).toMatchObject({
      name: 'Auth events',
      destination_ids: [destA, destGlobal],
      final: true,
      condition: body.condition,
    });
  });

  it('stores a null condition as SQL null, and inserts at a position', async () => {
    await create(adminA, { name: 'one', destination_ids: [] });
    await create(adminA, { name: 'two', destination_ids: [] });
    const first = await create(adminA, { name: 'zero', destination_ids: [], position: 1 });
    await create(adminA, { name: 'last', destination_ids: [], position: 99 });
    expect(await positions(orgA)).toEqual(['zero', 'one', 'two', 'last']);
    const row = await t.container.database.db
      .selectFrom('routes')
      .select('condition')
      .where('id', '=', first.id as string)
      .executeTakeFirstOrThrow();
    expect(row.condition).toBeNull();
    const list = (await call(viewerA, 'GET', BASE)).json<Json[]>();
    expect(list.map((r) => [r.name, r.position])).toEqual([
      ['zero', 1],
      ['one', 2],
      ['two', 3],
      ['last', 4],
    ]);
  });

  it("lists only the caller's organizations; a platform caller filters with organization_id or org_id", async () => {
    await create(adminA, { name: 'a', destination_ids: [] });
    await create(adminB, { name: 'b', destination_ids: [] });
    expect((await call(adminA, 'GET', BASE)).json<Json[]>().map((r) => r.name)).toEqual(['a']);
    expect((await call(root, 'GET', BASE)).json<Json[]>().map((r) => r.name)).toEqual(['a', 'b']);
    expect((await call(root, 'GET', `${BASE}?org_id=${orgB}`)).json<Json[]>().map((r) => r.name)).toEqual(['b']);
    expect((await call(adminA, 'GET', `${BASE}?organization_id=${orgB}`)).json<Json[]>()).toEqual([]);
  });

  it('asks a platform caller for the organization; refuses an organization outside scope as unknown', async () => {
    const res = await call(root, 'POST', BASE, { name: 'x', destination_ids: [] });
    expect(res.statusCode).toBe(422);
    expect(res.json<Json>().detail).toMatch(/organization_id/);
    expect(
      (await call(adminA, 'POST', BASE, { name: 'x', destination_ids: [], organization_id: orgB })).statusCode,
    ).toBe(404);
    expect((await create(root, { name: 'x', destination_ids: [], organization_id: orgB })).organization_id).toBe(orgB);
  });

  it('validates the definition and names every problem', async () => {
    const res = await call(adminA, 'POST', BASE, {
      name: 'bad',
      destination_ids: [destA, destA],
      condition: {
        all: [
          { field: 'class_uid', op: 'eq', value: 1 },
          { field: 'message', op: 'regex', value: '(a' },
        ],
      },
      transforms: [{ type: 'sample', rate: 0 }],
    });
    expect(res.statusCode).toBe(422);
    const body = res.json<{
      detail: string;
      error: { code: string; details: { errors: { path: string; message: string }[] } };
    }>();
    expect(body.error.code).toBe('route.invalid_definition');
    expect(body.detail).toMatch(/^condition\.all\[1\]\.value: /);
    expect(body.error.details.errors.map((e) => e.path)).toEqual([
      'condition.all[1].value',
      'transforms[0].rate',
      'destination_ids[1]',
    ]);
    expect(await positions(orgA)).toEqual([]);
  });

  it("refuses unknown destinations and other organizations' alike; names are unique per organization", async () => {
    const other = await call(adminA, 'POST', BASE, { name: 'x', destination_ids: [destA, destB] });
    const unknown = await call(adminA, 'POST', BASE, { name: 'x', destination_ids: [destA, 'no-such-destination'] });
    for (const res of [other, unknown]) {
      expect(res.statusCode).toBe(422);
      expect(res.json<{ error: { code: string } }>().error.code).toBe('route.unknown_destination');
    }
    expect(other.json<{ detail: string }>().detail.replace(destB, 'ID')).toBe(
      unknown.json<{ detail: string }>().detail.replace('no-such-destination', 'ID'),
    );
    await create(adminA, { name: 'Same', destination_ids: [] });
    const dup = await call(adminA, 'POST', BASE, { name: 'same', destination_ids: [] });
    expect(dup.statusCode).toBe(409);
    expect(dup.json<{ error: { code: string } }>().error.code).toBe('route.name_taken');
    await create(adminB, { name: 'same', destination_ids: [] });
  });

  it("scope: another organization's route is 404; a viewer reads but cannot write", async () => {
    const r = await create(adminA, { name: 'a', destination_ids: [] });
    const url = `${BASE}/${r.id as string}`;
    for (const [method, payload] of [
      ['GET', undefined],
      ['PUT', { name: 'b' }],
      ['DELETE', undefined],
    ] as const) {
      expect((await call(adminB, method, url, payload)).statusCode).toBe(404);
    }
    for (const sub of ['/health', '/metrics', '/audit'])
      expect((await call(adminB, 'GET', `${url}${sub}`)).statusCode).toBe(404);
    expect((await call(adminB, 'POST', `${url}/rollback`, { version: 1 })).statusCode).toBe(404);
    expect((await call(viewerA, 'GET', url)).statusCode).toBe(200);
    expect((await call(viewerA, 'PUT', url, { name: 'b' })).statusCode).toBe(403);
    expect((await call(viewerA, 'POST', BASE, { name: 'b', destination_ids: [] })).statusCode).toBe(403);
    expect((await call(adminA, 'GET', `${BASE}/nope`)).statusCode).toBe(404);
  });
});

describe('edit, versions, rollback, delete', () => {
  it('a change writes a new version and moves updated_at; a no-op changes nothing', async () => {
    const r = await create(adminA, { name: 'r', destination_ids: [destA] });
    const url = `${BASE}/${r.id as string}`;
    const same = (await call(adminA, 'PUT', url, { name: 'r', final: true })).json<Json>();
    expect(same.version).toBe(1);
    expect(same.updated_at).toBe(r.updated_at);
    await new Promise((resolve) => setTimeout(resolve, 5));
    const res = await call(adminA, 'PUT', url, {
      condition: { field: 'severity_id', op: 'gte', value: 4 },
      destination_ids: [destA, destA2],
      final: false,
      comment: 'high only',
    });
    expect(res.statusCode, res.body).toBe(200);
    const v2 = res.json<Json>();
    expect(v2).toMatchObject({
      version: 2,
      final: false,
      destination_ids: [destA, destA2],
      condition: { field: 'severity_id', op: 'gte', value: 4 },
    });
    expect(Date.parse(v2.updated_at as string)).toBeGreaterThan(Date.parse(r.updated_at as string));
    const version = await t.container.database.db
      .selectFrom('route_versions')
      .selectAll()
      .where('route_id', '=', r.id as string)
      .where('version', '=', 2)
      .executeTakeFirstOrThrow();
    expect(version.comment).toBe('high only');
    // Back to matching everything.
    expect((await call(adminA, 'PUT', url, { condition: null })).json<Json>()).toMatchObject({
      version: 3,
      condition: null,
    });
    const bad = await call(adminA, 'PUT', url, { destination_ids: [destB] });
    expect(bad.json<{ error: { code: string } }>().error.code).toBe('route.unknown_destination');
    const invalid = await call(adminA, 'PUT', url, { transforms: [{ type: 'keep_fields', fields: [] }] });
    expect(invalid.statusCode).toBe(422);
    expect((await call(adminA, 'GET', url)).json<Json>().version).toBe(3);
  });

  it('rollback gives an earlier definition as a new version; 409 when already current; 404 unknown version', async () => {
    const r = await create(adminA, {
      name: 'r',
      destination_ids: [destA],
      condition: { field: 'class_uid', op: 'eq', value: 1 },
    });
    const url = `${BASE}/${r.id as string}`;
    await call(adminA, 'PUT', url, {
      name: 'renamed',
      condition: { field: 'class_uid', op: 'eq', value: 2 },
      enabled: false,
    });
    const back = await call(adminA, 'POST', `${url}/rollback`, { version: 1 });
    expect(back.statusCode, back.body).toBe(200);
    expect(back.json<Json>()).toMatchObject({
      version: 3,
      name: 'r',
      enabled: true,
      condition: { field: 'class_uid', op: 'eq', value: 1 },
    });
    const again = await call(adminA, 'POST', `${url}/rollback`, { version: 1 });
    expect(again.statusCode).toBe(409);
    expect(again.json<{ error: { code: string } }>().error.code).toBe('route.already_current');
    expect((await call(adminA, 'POST', `${url}/rollback`, { version: 3 })).statusCode).toBe(409);
    expect((await call(adminA, 'POST', `${url}/rollback`, { version: 9 })).statusCode).toBe(404);
    const v2 = await call(adminA, 'POST', `${url}/rollback`, { version: 2, comment: 'again' });
    expect(v2.json<Json>()).toMatchObject({ version: 4, name: 'renamed', enabled: false });
  });

  it('position moves shift the others; delete re-densifies', async () => {
    const ids: string[] = [];
    for (const name of ['a', 'b', 'c', 'd'])
      ids.push((await create(adminA, { name, destination_ids: [] })).id as string);
    const moved = await call(adminA, 'PUT', `${BASE}/${ids[3]!}`, { position: 2 });
    expect(moved.json<Json>()).toMatchObject({ position: 2, version: 1 });
    expect(await positions(orgA)).toEqual(['a', 'd', 'b', 'c']);
    await call(adminA, 'PUT', `${BASE}/${ids[0]!}`, { position: 9 });
    expect(await positions(orgA)).toEqual(['d', 'b', 'c', 'a']);
    const del = await call(adminA, 'DELETE', `${BASE}/${ids[1]!}`);
    expect(del.statusCode).toBe(204);
    expect(del.body).toBe('');
    const rows = await t.container.database.db
      .selectFrom('routes')
      .select(['name', 'position'])
      .where('organization_id', '=', orgA)
      .orderBy('position')
      .execute();
    expect(rows).toEqual([
      { name: 'd', position: 1 },
      { name: 'c', position: 2 },
      { name: 'a', position: 3 },
    ]);
    expect(
      await t.container.database.db.selectFrom('route_versions').select('id').where('route_id', '=', ids[1]!).execute(),
    ).toEqual([]);
  });

  it('the audit trail of a route lists its changes newest first', async () => {
    const r = await create(adminA, { name: 'audited', destination_ids: [] });
    const url = `${BASE}/${r.id as string}`;
    await call(adminA, 'PUT', url, { description: 'why' });
    await call(adminA, 'PUT', url, { destination_ids: ['missing'] });
    const page = (await call(viewerA, 'GET', `${url}/audit`)).json<{ total: number; items: Json[] }>();
    expect(page.total).toBe(3);
    expect(page.items.map((e) => [e.operation_id, e.outcome])).toEqual([
      ['routes.update', 'failed'],
      ['routes.update', 'success'],
      ['routes.create', 'success'],
    ]);
    expect(page.items[1]).toMatchObject({
      target_type: 'routes',
      target_id: r.id,
      organization_id: orgA,
      details: { version: 2, changed: ['description'] },
    });
    const failed = (await call(viewerA, 'GET', `${url}/audit?outcome=failed`)).json<{ total: number }>();
    expect(failed.total).toBe(1);
  });
});

describe('reorder', () => {
  let ids: string[];
  let idB: string;
  beforeEach(async () => {
    ids = [];
    for (const name of ['a', 'b', 'c']) ids.push((await create(adminA, { name, destination_ids: [] })).id as string);
    idB = (await create(adminB, { name: 'b1', destination_ids: [] })).id as string;
  });

  it('sets the order from the complete list and answers it', async () => {
    const before = await t.container.database.db
      .selectFrom('routes')
      .select(['id', 'updated_at'])
      .where('organization_id', '=', orgA)
      .execute();
    await new Promise((resolve) => setTimeout(resolve, 5));
    const res = await call(adminA, 'POST', `${BASE}/reorder`, { route_ids: [ids[2], ids[1], ids[0]] });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json<Json[]>().map((r) => [r.name, r.position])).toEqual([
      ['c', 1],
      ['b', 2],
      ['a', 3],
    ]);
    const after = new Map(
      (
        await t.container.database.db
          .selectFrom('routes')
          .select(['id', 'updated_at'])
          .where('organization_id', '=', orgA)
          .execute()
      ).map((r) => [r.id, r.updated_at.getTime()]),
    );
    const old = new Map(before.map((r) => [r.id, r.updated_at.getTime()]));
    expect(after.get(ids[1]!)).toBe(old.get(ids[1]!)); // b did not move
    expect(after.get(ids[0]!)).toBeGreaterThan(old.get(ids[0]!)!);
  });

  it('403 for an id outside scope, 404 for an unknown id, 422 for missing or repeated ids; nothing changes', async () => {
    const cases: [unknown[], number, string?][] = [
      [[ids[2], ids[1], ids[0], idB], 403],
      [[ids[2], ids[1], ids[0], 'unknown-id'], 404],
      [[ids[2], ids[1]], 422, 'route.reorder_incomplete'],
      [[ids[2], ids[1], ids[0], ids[0]], 422, 'route.reorder_incomplete'],
    ];
    for (const [routeIds, status, code] of cases) {
      const res = await call(adminA, 'POST', `${BASE}/reorder`, { route_ids: routeIds });
      expect(res.statusCode, res.body).toBe(status);
      if (code) expect(res.json<{ error: { code: string } }>().error.code).toBe(code);
      expect(await positions(orgA)).toEqual(['a', 'b', 'c']);
    }
    const mixed = await call(root, 'POST', `${BASE}/reorder`, { route_ids: [ids[0], ids[1], ids[2], idB] });
    expect(mixed.statusCode).toBe(422);
    expect((await call(viewerA, 'POST', `${BASE}/reorder`, { route_ids: ids })).statusCode).toBe(403);
  });
});
