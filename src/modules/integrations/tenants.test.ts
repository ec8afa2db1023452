// Managed-provider tenants through the API, against the fake provider's loopback server:
// live discovery, sync (Community and Enterprise), auto-approve policy, selection, listing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintLicense } from '../../../scripts/mint-license.js';
import { createTestApp, type TestApp } from '../../../test/support/app.js';
import { createOrganization, createPrincipal, type Principal } from '../../../test/support/identity.js';
import {
  FAKE_API_KEY,
  fakeProviderConnector,
  startFakeProvider,
  type FakeProvider,
} from '../../../test/support/vendors/fake-provider.js';
import { registerConnector } from '../../connectors/index.js';
import { COMMUNITY_WARNING } from './tenants.js';

let t: TestApp;
let sim: FakeProvider;
let orgA: number;
let root: Principal;
let adminA: Principal;
let adminB: Principal;
let viewerA: Principal;
let parent: number;

type Json = Record<string, unknown>;
const call = (who: Principal, method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE', url: string, payload?: unknown) =>
  t.app.inject({ method, url, headers: who.headers, ...(payload !== undefined ? { payload: payload as Json } : {}) });

async function createIntegration(body: Json): Promise<number> {
  const res = await call(adminA, 'POST', '/api/integrations/', {
    organization_id: orgA,
    platform: 'fake_provider',
    ...body,
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json<{ id: number }>().id;
}

const customers = [
  { id: 'cust-1', name: 'Acme Corp', domain: 'acme.example' },
  { id: 'cust-2', name: 'Globex', domain: 'globex.example' },
  { id: 'cust-3', name: 'Acme Labs' },
];

beforeAll(async () => {
  sim = await startFakeProvider({ customers });
  registerConnector(fakeProviderConnector());
  t = await createTestApp({ env: { WEIR_TOKEN_RATE_LIMIT: '100000' } });
  orgA = await createOrganization(t, 'Org A');
  const orgB = await createOrganization(t, 'Org B');
  root = await createPrincipal(t, { role: 'admin' });
  adminA = await createPrincipal(t, { role: 'admin', organizationId: orgA });
  adminB = await createPrincipal(t, { role: 'admin', organizationId: orgB });
  viewerA = await createPrincipal(t, { role: 'viewer', organizationId: orgA });
  parent = await createIntegration({
    name: 'MSP parent',
    config: { partner: true, base_url: sim.url, api_key: FAKE_API_KEY },
  });
});
afterAll(async () => {
  await t?.close();
  await sim?.close();
});

describe('GET /api/integrations/{id}/partner-tenants', () => {
  it('asks the vendor live (every page) and stores nothing', async () => {
    const res = await call(viewerA, 'GET', `/api/integrations/${parent}/partner-tenants`);
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json<Json & { tenants: Json[] }>();
    expect(body).toMatchObject({ ok: true, error: null, total: 3 });
    expect(body.tenants.map((x) => x.external_id)).toEqual(['cust-1', 'cust-2', 'cust-3']);
    expect(body.tenants[0]).toMatchObject({
      name: 'Acme Corp',
      domain: 'acme.example',
      stored: false,
      selected: false,
      child_integration_id: null,
    });
    const stored = await call(viewerA, 'GET', `/api/integrations/${parent}/discovered-tenants`);
    expect(stored.json()).toEqual({ total: 0, page: 1, size: 50, items: [] });
  });

  it('answers 200 ok false when the vendor refuses the credentials, without the secret', async () => {
    const wrong = 'wrong-key-5a6b7c8d9e';
    const bad = await createIntegration({
      name: 'MSP wrong key',
      config: { partner: true, base_url: sim.url, api_key: wrong },
    });
    const res = await call(adminA, 'GET', `/api/integrations/${bad}/partner-tenants`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ ok: false, total: 0, tenants: [], error: { kind: 'auth', status: 401 } });
    expect(res.body).not.toContain(wrong);
  });

  it('refuses integrations that are not managed-provider parents (422) and hides other organizations (404)', async () => {
    const plain = await createIntegration({
      name: 'Not a partner',
      config: { base_url: sim.url, api_key: FAKE_API_KEY },
    });
    const custom = await createIntegration({ name: 'Push source', platform: 'custom' });
    for (const id of [plain, custom]) {
      const res = await call(adminA, 'GET', `/api/integrations/${id}/partner-tenants`);
      expect(res.statusCode).toBe(422);
      expect(res.json().error.code).toBe('integration.not_managed_provider');
    }
    for (const [method, path] of [
      ['GET', 'partner-tenants'],
      ['POST', 'sync-tenants'],
      ['GET', 'discovered-tenants'],
    ] as const) {
      const res = await call(adminB, method, `/api/integrations/${parent}/${path}`);
      expect(res.statusCode, path).toBe(404);
    }
    expect(
      (await call(adminB, 'POST', `/api/integrations/${parent}/tenants/select`, { external_ids: ['cust-1'] }))
        .statusCode,
    ).toBe(404);
    expect(
      (await call(adminB, 'PATCH', `/api/integrations/${parent}/auto-approve-policy`, { enabled: true })).statusCode,
    ).toBe(404);
  });
});

describe('auto-approve policy', () => {
  it('validates the pattern (RE2) and applies only to managed-provider parents', async () => {
    const bad = await call(adminA, 'PATCH', `/api/integrations/${parent}/auto-approve-policy`, {
      enabled: true,
      name_pattern: '(unclosed',
    });
    expect(bad.statusCode).toBe(422);
    expect(bad.json().error.details.errors[0].location).toBe('body/name_pattern');
    const custom = await createIntegration({ name: 'Push only', platform: 'custom' });
    const notParent = await call(adminA, 'PATCH', `/api/integrations/${custom}/auto-approve-policy`, { enabled: true });
    expect(notParent.json().error.code).toBe('integration.not_managed_provider');
    expect(
      (
        await call(adminA, 'PATCH', `/api/integrations/${parent}/auto-approve-policy`, {
          enabled: true,
          max_tenants: 0,
        })
      ).statusCode,
    ).toBe(422);
    expect(
      (await call(viewerA, 'PATCH', `/api/integrations/${parent}/auto-approve-policy`, { enabled: true })).statusCode,
    ).toBe(403);
  });

  it('stores the policy; absent fields are unchanged, null clears', async () => {
    const set = await call(adminA, 'PATCH', `/api/integrations/${parent}/auto-approve-policy`, {
      enabled: true,
      name_pattern: '^Acme',
      max_tenants: 5,
    });
    expect(set.statusCode, set.body).toBe(200);
    expect(set.json()).toMatchObject({ enabled: true, name_pattern: '^Acme', max_tenants: 5 });
    const keep = await call(adminA, 'PATCH', `/api/integrations/${parent}/auto-approve-policy`, {
      enabled: true,
      max_tenants: null,
    });
    expect(keep.json()).toMatchObject({ enabled: true, name_pattern: '^Acme', max_tenants: null });
  });
});

describe('sync, selection and materialization', () => {
  it('Community: stores the discovery, auto-approves matching new tenants, materializes nothing, warns', async () => {
    const res = await call(adminA, 'POST', `/api/integrations/${parent}/sync-tenants`);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({
      ok: true,
      edition: 'community',
      discovered: 3,
      added: 3,
      gone: 0,
      auto_selected: 2,
      selected: 2,
      materialized: 0,
      warning: COMMUNITY_WARNING,
    });
    const list = (await call(viewerA, 'GET', `/api/integrations/${parent}/discovered-tenants?selected=true`)).json<{
      total: number;
      items: Json[];
    }>();
    expect(list.items.map((x) => x.external_id).sort()).toEqual(['cust-1', 'cust-3']);
    expect(list.items.every((x) => x.child_integration_id === null && x.present === true)).toBe(true);
    // A second sync adds nothing new, so the policy selects nothing more.
    expect((await call(adminA, 'POST', `/api/integrations/${parent}/sync-tenants`)).json()).toMatchObject({
      added: 0,
      auto_selected: 0,
      selected: 2,
    });
    const status = (await call(viewerA, 'GET', `/api/integrations/${parent}/sync-status`)).json();
    expect(status).toMatchObject({
      mode: 'managed_provider',
      tenant_sync: { status: 'succeeded', discovered: 3, materialized: 0, warning: COMMUNITY_WARNING },
    });
  });

  it('Community: select stores the choice; unknown ids are listed as errors', async () => {
    const res = await call(adminA, 'POST', `/api/integrations/${parent}/tenants/select`, {
      external_ids: ['cust-2', 'nope', 'cust-2'],
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({
      requested: 2,
      updated: 1,
      unchanged: 0,
      not_found: 1,
      materialized: 0,
      warning: COMMUNITY_WARNING,
    });
    expect(res.json().errors).toEqual([
      { external_id: 'nope', code: 'integration.unknown_tenant', detail: expect.any(String) },
    ]);
    const children = await call(adminA, 'GET', `/api/integrations/?parent_id=${parent}`);
    expect(children.json().total).toBe(0);
  });

  it('pages the stored tenants with page and size, total in the body', async () => {
    const p1 = await call(viewerA, 'GET', `/api/integrations/${parent}/discovered-tenants?page=1&size=2`);
    expect(p1.json()).toMatchObject({ total: 3, page: 1, size: 2 });
    expect(p1.json().items.map((x: Json) => x.name)).toEqual(['Acme Corp', 'Acme Labs']);
    const p2 = (await call(viewerA, 'GET', `/api/integrations/${parent}/discovered-tenants?page=2&size=2`)).json();
    expect(p2.items.map((x: Json) => x.name)).toEqual(['Globex']);
    expect((await call(viewerA, 'GET', `/api/integrations/${parent}/discovered-tenants?pag=2`)).statusCode).toBe(422);
  });

  it('Enterprise: sync materializes every selected tenant as a child collecting with the parent credentials', async () => {
    const lic = await call(root, 'POST', '/api/licenses/activate', { license_token: await mintLicense() });
    expect(lic.statusCode, lic.body).toBe(200);
    const res = await call(adminA, 'POST', `/api/integrations/${parent}/sync-tenants`);
    expect(res.json()).toMatchObject({ ok: true, edition: 'enterprise', materialized: 3, warning: null });
    const children = (await call(adminA, 'GET', `/api/integrations/?parent_id=${parent}`)).json<{ items: Json[] }>()
      .items;
    expect(children.map((c) => c.name).sort()).toEqual([
      'MSP parent / Acme Corp',
      'MSP parent / Acme Labs',
      'MSP parent / Globex',
    ]);
    const rows = await t.container.database.db
      .selectFrom('integrations')
      .select(['id', 'external_tenant_id', 'platform', 'organization_id', 'secrets'])
      .where('parent_id', '=', parent)
      .orderBy('external_tenant_id')
      .execute();
    expect(rows.map((r) => [r.external_tenant_id, r.platform, r.organization_id, r.secrets])).toEqual([
      ['cust-1', 'fake_provider', orgA, null],
      ['cust-2', 'fake_provider', orgA, null],
      ['cust-3', 'fake_provider', orgA, null],
    ]);
    const child = children.find((c) => c.name === 'MSP parent / Globex')!;
    // The child's connection test calls the vendor with the parent's key, for its own tenant.
    const test = await call(adminA, 'POST', `/api/integrations/${child.id as number}/test-connection`);
    expect(test.json()).toMatchObject({
      ok: true,
      kind: 'vendor',
      detail: 'authenticated as partner-account for customer cust-2',
    });
    expect(sim.log.at(-1)).toMatchObject({ path: '/v1/whoami', customer: 'cust-2', authorized: true });
    // Nothing left to materialize.
    expect((await call(adminA, 'POST', `/api/integrations/${parent}/sync-tenants`)).json().materialized).toBe(0);
    // A child's own config is validated with the credentials it inherits, and stores none of them.
    const put = await call(adminA, 'PUT', `/api/integrations/${child.id as number}`, {
      config: { collect: true, interval_seconds: 600 },
    });
    expect(put.statusCode, put.body).toBe(200);
    const stored = await t.container.database.db
      .selectFrom('integrations')
      .select(['config', 'secrets'])
      .where('id', '=', child.id as number)
      .executeTakeFirstOrThrow();
    expect(stored).toEqual({ config: { collect: true, interval_seconds: 600 }, secrets: null });
  });

  it('Enterprise: deselect deactivates the child, select switches it back on; a new tenant is materialized on select', async () => {
    const off = await call(adminA, 'POST', `/api/integrations/${parent}/tenants/select`, {
      external_ids: ['cust-2'],
      selected: false,
    });
    expect(off.json()).toMatchObject({ updated: 1, deactivated: 1, warning: null });
    const on = await call(adminA, 'POST', `/api/integrations/${parent}/tenants/select`, { external_ids: ['cust-2'] });
    expect(on.json()).toMatchObject({ updated: 1, reactivated: 1, materialized: 0 });
    sim.setCustomers([...customers, { id: 'cust-4', name: 'Initech' }]);
    // The pattern does not match Initech: discovered, not selected.
    expect((await call(adminA, 'POST', `/api/integrations/${parent}/sync-tenants`)).json()).toMatchObject({
      added: 1,
      auto_selected: 0,
      materialized: 0,
    });
    const sel = await call(adminA, 'POST', `/api/integrations/${parent}/tenants/select`, { external_ids: ['cust-4'] });
    expect(sel.json()).toMatchObject({ updated: 1, materialized: 1 });
    const overview = (await call(viewerA, 'GET', `/api/integrations/${parent}/overview`)).json();
    expect(overview).toMatchObject({
      children: { total: 4, active: 4 },
      collection: { mode: 'managed_provider' },
      tenants: { auto_approve: { enabled: true, name_pattern: '^Acme' } },
    });
  });

  it('marks tenants the vendor no longer lists as not present, and records a failed sync', async () => {
    sim.setCustomers(customers.slice(0, 2));
    const res = await call(adminA, 'POST', `/api/integrations/${parent}/sync-tenants`);
    expect(res.json()).toMatchObject({ discovered: 2, gone: 2 });
    const gone = (await call(viewerA, 'GET', `/api/integrations/${parent}/discovered-tenants?present=false`)).json<{
      items: Json[];
    }>();
    expect(gone.items.map((x) => x.external_id).sort()).toEqual(['cust-3', 'cust-4']);
    sim.failNext(403);
    const failed = await call(adminA, 'POST', `/api/integrations/${parent}/sync-tenants`);
    expect(failed.statusCode).toBe(200);
    expect(failed.json()).toMatchObject({ ok: false, error: { kind: 'auth', status: 403 }, discovered: 0 });
    const status = (await call(viewerA, 'GET', `/api/integrations/${parent}/sync-status`)).json();
    expect(status.tenant_sync).toMatchObject({ status: 'failed', error: expect.stringContaining('auth') });
    // The stored discovery is untouched by a failed sync.
    expect((await call(viewerA, 'GET', `/api/integrations/${parent}/discovered-tenants`)).json().total).toBe(4);
  });

  it('records sync-tenants and select in the audit trail', async () => {
    const rows = await t.container.database.db
      .selectFrom('audit_log')
      .select(['operation_id', 'outcome', 'details'])
      .where('operation_id', 'in', ['integrations.sync_tenants', 'integrations.select_tenants'])
      .execute();
    expect(rows.filter((r) => r.operation_id === 'integrations.sync_tenants').length).toBeGreaterThanOrEqual(5);
    expect(rows.some((r) => r.operation_id === 'integrations.select_tenants' && r.outcome === 'success')).toBe(true);
    expect(JSON.stringify(rows)).not.toContain(FAKE_API_KEY);
  });
});
