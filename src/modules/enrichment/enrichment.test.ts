// The Enrichment family through the API: tables (versions, patch, rollback, in-use delete),
// policies (publication checks, versions, rollback, enable), sources (Enterprise gate,
// credential never returned, uploaded database, built-in GeoIP), dry-run, metrics window,
// activity, enrichers and key-sources; permissions and cross-organization 404s.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintLicense } from '../../../scripts/mint-license.js';
import { createTestApp, type TestApp } from '../../../test/support/app.js';
import { createOrganization, createPrincipal, type Principal, injectAs } from '../../../test/support/identity.js';
import { loginDocument } from '../../../test/support/mappings.js';
import { createIntegration, publishMapping } from '../../../test/support/normalization.js';

type Json = Record<string, unknown>;
const BASE = '/api/collectors/enrichment';

let t: TestApp;
let orgA: number;
let orgB: number;
let root: Principal;
let adminA: Principal;
let adminB: Principal;
let viewerA: Principal;

const call = (who: Principal, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: unknown) =>
  injectAs(t, who, method, url, payload);

async function ok<T = Json>(
  who: Principal,
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE',
  url: string,
  payload?: unknown,
  status = 200,
): Promise<T> {
  const res = await call(who, method, url, payload);
  expect(res.statusCode, res.body).toBe(status);
  return res.json<T>();
}

const USERS_CSV = 'user,department,manager\nalice,Finance,carol\nbob,Engineering,dave\n';

beforeAll(async () => {
  t = await createTestApp({ env: { WEIR_TOKEN_RATE_LIMIT: '1000000' } });
  orgA = await createOrganization(t, 'Org A');
  orgB = await createOrganization(t, 'Org B');
  root = await createPrincipal(t, { role: 'admin' });
  adminA = await createPrincipal(t, { role: 'admin', organizationId: orgA });
  adminB = await createPrincipal(t, { role: 'admin', organizationId: orgB });
  viewerA = await createPrincipal(t, { role: 'viewer', organizationId: orgA });
  const integration = await createIntegration(t, orgA);
  await publishMapping(t, orgA, 'custom', 'auth', loginDocument());
  expect(integration).toBeGreaterThan(0);
});
afterAll(async () => t?.close());

