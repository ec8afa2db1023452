// Licenses and the edition through HTTP: activation (valid, invalid and never stored,
// expired in grace, past grace), removal, the change visible at once, the organization
// ceiling of each edition, and the requireEnterprise helper.
import { generateKeyPairSync } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintLicense } from '../../../scripts/mint-license.js';
import { createTestApp, type TestApp } from '../../../test/support/app.js';
import { createOrganization, createPrincipal, type Principal } from '../../../test/support/identity.js';
import { loadConfig } from '../../config.js';
import { isAppError } from '../../core/errors.js';
import { trustedLicenseKeys } from './keys.js';
import { COMMUNITY_ORG_LIMIT, evaluate, verifyLicense } from './service.js';

let t: TestApp;
let platform: Principal;
let orgAdmin: Principal;
let viewer: Principal;

beforeAll(async () => {
  t = await createTestApp({ env: { WEIR_TOKEN_RATE_LIMIT: '100000' } });
  const org = await createOrganization(t, 'Licensed Org');
  platform = await createPrincipal(t, { role: 'admin' });
  orgAdmin = await createPrincipal(t, { role: 'admin', organizationId: org });
  viewer = await createPrincipal(t, { role: 'viewer', organizationId: org });
});
afterAll(async () => t?.close());

const status = async (who: Principal = viewer) =>
  (await t.app.inject({ method: 'GET', url: '/api/licenses/status', headers: who.headers })).json();
const edition = async (who: Principal = viewer) =>
  (await t.app.inject({ method: 'GET', url: '/api/edition', headers: who.headers })).json();
const activate = (license_token: string, who: Principal = platform) =>
  t.app.inject({ method: 'POST', url: '/api/licenses/activate', headers: who.headers, payload: { license_token } });
const removeLicense = (who: Principal = platform) =>
  t.app.inject({ method: 'DELETE', url: '/api/licenses', headers: who.headers });
const createOrg = (name: string) =>
  t.app.inject({ method: 'POST', url: '/api/organizations/', headers: platform.headers, payload: { name } });
const licenseRows = async () => t.container.database.db.selectFrom('licenses').selectAll().orderBy('id').execute();

const COMMUNITY_STATUS = {
  edition: 'community',
  status: 'community',
  expires_at: null,
  expired_in_grace: false,
  grace_days: 0,
  org_limit: COMMUNITY_ORG_LIMIT,
  features: [],
};

describe('without a license', () => {
  it('runs Community for any authenticated caller', async () => {
    expect(await status()).toEqual(COMMUNITY_STATUS);
    expect(await edition()).toEqual({ edition: 'community', features: [] });
    expect((await t.app.inject({ method: 'GET', url: '/api/edition' })).statusCode).toBe(401);
  });

  it('refuses Enterprise-only features through the one helper', async () => {
    const err = await t.container.editions.requireEnterprise('Source sharing').catch((e: unknown) => e);
    expect(isAppError(err) && err.code).toBe('edition.enterprise_required');
    expect(isAppError(err) && err.status).toBe(403);
    expect(isAppError(err) && err.message).toContain('Source sharing');
  });
});

