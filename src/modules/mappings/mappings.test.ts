// Mapping definitions and versions through the API: visibility by scope, publication,
// numbering, rollback, diff and the definition's audit trail.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/support/app.js';
import { createOrganization, createPrincipal, type Principal, injectAs } from '../../../test/support/identity.js';
import { defineMapping, loginDocument } from '../../../test/support/mappings.js';
import { newId } from '../../core/ids.js';

let t: TestApp;
let orgA: number;
let orgB: number;
let root: Principal; // platform admin (global scope)
let adminA: Principal;
let operatorA: Principal; // mapping.write + audit.read, no mapping.rollback
let viewerA: Principal; // mapping.read only
let defA: string; // org A's own definition
let defB: string; // org B's own definition
let builtin: string; // a built-in definition of the test platform

type Json = Record<string, unknown>;

const PLATFORM = 'mapping_test';

const call = (who: Principal, method: 'GET' | 'POST', url: string, payload?: unknown) =>
  injectAs(t, who, method, url, payload);

const definition = (organizationId: number | null, stream: string) =>
  defineMapping(t, organizationId, PLATFORM, stream);

async function publish(who: Principal, def: string, document: Json = loginDocument(), comment?: string): Promise<Json> {
  const res = await call(who, 'POST', `/api/mappings/${def}/versions`, { document, ...(comment ? { comment } : {}) });
  expect(res.statusCode, res.body).toBe(201);
  return res.json<Json>();
}

async function updatedAt(def: string): Promise<number> {
  const row = await t.container.database.db
    .selectFrom('mapping_definitions')
    .select('updated_at')
    .where('id', '=', def)
    .executeTakeFirstOrThrow();
  return row.updated_at.getTime();
}

beforeAll(async () => {
  t = await createTestApp({ env: { WEIR_TOKEN_RATE_LIMIT: '1000000' } });
  orgA = await createOrganization(t, 'Org A');
  orgB = await createOrganization(t, 'Org B');
  root = await createPrincipal(t, { role: 'admin' });
  adminA = await createPrincipal(t, { role: 'admin', organizationId: orgA });
  operatorA = await createPrincipal(t, { role: 'operator', organizationId: orgA });
  viewerA = await createPrincipal(t, { role: 'viewer', organizationId: orgA });
  defA = await definition(orgA, 'events');
  defB = await definition(orgB, 'events');
  builtin = await definition(null, 'events');
});
afterAll(async () => t?.close());

describe('GET /api/mappings', () => {
  it("lists the built-ins and the caller's own definitions, never another organization's", async () => {
    const res = await call(viewerA, 'GET', `/api/mappings?platform=${PLATFORM}`);
    expect(res.statusCode).toBe(200);
    const body = res.json<{ total: number; items: Json[]; limit: number; offset: number }>();
    expect(body).toMatchObject({ total: 2, limit: 50, offset: 0 });
    expect(body.items.map((d) => d.id).sort()).toEqual([defA, builtin].sort());
    const own = body.items.find((d) => d.id === defA)!;
    expect(own).toMatchObject({
      organization_id: orgA,
      platform: PLATFORM,
      stream: 'events',
      builtin: false,
      live_version: null,
      versions_count: 0,
    });
    expect(body.items.find((d) => d.id === builtin)).toMatchObject({ organization_id: null, builtin: true });
  });

  it('filters by builtin, organization (alias org_id) and stream; a platform admin sees every organization', async () => {
    const all = (await call(root, 'GET', `/api/mappings?platform=${PLATFORM}`)).json<{ total: number }>();
    expect(all.total).toBe(3);
    const builtins = (await call(root, 'GET', `/api/mappings?platform=${PLATFORM}&builtin=true`)).json<{
      items: Json[];
    }>();
    expect(builtins.items.map((d) => d.id)).toEqual([builtin]);
    const orgs = (await call(root, 'GET', `/api/mappings?platform=${PLATFORM}&builtin=false`)).json<{
      items: Json[];
    }>();
    expect(orgs.items.map((d) => d.id).sort()).toEqual([defA, defB].sort());
    const onlyB = (await call(root, 'GET', `/api/mappings?org_id=${orgB}`)).json<{ items: Json[] }>();
    expect(onlyB.items.map((d) => d.id)).toEqual([defB]);
    const none = (await call(root, 'GET', `/api/mappings?platform=${PLATFORM}&stream=other`)).json<{ total: number }>();
    expect(none.total).toBe(0);
  });

  it('pages with limit and offset', async () => {
    const page = (await call(root, 'GET', `/api/mappings?platform=${PLATFORM}&limit=2&offset=2`)).json<{
      total: number;
      items: Json[];
    }>();
    expect(page.total).toBe(3);
    expect(page.items).toHaveLength(1);
  });

  it('refuses unknown filters (422) and callers without mapping.read (403)', async () => {
    expect((await call(viewerA, 'GET', '/api/mappings?vendor=x')).statusCode).toBe(422);
    const noRead = await createPrincipal(t, { role: 'admin', organizationId: orgA, scopes: ['integration.read'] });
    expect((await call(noRead, 'GET', '/api/mappings')).statusCode).toBe(403);
  });
});