describe('tables', () => {
  let tableId: string;

  it('creates a table from CSV, lists it without rows and shows a page of rows', async () => {
    const created = await ok<Json>(
      adminA,
      'POST',
      `${BASE}/tables`,
      { name: 'users', key_column: 'user', match: 'case_insensitive', csv: USERS_CSV },
      201,
    );
    expect(created).toMatchObject({
      organization_id: orgA,
      name: 'users',
      version: 1,
      row_count: 2,
      live_version: { version: 1, kind: 'create', columns: ['user', 'department', 'manager'] },
    });
    tableId = created.id as string;
    const list = await ok<Json[]>(adminA, 'GET', `${BASE}/tables`);
    expect(list.map((x) => x.name)).toEqual(['users']);
    expect(list[0]).not.toHaveProperty('rows');
    const detail = await ok<Json>(adminA, 'GET', `${BASE}/tables/${tableId}?limit=1`);
    expect(detail.rows).toEqual([{ user: 'alice', department: 'Finance', manager: 'carol' }]);
  });

  it('refuses bad data with every problem located, and a taken name', async () => {
    const bad = await call(adminA, 'POST', `${BASE}/tables`, {
      name: 'nets',
      key_column: 'net',
      match: 'cidr',
      rows: [{ net: '10.0.0.0/8' }, { net: 'not-a-cidr' }, { net: '10.1.0.0/33' }],
    });
    expect(bad.statusCode, bad.body).toBe(422);
    expect(bad.json().error.code).toBe('enrichment.invalid_table');
    expect(bad.json().error.details.errors.length).toBeGreaterThanOrEqual(2);
    expect(typeof bad.json().detail).toBe('string');
    const missingKey = await call(adminA, 'POST', `${BASE}/tables`, {
      name: 'x',
      key_column: 'nope',
      match: 'exact',
      csv: USERS_CSV,
    });
    expect(missingKey.statusCode).toBe(422);
    const taken = await call(adminA, 'POST', `${BASE}/tables`, {
      name: 'USERS',
      key_column: 'user',
      match: 'exact',
      csv: USERS_CSV,
    });
    expect(taken.statusCode).toBe(409);
  });

  it('adds versions (patch, replace), lists them and rolls back', async () => {
    const patched = await ok<Json>(
      adminA,
      'POST',
      `${BASE}/tables/${tableId}/versions`,
      {
        mode: 'patch',
        upsert: [{ user: 'erin', department: 'Sales', manager: 'frank' }],
        delete: ['BOB'],
        comment: 'hires',
      },
      201,
    );
    expect(patched).toMatchObject({ version: 2, kind: 'patch', row_count: 2, comment: 'hires' });
    const replaced = await ok<Json>(
      adminA,
      'POST',
      `${BASE}/tables/${tableId}/versions`,
      { mode: 'replace', rows: [{ user: 'zed', department: 'Legal', manager: 'yan' }] },
      201,
    );
    expect(replaced).toMatchObject({ version: 3, kind: 'replace', row_count: 1 });
    const versions = await ok<Json[]>(adminA, 'GET', `${BASE}/tables/${tableId}/versions`);
    expect(versions.map((v) => v.version)).toEqual([3, 2, 1]);
    const rolled = await ok<Json>(adminA, 'POST', `${BASE}/tables/${tableId}/rollback`, { version: 1 }, 201);
    expect(rolled).toMatchObject({ version: 4, kind: 'rollback', row_count: 2 });
    const again = await call(adminA, 'POST', `${BASE}/tables/${tableId}/rollback`, { version: 1 });
    expect(again.statusCode).toBe(409);
    const detail = await ok<Json>(adminA, 'GET', `${BASE}/tables/${tableId}`);
    expect((detail.rows as Json[]).map((r) => r.user)).toEqual(['alice', 'bob']);
  });

  it("is user.manage only and another organization's table is not found", async () => {
    expect((await call(viewerA, 'GET', `${BASE}/tables`)).statusCode).toBe(403);
    expect((await call(adminB, 'GET', `${BASE}/tables/${tableId}`)).statusCode).toBe(404);
    expect((await call(adminB, 'DELETE', `${BASE}/tables/${tableId}`)).statusCode).toBe(404);
    expect(await ok<Json[]>(adminB, 'GET', `${BASE}/tables`)).toEqual([]);
    expect(
      (await call(root, 'POST', `${BASE}/tables`, { name: 'x', key_column: 'user', match: 'exact', csv: USERS_CSV }))
        .statusCode,
    ).toBe(422);
  });
});