describe('POST /api/licenses/activate', () => {
  it('needs user.manage and global scope', async () => {
    const token = await mintLicense();
    const byOrgAdmin = await activate(token, orgAdmin);
    expect(byOrgAdmin.statusCode).toBe(403);
    expect(byOrgAdmin.json().detail).toMatch(/global/);
    const byViewer = await activate(token, viewer);
    expect(byViewer.statusCode).toBe(403);
    expect(byViewer.json().detail).toContain('user.manage');
    expect(await licenseRows()).toEqual([]);
  });

  it('refuses invalid tokens with 400 license.invalid and stores nothing', async () => {
    const { privateKey: stranger } = generateKeyPairSync('ed25519');
    const cases = {
      garbage: 'not-a-license',
      'untrusted key': await mintLicense({ privateKey: stranger }),
      'untrusted key claiming the test kid': await mintLicense({ privateKey: stranger, kid: 'weir-license-test' }),
      'community edition': await mintLicense({ edition: 'community' }),
      'zero org limit': await mintLicense({ orgLimit: 0 }),
      'no expiry': await mintLicense({ claims: { expires_at: undefined } }),
      'bad expiry': await mintLicense({ claims: { expires_at: 'tomorrow' } }),
      'bad features': await mintLicense({ claims: { features: 'all' } }),
      'past grace': await mintLicense({ days: -30, graceDays: 14 }),
    };
    for (const [name, token] of Object.entries(cases)) {
      const res = await activate(token);
      expect(res.statusCode, name).toBe(400);
      expect(res.json().error.code, name).toBe('license.invalid');
      expect(res.json().detail, name).not.toContain(token);
    }
    expect((await activate(cases['past grace'])).json().detail).toMatch(/grace period of 14 days has ended/);
    // A tampered payload under a valid signature.
    const [h, , s] = (await mintLicense({ orgLimit: 5 })).split('.');
    const forged = `${h}.${Buffer.from(JSON.stringify({ edition: 'enterprise', org_limit: 5000, expires_at: '2099-01-01T00:00:00Z' })).toString('base64url')}.${s}`;
    expect((await activate(forged)).statusCode).toBe(400);
    expect(await licenseRows()).toEqual([]);
    expect(await status()).toEqual(COMMUNITY_STATUS);
    expect((await activate('')).statusCode).toBe(422);
  });

  it('activates a valid license: Enterprise at once, audited without the token', async () => {
    // Warm the cached edition first: the change must still be visible on the next call.
    expect(await edition()).toEqual({ edition: 'community', features: [] });
    const token = await mintLicense({ orgLimit: 50, days: 365, graceDays: 14, features: ['a', 'b'] });
    const res = await activate(token);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({
      edition: 'enterprise',
      status: 'active',
      expired_in_grace: false,
      grace_days: 14,
      org_limit: 50,
      features: ['a', 'b'],
    });
    expect(body.expires_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/);
    expect(JSON.stringify(body)).not.toContain(token);
    expect(await edition()).toEqual({ edition: 'enterprise', features: ['a', 'b'] });
    expect(await status()).toEqual(body);
    await expect(t.container.editions.requireEnterprise('Source sharing')).resolves.toMatchObject({
      edition: 'enterprise',
    });
    const audit = await t.container.database.db
      .selectFrom('audit_log')
      .select(['outcome', 'target_type', 'details'])
      .where('operation_id', '=', 'licenses.activate')
      .where('outcome', '=', 'success')
      .execute();
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ target_type: 'license', details: { org_limit: 50, edition: 'enterprise' } });
    expect(JSON.stringify(audit)).not.toContain(token);
  });

  it('replaces the previous license, which stays as history', async () => {
    const res = await activate(await mintLicense({ orgLimit: 20, features: ['c'] }));
    expect(res.json()).toMatchObject({ org_limit: 20, features: ['c'] });
    const rows = await licenseRows();
    expect(rows.filter((r) => r.removed_at === null)).toHaveLength(1);
    expect(rows.length).toBeGreaterThanOrEqual(2);
    expect(await edition()).toEqual({ edition: 'enterprise', features: ['c'] });
  });

  it('accepts a license expired within its grace period: still Enterprise, flagged', async () => {
    const res = await activate(await mintLicense({ days: -2, graceDays: 14, orgLimit: 30 }));
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      edition: 'enterprise',
      status: 'expired_in_grace',
      expired_in_grace: true,
      grace_days: 14,
      org_limit: 30,
    });
    expect(await status()).toMatchObject({ status: 'expired_in_grace', expired_in_grace: true });
    expect((await edition()).edition).toBe('enterprise');
  });
});

describe('the stored license', () => {
  it('falls back to Community once past its grace period', async () => {
    const token = await mintLicense({ days: -20, graceDays: 5 });
    await t.container.database.db
      .updateTable('licenses')
      .set({ removed_at: new Date() })
      .where('removed_at', 'is', null)
      .execute();
    await t.container.database.db
      .insertInto('licenses')
      .values({ token, edition: 'enterprise', claims: JSON.stringify({}) })
      .execute();
    await t.container.editions.invalidate();
    const s = await status();
    expect(s).toMatchObject({
      edition: 'community',
      status: 'community',
      expired_in_grace: false,
      grace_days: 5,
      org_limit: COMMUNITY_ORG_LIMIT,
      features: [],
    });
    expect(s.expires_at).not.toBeNull();
    expect((await edition()).edition).toBe('community');
  });

  it('grants nothing when the row was written around the API with an unverifiable token', async () => {
    await t.container.database.db
      .updateTable('licenses')
      .set({ removed_at: new Date() })
      .where('removed_at', 'is', null)
      .execute();
    await t.container.database.db
      .insertInto('licenses')
      .values({
        token: 'forged',
        edition: 'enterprise',
        claims: JSON.stringify({ edition: 'enterprise', org_limit: 9999 }),
      })
      .execute();
    await t.container.editions.invalidate();
    expect(await status()).toEqual(COMMUNITY_STATUS);
  });
});