describe('publishing versions', () => {
  it('numbers versions 1, 2, ... makes each live, stores a checksum and bumps updated_at', async () => {
    const before = await updatedAt(defA);
    const v1 = await publish(operatorA, defA, loginDocument(), 'first cut');
    expect(v1).toMatchObject({
      definition_id: defA,
      version: 1,
      is_live: true,
      comment: 'first cut',
      created_by: operatorA.id,
      builtin: false,
    });
    expect(v1.checksum).toMatch(/^[0-9a-f]{64}$/);
    expect(await updatedAt(defA)).toBeGreaterThan(before);
    const v2 = await publish(adminA, defA, loginDocument([{ target: 'status_id', value: 1 }]));
    expect(v2).toMatchObject({ version: 2, is_live: true, comment: '' });
    expect(v2.checksum).not.toBe(v1.checksum);

    const def = (await call(viewerA, 'GET', `/api/mappings/${defA}`)).json<Json>();
    expect(def).toMatchObject({ id: defA, versions_count: 2, live_version: { id: v2.id, version: 2 } });
    expect((def.document as Json).rules).toHaveLength(1);

    const list = (await call(viewerA, 'GET', `/api/mappings/${defA}/versions`)).json<{
      total: number;
      items: Json[];
    }>();
    expect(list.total).toBe(2);
    expect(list.items.map((v) => [v.version, v.is_live])).toEqual([
      [2, true],
      [1, false],
    ]);
    expect(list.items[0]).not.toHaveProperty('document');

    const one = (await call(viewerA, 'GET', `/api/mappings/${defA}/versions/${v1.id as string}`)).json<Json>();
    expect(one).toMatchObject({ id: v1.id, version: 1, is_live: false, checksum: v1.checksum });
    expect(one.document).toEqual(loginDocument());
  });

  it('answers 422 mapping.invalid_document with every problem located in the document', async () => {
    const bad = {
      product: { name: 'x' },
      rules: [{ name: 'r', class_uid: 3002, activity_id: 1, set: [{ target: 'no_such_attribute', value: 1 }] }],
    };
    const res = await call(adminA, 'POST', `/api/mappings/${defA}/versions`, { document: bad });
    expect(res.statusCode).toBe(422);
    const body = res.json<{
      detail: string;
      error: { code: string; details: { problems: { at: string; message: string }[] } };
    }>();
    expect(body.error.code).toBe('mapping.invalid_document');
    expect(body.detail).toMatch(/^\/product: /);
    expect(body.error.details.problems.map((p) => p.at)).toContain('/product');

    const semantic = await call(adminA, 'POST', `/api/mappings/${defA}/versions`, {
      document: loginDocument([{ target: 'no_such_attribute', value: 1 }]),
    });
    expect(semantic.statusCode).toBe(422);
    expect(semantic.json().error.details.problems).toEqual([
      { at: '/rules/0/set/5/target', message: expect.stringContaining('no_such_attribute') },
    ]);
    // Nothing was stored.
    expect((await call(viewerA, 'GET', `/api/mappings/${defA}`)).json().versions_count).toBe(2);
  });

  it("runs the document's test cases and refuses a version whose cases fail (422 mapping.tests_failed)", async () => {
    const before = (await call(viewerA, 'GET', `/api/mappings/${defA}`)).json().versions_count as number;
    const input = {
      type: 'login',
      ts: '2024-03-05T14:22:31Z',
      user: { name: 'ana' },
      client: { ip: '10.0.0.7' },
      host: 'app.example.com',
    };
    const tests = [
      { name: 'a login', input, expect: { class_uid: 3002, 'user.name': 'ana', 'src_endpoint.ip': '10.0.0.7' } },
      { name: 'the user is wrong', input, expect: { 'user.name': 'bo' } },
      { name: 'an unknown type', input: { type: 'other' }, quarantine: 'no_matching_rule' },
    ];
    const res = await call(adminA, 'POST', `/api/mappings/${defA}/versions`, {
      document: { ...loginDocument(), tests },
    });
    expect(res.statusCode).toBe(422);
    const body = res.json<{ detail: string; error: { code: string; details: Json } }>();
    expect(body.error.code).toBe('mapping.tests_failed');
    expect(body.detail).toBe(
      '1 of 3 test cases fail; "the user is wrong" (/tests/1): user.name: expected "bo", got "ana"',
    );
    expect(body.error.details).toEqual({
      passed: 2,
      failed: [
        { index: 1, name: 'the user is wrong', at: '/tests/1', failures: ['user.name: expected "bo", got "ana"'] },
      ],
    });
    expect((await call(viewerA, 'GET', `/api/mappings/${defA}`)).json().versions_count).toBe(before);

    // Fixed, the version is published and carries its cases.
    tests[1]!.expect = { 'user.name': 'ana' };
    const ok = await publish(adminA, defA, { ...loginDocument(), tests });
    const stored = (await call(viewerA, 'GET', `/api/mappings/${defA}/versions/${ok.id as string}`)).json<{
      document: Json;
    }>();
    expect(stored.document.tests).toEqual(tests);
  });

  it('refuses a body without document, or with unknown fields (422)', async () => {
    expect((await call(adminA, 'POST', `/api/mappings/${defA}/versions`, { comment: 'x' })).statusCode).toBe(422);
    expect(
      (await call(adminA, 'POST', `/api/mappings/${defA}/versions`, { document: loginDocument(), live: false }))
        .statusCode,
    ).toBe(422);
  });

  it('needs mapping.write (403 for a viewer)', async () => {
    expect(
      (await call(viewerA, 'POST', `/api/mappings/${defA}/versions`, { document: loginDocument() })).statusCode,
    ).toBe(403);
  });

  it("keeps other organizations' definitions out of reach: 404 for every operation", async () => {
    const v = await publish(root, defB);
    const urls = [
      `/api/mappings/${defB}`,
      `/api/mappings/${defB}/versions`,
      `/api/mappings/${defB}/versions/${v.id as string}`,
      `/api/mappings/${defB}/versions/${v.id as string}/diff/${v.id as string}`,
      `/api/mappings/${defB}/audit`,
      `/api/mappings/${defB}/discover-fields`,
    ];
    for (const url of urls) {
      const res = await call(adminA, 'GET', url);
      expect(res.statusCode, url).toBe(404);
      expect(res.json().detail).toBe('Mapping definition not found');
    }
    expect(
      (await call(adminA, 'POST', `/api/mappings/${defB}/versions`, { document: loginDocument() })).statusCode,
    ).toBe(404);
    expect((await call(adminA, 'POST', `/api/mappings/${defB}/rollback`, { version: 1 })).statusCode).toBe(404);
    // A version of another definition is not found through this one.
    expect((await call(adminA, 'GET', `/api/mappings/${defA}/versions/${v.id as string}`)).statusCode).toBe(404);
  });

  it('changes a built-in only with platform scope: 403 for an organization admin, 201 for a platform admin', async () => {
    const refused = await call(adminA, 'POST', `/api/mappings/${builtin}/versions`, { document: loginDocument() });
    expect(refused.statusCode).toBe(403);
    expect(refused.json().error.code).toBe('mapping.builtin_needs_platform_scope');
    const v = await publish(root, builtin);
    expect(v).toMatchObject({ version: 1, is_live: true, created_by: root.id });
    // Everyone with mapping.read sees it.
    expect((await call(viewerA, 'GET', `/api/mappings/${builtin}`)).json()).toMatchObject({
      live_version: { id: v.id },
    });
  });

  it('answers 422 for a malformed id', async () => {
    expect((await call(viewerA, 'GET', '/api/mappings/not-a-uuid')).statusCode).toBe(422);
  });
});