describe('policies', () => {
  let tableId: string;
  let policyId: string;

  beforeAll(async () => {
    tableId = (
      await ok<Json>(
        adminA,
        'POST',
        `${BASE}/tables`,
        { name: 'people', key_column: 'user', match: 'exact', csv: USERS_CSV },
        201,
      )
    ).id as string;
  });

  const geoPolicy = {
    name: 'geo',
    condition: { field: 'class_uid', op: 'eq', value: 3002 },
    key: 'src_endpoint.ip',
    lookup: { source_id: 'builtin-geoip' },
    output: {
      fields: { 'src_endpoint.location.country': 'country_code', 'src_endpoint.autonomous_system.number': 'asn' },
    },
  };

  it('refuses an invalid rule at publication with every problem and its location', async () => {
    const res = await call(adminA, 'POST', `${BASE}/policies`, {
      name: 'bad',
      condition: { field: 'actor.user.nmae', op: 'eq', value: 'x' },
      key: 'src_endpoint.ipp',
      lookup: { table_id: 'no-such-table' },
      output: { fields: { 'src_endpoint.location.planet': 'department', 'user.name': 'department' } },
    });
    expect(res.statusCode, res.body).toBe(422);
    const paths = (res.json().error.details.errors as { path: string }[]).map((e) => e.path);
    expect(res.json().error.code).toBe('enrichment.invalid_rule');
    expect(paths).toEqual(
      expect.arrayContaining([
        'condition.field',
        'key',
        'lookup.table_id',
        'output.fields["src_endpoint.location.planet"]',
      ]),
    );
    // A target the pinned class lacks.
    const lacks = await call(adminA, 'POST', `${BASE}/policies`, {
      ...geoPolicy,
      name: 'lacks',
      output: { fields: { 'process.name': 'country_code' } },
    });
    expect(lacks.statusCode).toBe(422);
    expect(lacks.body).toContain('process.name');
  });

  it('creates, publishes versions, reads one, rolls back and enables', async () => {
    const created = await ok<Json>(adminA, 'POST', `${BASE}/policies`, geoPolicy, 201);
    expect(created).toMatchObject({ name: 'geo', version: 1, enabled: true, order: 100, on_miss: 'continue' });
    policyId = created.id as string;
    const v2 = await ok<Json>(
      adminA,
      'POST',
      `${BASE}/policies/${policyId}/versions`,
      { ...geoPolicy, order: 5, comment: 'first' },
      201,
    );
    expect(v2).toMatchObject({ version: 2, comment: 'first', definition: { order: 5 } });
    const versions = await ok<Json[]>(adminA, 'GET', `${BASE}/policies/${policyId}/versions`);
    expect(versions.map((v) => v.version)).toEqual([2, 1]);
    const one = await ok<Json>(adminA, 'GET', `${BASE}/policies/${policyId}/versions/${versions[1]!.id as string}`);
    expect(one).toMatchObject({ version: 1, definition: { order: 100 } });
    const rolled = await ok<Json>(adminA, 'POST', `${BASE}/policies/${policyId}/rollback`, { version: 1 }, 201);
    expect(rolled).toMatchObject({ version: 3, definition: { order: 100 } });
    expect((await call(adminA, 'POST', `${BASE}/policies/${policyId}/rollback`, { version: 3 })).statusCode).toBe(409);
    const off = await ok<Json>(adminA, 'POST', `${BASE}/policies/${policyId}/enable`, { enabled: false });
    expect(off.enabled).toBe(false);
    const on = await ok<Json>(adminA, 'POST', `${BASE}/policies/${policyId}/enable`);
    expect(on.enabled).toBe(true);
    expect((await call(adminB, 'GET', `${BASE}/policies/${policyId}/versions`)).statusCode).toBe(404);
    expect((await call(adminB, 'POST', `${BASE}/policies/${policyId}/enable`, {})).statusCode).toBe(404);
  });

  it('a table an enabled policy uses cannot be deleted: 409 naming the policy', async () => {
    await ok(
      adminA,
      'POST',
      `${BASE}/policies`,
      {
        name: 'dept',
        key: 'user.name',
        lookup: { table_id: tableId },
        output: { enrichment: { name: 'department', type: 'user' } },
      },
      201,
    );
    const res = await call(adminA, 'DELETE', `${BASE}/tables/${tableId}`);
    expect(res.statusCode, res.body).toBe(409);
    expect(res.json().detail).toContain('policy "dept"');
    expect(res.json().error.details.policies[0].name).toBe('dept');
  });

  it('dry-run runs local rules on given events; an HTTP source comes back skipped', async () => {
    const res = await ok<Json>(adminA, 'POST', `${BASE}/dry-run`, {
      events: [{ class_uid: 3002, src_endpoint: { ip: '8.8.8.8' }, user: { name: 'alice' } }],
    });
    const item = (res.items as Json[])[0]!;
    expect(item.output).toMatchObject({
      src_endpoint: { location: { country: 'US' }, autonomous_system: { number: 15169 } },
    });
    expect((item.output as Json).enrichments).toEqual([
      {
        name: 'department',
        type: 'user',
        value: 'alice',
        data: { user: 'alice', department: 'Finance', manager: 'carol' },
      },
    ]);
    expect((item.policies as Json[]).map((p) => p.outcome).sort()).toEqual(['hit', 'hit']);
    const http = await ok<Json>(
      adminA,
      'POST',
      `${BASE}/sources`,
      { name: 'intel', kind: 'http', config: { url_template: 'https://intel.example.test/ip/{key}' } },
      201,
    );
    const draft = await ok<Json>(adminA, 'POST', `${BASE}/dry-run`, {
      events: [{ class_uid: 3002, src_endpoint: { ip: '8.8.8.8' } }],
      policies: [
        {
          name: 'intel',
          key: 'src_endpoint.ip',
          lookup: { source_id: http.id },
          output: { enrichment: { name: 'intel' } },
        },
      ],
    });
    expect(((draft.items as Json[])[0]!.policies as Json[])[0]).toMatchObject({ outcome: 'skipped' });
  });

  it('metrics refuse a window above 180 minutes', async () => {
    expect((await call(adminA, 'GET', `${BASE}/metrics?window_minutes=181`)).statusCode).toBe(422);
    const m = await ok<Json>(adminA, 'GET', `${BASE}/metrics?window_minutes=180`);
    expect(m.window_minutes).toBe(180);
  });
});