describe('DELETE /api/licenses', () => {
  it('needs global scope, returns to Community at once and is idempotent', async () => {
    expect((await activate(await mintLicense({ features: ['x'] }))).statusCode).toBe(200);
    expect((await edition()).edition).toBe('enterprise');
    expect((await removeLicense(orgAdmin)).statusCode).toBe(403);
    const res = await removeLicense();
    expect(res.statusCode).toBe(204);
    expect(res.body).toBe('');
    expect(await edition()).toEqual({ edition: 'community', features: [] });
    expect(await status()).toEqual(COMMUNITY_STATUS);
    expect((await licenseRows()).filter((r) => r.removed_at === null)).toEqual([]);
    expect((await removeLicense()).statusCode).toBe(204);
  });
});

describe('the organization ceiling', () => {
  it('holds Community to its limit and an Enterprise license to its org_limit', async () => {
    const existing = Number(
      (
        await t.container.database.db
          .selectFrom('organizations')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );
    for (let i = existing; i < COMMUNITY_ORG_LIMIT; i++) expect((await createOrg(`Ceiling ${i}`)).statusCode).toBe(201);
    const refused = await createOrg('One Too Many');
    expect(refused.statusCode).toBe(403);
    expect(refused.json().error.code).toBe('edition.org_limit_reached');
    expect(refused.json().detail).toContain(`at most ${COMMUNITY_ORG_LIMIT} organizations`);
    expect(refused.json().error.details).toMatchObject({ edition: 'community', org_limit: COMMUNITY_ORG_LIMIT });

    expect((await activate(await mintLicense({ orgLimit: COMMUNITY_ORG_LIMIT + 2 }))).statusCode).toBe(200);
    expect((await createOrg('Enterprise 1')).statusCode).toBe(201);
    expect((await createOrg('Enterprise 2')).statusCode).toBe(201);
    const beyond = await createOrg('Enterprise 3');
    expect(beyond.statusCode).toBe(403);
    expect(beyond.json().detail).toContain(`Enterprise license allows at most ${COMMUNITY_ORG_LIMIT + 2}`);

    expect((await removeLicense()).statusCode).toBe(204);
    expect((await createOrg('Back To Community')).statusCode).toBe(403);
  });
});

describe('license rules (small)', () => {
  const day = 86_400_000;
  const claims = {
    edition: 'enterprise' as const,
    org_limit: 3,
    expires_at: '2026-01-10T00:00:00.000Z',
    grace_days: 2,
    features: [],
  };

  it('moves from active to expired_in_grace to Community', () => {
    const at = (iso: string) => evaluate(claims, new Date(iso));
    expect(at('2026-01-09T23:59:59Z')).toMatchObject({
      edition: 'enterprise',
      status: 'active',
      expiredInGrace: false,
      orgLimit: 3,
    });
    expect(at('2026-01-10T00:00:00Z')).toMatchObject({
      edition: 'enterprise',
      status: 'expired_in_grace',
      expiredInGrace: true,
    });
    expect(evaluate(claims, new Date(Date.parse(claims.expires_at) + 2 * day - 1))).toMatchObject({
      status: 'expired_in_grace',
    });
    expect(evaluate(claims, new Date(Date.parse(claims.expires_at) + 2 * day))).toMatchObject({
      edition: 'community',
      status: 'community',
      orgLimit: COMMUNITY_ORG_LIMIT,
    });
    expect(evaluate(null, new Date())).toMatchObject({ edition: 'community', expiresAt: null });
  });

  it('trusts the test key only when the configuration allows it', async () => {
    const token = await mintLicense();
    await expect(verifyLicense(token, await trustedLicenseKeys({ trustTestLicenses: true }))).resolves.toMatchObject({
      edition: 'enterprise',
    });
    await expect(verifyLicense(token, await trustedLicenseKeys({ trustTestLicenses: false }))).rejects.toMatchObject({
      code: 'license.invalid',
    });
  });

  it('is never trusted by a server configured from its environment, NODE_ENV=test included', async () => {
    const server = await createTestApp({
      env: { NODE_ENV: 'test', WEIR_TOKEN_RATE_LIMIT: '100000' },
      trustTestLicenses: false,
    });
    try {
      expect(loadConfig({ NODE_ENV: 'test', WEIR_SECRET_KEY: 'x'.repeat(32) }).trustTestLicenses).toBe(false);
      const admin = await createPrincipal(server, { role: 'admin' });
      const res = await server.app.inject({
        method: 'POST',
        url: '/api/licenses/activate',
        headers: admin.headers,
        payload: { license_token: await mintLicense({ orgLimit: 50 }) },
      });
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json()).toMatchObject({ error: { code: 'license.invalid' } });
      expect(
        (await server.app.inject({ method: 'GET', url: '/api/edition', headers: admin.headers })).json(),
      ).toMatchObject({ edition: 'community' });
    } finally {
      await server.close();
    }
  });
});