describe('POST /api/mappings/{definition_id}/rollback', () => {
  let def: string;
  let v1: Json;
  let v2: Json;

  beforeAll(async () => {
    def = await definition(orgA, 'rollback');
    v1 = await publish(adminA, def, loginDocument());
    v2 = await publish(adminA, def, loginDocument([{ target: 'status_id', value: 1 }]));
  });

  it('makes an earlier version live (by number), bumps updated_at and answers the definition', async () => {
    const before = await updatedAt(def);
    const res = await call(adminA, 'POST', `/api/mappings/${def}/rollback`, { version: 1 });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ id: def, live_version: { id: v1.id, version: 1 }, versions_count: 2 });
    expect(await updatedAt(def)).toBeGreaterThan(before);
  });

  it('answers 409 mapping.already_live for the live version', async () => {
    const res = await call(adminA, 'POST', `/api/mappings/${def}/rollback`, { version_id: v1.id });
    expect(res.statusCode).toBe(409);
    expect(res.json().error.code).toBe('mapping.already_live');
  });

  it('goes forward again by version_id', async () => {
    const res = await call(adminA, 'POST', `/api/mappings/${def}/rollback`, { version_id: v2.id });
    expect(res.json()).toMatchObject({ live_version: { id: v2.id, version: 2 } });
  });

  it('answers 404 for an unknown version and 422 unless exactly one of version_id and version', async () => {
    expect((await call(adminA, 'POST', `/api/mappings/${def}/rollback`, { version: 9 })).statusCode).toBe(404);
    expect((await call(adminA, 'POST', `/api/mappings/${def}/rollback`, { version_id: newId() })).statusCode).toBe(404);
    expect((await call(adminA, 'POST', `/api/mappings/${def}/rollback`, {})).statusCode).toBe(422);
    expect(
      (await call(adminA, 'POST', `/api/mappings/${def}/rollback`, { version: 1, version_id: v1.id })).statusCode,
    ).toBe(422);
  });

  it('needs mapping.rollback (403 for an operator, who may publish)', async () => {
    expect((await call(operatorA, 'POST', `/api/mappings/${def}/rollback`, { version: 1 })).statusCode).toBe(403);
  });

  it('needs platform scope on a built-in', async () => {
    const res = await call(adminA, 'POST', `/api/mappings/${builtin}/rollback`, { version: 1 });
    expect(res.statusCode).toBe(403);
    expect(res.json().error.code).toBe('mapping.builtin_needs_platform_scope');
  });
});