describe('sources', () => {
  it('lists the built-in GeoIP and tests it with a real lookup', async () => {
    const list = await ok<Json[]>(adminA, 'GET', `${BASE}/sources`);
    expect(list[0]).toMatchObject({ id: 'builtin-geoip', builtin: true, kind: 'geoip' });
    const test = await ok<Json>(adminA, 'POST', `${BASE}/sources/builtin-geoip/test`);
    expect(test).toMatchObject({ ok: true, found: true, result: { country_code: 'US', asn: 15169 } });
    expect((await call(adminA, 'DELETE', `${BASE}/sources/builtin-geoip`)).statusCode).toBe(409);
  });

  it("sharing needs Enterprise (403 with the spec's code), then works", async () => {
    const res = await call(adminA, 'POST', `${BASE}/sources`, {
      name: 'shared-intel',
      kind: 'http',
      shared: true,
      config: { url_template: 'https://intel.example.test/{key}' },
    });
    expect(res.statusCode).toBe(403);
    expect(res.json().error.code).toBe('enrichment.source_sharing_requires_enterprise');
    const mine = await ok<Json>(
      adminA,
      'POST',
      `${BASE}/sources`,
      { name: 'private-intel', kind: 'http', config: { url_template: 'https://intel.example.test/{key}' } },
      201,
    );
    const patch = await call(adminA, 'PATCH', `${BASE}/sources/${mine.id as string}`, { shared: true });
    expect(patch.statusCode).toBe(403);
    expect(
      (await call(root, 'POST', '/api/licenses/activate', { license_token: await mintLicense() })).statusCode,
    ).toBe(200);
    const shared = await ok<Json>(adminA, 'PATCH', `${BASE}/sources/${mine.id as string}`, { shared: true });
    expect(shared.shared).toBe(true);
    // Org B sees the shared source (read-only) and may use it.
    const seen = await ok<Json[]>(adminB, 'GET', `${BASE}/sources`);
    expect(seen.map((s) => s.id)).toContain(mine.id);
    expect(
      (await call(adminB, 'PATCH', `${BASE}/sources/${mine.id as string}`, { name: 'taken over' })).statusCode,
    ).toBe(404);
  });

  it('seals the credential: never in a response, an audit entry or the activity list', async () => {
    const secret = 'sk-live-super-secret-value';
    const created = await ok<Json>(
      adminA,
      'POST',
      `${BASE}/sources`,
      {
        name: 'vt',
        kind: 'http',
        config: { url_template: 'https://vt.example.test/{key}' },
        credential: { header: 'X-Api-Key', value: secret },
      },
      201,
    );
    expect(created.has_credential).toBe(true);
    const rotated = await call(adminA, 'PATCH', `${BASE}/sources/${created.id as string}`, {
      credential: { header: 'X-Api-Key', value: `${secret}-2` },
    });
    expect(rotated.statusCode).toBe(200);
    for (const url of [`${BASE}/sources`, `${BASE}/activity`, '/api/audit?limit=500']) {
      const res = await call(root, 'GET', url);
      expect(res.body).not.toContain(secret);
    }
    const row = await t.container.database.db
      .selectFrom('enrichment_sources')
      .select('credential')
      .where('id', '=', created.id as string)
      .executeTakeFirstOrThrow();
    expect(row.credential).not.toContain(secret);
  });

  it('takes an uploaded MaxMind database, refuses a file that is not one', async () => {
    const require = createRequire(import.meta.url);
    const dir = require
      .resolve('@ip-location-db/geo-whois-asn-country-mmdb/package.json')
      .replace(/package\.json$/, '');
    const bytes = readFileSync(`${dir}geo-whois-asn-country-ipv4.mmdb`);
    const created = await ok<Json>(
      adminA,
      'POST',
      `${BASE}/sources`,
      { name: 'my-geo', kind: 'mmdb', mmdb_base64: bytes.toString('base64') },
      201,
    );
    expect(created.database).toMatchObject({ bytes: bytes.length });
    const test = await ok<Json>(adminA, 'POST', `${BASE}/sources/${created.id as string}/test`, { key: '8.8.8.8' });
    expect(test).toMatchObject({ ok: true, found: true, result: { country_code: 'US' } });
    const bad = await call(adminA, 'POST', `${BASE}/sources`, {
      name: 'junk',
      kind: 'mmdb',
      mmdb_base64: Buffer.from('not a database').toString('base64'),
    });
    expect(bad.statusCode).toBe(422);
    expect(bad.json().error.code).toBe('enrichment.invalid_source');
  });

  it('a source a policy uses cannot be deleted; an unused one can', async () => {
    const src = await ok<Json>(
      adminA,
      'POST',
      `${BASE}/sources`,
      { name: 'asset-api', kind: 'http', config: { url_template: 'https://assets.example.test/{key}' } },
      201,
    );
    await ok(
      adminA,
      'POST',
      `${BASE}/policies`,
      {
        name: 'assets',
        key: 'dst_endpoint.hostname',
        lookup: { source_id: src.id },
        output: { enrichment: { name: 'asset' } },
      },
      201,
    );
    const res = await call(adminA, 'DELETE', `${BASE}/sources/${src.id as string}`);
    expect(res.statusCode).toBe(409);
    expect(res.json().detail).toContain('policy "assets"');
    const spare = await ok<Json>(
      adminA,
      'POST',
      `${BASE}/sources`,
      { name: 'spare', kind: 'http', config: { url_template: 'https://spare.example.test/{key}' } },
      201,
    );
    expect((await call(adminA, 'DELETE', `${BASE}/sources/${spare.id as string}`)).statusCode).toBe(204);
  });
});

