// The internal tenant endpoints: a token holding internal.tenant.read, or the deprecated
// shared key (X-Internal-Key) when configured; the token wins when both arrive; a 403
// does not name the permission; the key opens no other route and is never logged.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/support/app.js';
import { createOrganization, createPrincipal, type Principal } from '../../../test/support/identity.js';

const KEY = 'internal-shared-key-0123456789abcdef';
const ENV = { NODE_ENV: 'test', WEIR_TOKEN_RATE_LIMIT: '100000' };

let t: TestApp;
let noKey: TestApp;
let orgA: number;
let orgB: number;
let platform: Principal;
let adminA: Principal;
let operatorA: Principal;

async function mapOrganization(app: TestApp, id: number, caseCustomer: string, partners: string[]): Promise<void> {
  await app.container.database.db
    .updateTable('organizations')
    .set({ case_customer_id: caseCustomer, partner_tenant_ids: JSON.stringify(partners) })
    .where('id', '=', id)
    .execute();
}

beforeAll(async () => {
  [t, noKey] = await Promise.all([
    createTestApp({ env: { ...ENV, WEIR_INTERNAL_KEY: KEY }, captureLogs: true }),
    createTestApp({ env: ENV }),
  ]);
  orgA = await createOrganization(t, 'Tenant A');
  orgB = await createOrganization(t, 'Tenant B');
  await mapOrganization(t, orgA, 'CASE-A', ['partner-a1', 'partner-a2']);
  await mapOrganization(t, orgB, 'CASE-B', ['partner-b']);
  platform = await createPrincipal(t, { role: 'admin' });
  adminA = await createPrincipal(t, { role: 'admin', organizationId: orgA });
  operatorA = await createPrincipal(t, { role: 'operator', organizationId: orgA });
});
afterAll(async () => {
  await t?.close();
  await noKey?.close();
});

const get = (app: TestApp, url: string, headers: Record<string, string> = {}) =>
  app.app.inject({ method: 'GET', url, headers });
const tenantA = () => ({
  organization_id: orgA,
  name: 'Tenant A',
  is_active: true,
  case_customer_id: 'CASE-A',
  partner_tenant_ids: ['partner-a1', 'partner-a2'],
  credential_path: `weir/organizations/${orgA}/credentials`,
});

describe('with a token', () => {
  it('answers the three lookups to a holder of internal.tenant.read', async () => {
    expect((await get(t, `/api/internal/tenants/${orgA}`, platform.headers)).json()).toEqual(tenantA());
    expect((await get(t, '/api/internal/tenants/by-case-customer/CASE-A', platform.headers)).json()).toEqual(tenantA());
    expect((await get(t, '/api/internal/tenants/by-partner-tenant/partner-a2', platform.headers)).json()).toEqual(
      tenantA(),
    );
    expect((await get(t, '/api/internal/tenants/by-partner-tenant/partner-b', platform.headers)).json()).toMatchObject({
      organization_id: orgB,
    });
  });

  it('answers 404 for unknown identifiers and for organizations outside the scope', async () => {
    expect((await get(t, '/api/internal/tenants/999999', platform.headers)).statusCode).toBe(404);
    expect((await get(t, '/api/internal/tenants/by-case-customer/NOPE', platform.headers)).statusCode).toBe(404);
    expect((await get(t, '/api/internal/tenants/by-partner-tenant/partner', platform.headers)).statusCode).toBe(404);
    // An organization admin holds the permission but sees only its organization.
    expect((await get(t, '/api/internal/tenants/by-case-customer/CASE-A', adminA.headers)).statusCode).toBe(200);
    expect((await get(t, `/api/internal/tenants/${orgB}`, adminA.headers)).statusCode).toBe(404);
    expect((await get(t, '/api/internal/tenants/by-case-customer/CASE-B', adminA.headers)).statusCode).toBe(404);
  });

  it('refuses a token without the permission with a 403 that does not name it', async () => {
    const res = await get(t, `/api/internal/tenants/${orgA}`, operatorA.headers);
    expect(res.statusCode).toBe(403);
    expect(res.body).not.toContain('internal.tenant.read');
    expect(res.json().error.code).toBe('auth.forbidden');
  });

  it('validates the organization id', async () => {
    expect((await get(t, '/api/internal/tenants/abc', platform.headers)).statusCode).toBe(422);
  });
});

describe('with the shared key', () => {
  it('answers when the key is configured and right', async () => {
    expect((await get(t, `/api/internal/tenants/${orgB}`, { 'x-internal-key': KEY })).json()).toMatchObject({
      organization_id: orgB,
      case_customer_id: 'CASE-B',
    });
    expect((await get(t, '/api/internal/tenants/by-case-customer/CASE-A', { 'X-Internal-Key': KEY })).json()).toEqual(
      tenantA(),
    );
  });

  it('answers 401 for a wrong key', async () => {
    for (const wrong of [`${KEY}x`, KEY.slice(1), 'nope', '']) {
      const res = await get(t, `/api/internal/tenants/${orgA}`, { 'x-internal-key': wrong });
      expect(res.statusCode, wrong).toBe(401);
    }
  });

  it('answers 401 when no key is configured', async () => {
    const org = await createOrganization(noKey, 'Keyless');
    expect((await get(noKey, `/api/internal/tenants/${org}`, { 'x-internal-key': KEY })).statusCode).toBe(401);
    expect((await get(noKey, `/api/internal/tenants/${org}`, { 'x-internal-key': '' })).statusCode).toBe(401);
  });

  it('opens no route other than the internal ones', async () => {
    for (const url of ['/api/organizations/', `/api/organizations/${orgA}`, '/api/licenses/status']) {
      expect((await get(t, url, { 'x-internal-key': KEY })).statusCode, url).toBe(401);
    }
  });

  it('loses to a token: a valid token without the permission is 403 even with a valid key', async () => {
    const res = await get(t, `/api/internal/tenants/${orgA}`, { ...operatorA.headers, 'x-internal-key': KEY });
    expect(res.statusCode).toBe(403);
    expect(res.body).not.toContain('internal.tenant.read');
    // The token's scope applies, not the key's global one.
    expect(
      (await get(t, `/api/internal/tenants/${orgB}`, { ...adminA.headers, 'x-internal-key': KEY })).statusCode,
    ).toBe(404);
    // An invalid token is 401 at once, with no fall back to the key.
    expect(
      (await get(t, `/api/internal/tenants/${orgA}`, { authorization: 'Bearer svcsk_wrong', 'x-internal-key': KEY }))
        .statusCode,
    ).toBe(401);
  });

  it('never writes the key to the logs', () => {
    expect(t.logs.length).toBeGreaterThan(0);
    expect(JSON.stringify(t.logs)).not.toContain(KEY);
  });
});