describe('GET .../versions/{a}/diff/{b}', () => {
  it('lists what changed from a to b as JSON pointers with the values before and after', async () => {
    const def = await definition(orgA, 'diff');
    const a = await publish(adminA, def, loginDocument());
    const changed = loginDocument([{ target: 'status_id', value: 1 }]);
    ((changed.product as Json).name as string) = 'Renamed';
    delete (changed.rules as Json[])[0]!.when;
    const b = await publish(adminA, def, changed);
    const res = await call(viewerA, 'GET', `/api/mappings/${def}/versions/${a.id as string}/diff/${b.id as string}`);
    expect(res.statusCode).toBe(200);
    const body = res.json<{ from: Json; to: Json; changes: Json[] }>();
    expect(body.from).toEqual({ id: a.id, version: 1 });
    expect(body.to).toEqual({ id: b.id, version: 2 });
    expect(body.changes).toEqual(
      expect.arrayContaining([
        { op: 'replace', path: '/product/name', from: 'Test app', to: 'Renamed' },
        { op: 'remove', path: '/rules/0/when', from: { path: 'type', eq: 'login' } },
        { op: 'add', path: '/rules/0/set/5', to: { target: 'status_id', value: 1 } },
      ]),
    );
    expect(body.changes).toHaveLength(3);
    const same = (
      await call(viewerA, 'GET', `/api/mappings/${def}/versions/${a.id as string}/diff/${a.id as string}`)
    ).json<{ changes: Json[] }>();
    expect(same.changes).toEqual([]);
    expect(
      (await call(viewerA, 'GET', `/api/mappings/${def}/versions/${a.id as string}/diff/${newId()}`)).statusCode,
    ).toBe(404);
  });
});