describe('enrichers, key-sources, activity', () => {
  it('lists the enrichers with their config schemas', async () => {
    const res = await ok<{ items: Json[] }>(adminA, 'GET', `${BASE}/enrichers`);
    expect(res.items.map((e) => e.kind)).toEqual(['table', 'geoip', 'mmdb', 'http', 'feed']);
    expect(res.items.find((e) => e.kind === 'http')).toMatchObject({ local: false, config_schema: { type: 'object' } });
  });

  it("lists key fields from the classes the organization's mappings produce", async () => {
    const res = await ok<{ class_uids: number[]; items: Json[] }>(adminA, 'GET', `${BASE}/key-sources`);
    expect(res.class_uids).toContain(3002);
    const paths = res.items.map((i) => i.path);
    expect(paths).toEqual(expect.arrayContaining(['src_endpoint.ip', 'user.name', 'dst_endpoint.hostname']));
    expect((await call(adminA, 'GET', `${BASE}/key-sources?organization_id=${orgB}`)).statusCode).toBe(404);
  });

  it("activity lists the organization's changes, newest first, scoped", async () => {
    const res = await ok<{ items: Json[]; total: number }>(adminA, 'GET', `${BASE}/activity?limit=200`);
    expect(res.total).toBeGreaterThan(5);
    expect(res.items.every((i) => i.organization_id === orgA)).toBe(true);
    expect(res.items.map((i) => i.kind)).toEqual(
      expect.arrayContaining(['table.create', 'table.patch', 'policy.version', 'source.created']),
    );
    expect((await ok<{ total: number }>(adminB, 'GET', `${BASE}/activity`)).total).toBe(0);
  });
});