describe('GET /api/mappings/{definition_id}/audit', () => {
  it("lists the definition's publications and rollbacks, newest first, with the versions involved", async () => {
    const def = await definition(orgA, 'audited');
    const v1 = await publish(adminA, def);
    const v2 = await publish(adminA, def, loginDocument([{ target: 'status_id', value: 1 }]));
    await call(adminA, 'POST', `/api/mappings/${def}/rollback`, { version: 1 });
    await call(adminA, 'POST', `/api/mappings/${def}/rollback`, { version: 1 }); // 409, recorded as failed
    const res = await call(operatorA, 'GET', `/api/mappings/${def}/audit`);
    expect(res.statusCode).toBe(200);
    const body = res.json<{ total: number; items: Json[] }>();
    expect(body.total).toBe(4);
    expect(body.items.map((e) => [e.operation_id, e.outcome])).toEqual([
      ['mappings.rollback', 'failed'],
      ['mappings.rollback', 'success'],
      ['mappings.versions_create', 'success'],
      ['mappings.versions_create', 'success'],
    ]);
    expect(body.items[1]).toMatchObject({
      target_type: 'mappings',
      target_id: def,
      organization_id: orgA,
      details: { from_version: 2, to_version: 1, from_version_id: v2.id, to_version_id: v1.id },
    });
    expect(body.items[3]).toMatchObject({ details: { version: 1, version_id: v1.id, checksum: v1.checksum } });
    const failedOnly = (await call(operatorA, 'GET', `/api/mappings/${def}/audit?outcome=failed`)).json<{
      total: number;
    }>();
    expect(failedOnly.total).toBe(1);
  });

  it("shows a built-in's platform entries to its readers, but not other organizations' attempts", async () => {
    const adminB = await createPrincipal(t, { role: 'admin', organizationId: orgB });
    expect(
      (await call(adminB, 'POST', `/api/mappings/${builtin}/versions`, { document: loginDocument() })).statusCode,
    ).toBe(403);
    const seenByA = (await call(operatorA, 'GET', `/api/mappings/${builtin}/audit`)).json<{ items: Json[] }>();
    expect(seenByA.items.some((e) => e.outcome === 'success' && e.organization_id === null)).toBe(true);
    expect(seenByA.items.every((e) => e.organization_id === null || e.organization_id === orgA)).toBe(true);
    const seenByRoot = (await call(root, 'GET', `/api/mappings/${builtin}/audit`)).json<{ items: Json[] }>();
    expect(
      seenByRoot.items.some(
        (e) => e.organization_id === orgB && e.error_code === 'mapping.builtin_needs_platform_scope',
      ),
    ).toBe(true);
  });

  it('needs audit.read (403 for a viewer)', async () => {
    expect((await call(viewerA, 'GET', `/api/mappings/${defA}/audit`)).statusCode).toBe(403);
  });
});
