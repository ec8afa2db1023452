// The identity configuration: validation, write-only secrets, permissions, the provider test.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/support/app.js';
import { createOrganization, createPrincipal, type Principal } from '../../../test/support/identity.js';
import { startOidcProvider, type OidcTestProvider } from '../../../test/support/oidc-provider.js';
import { firstMatch, globToRegExp } from './rules.js';
import { safeReturnPath } from './sso.js';

const SECRET = 'client-secret-that-must-never-show';
const SCIM_TOKEN = 'scim-token-that-must-never-show';
let t: TestApp;
let idp: OidcTestProvider;
let admin: Principal;
let org: number;

const body = (overrides: Record<string, unknown> = {}): Record<string, unknown> => ({
  enabled: true,
  issuer: idp.issuer,
  client_id: 'weir',
  client_secret: SECRET,
  redirect_uri: 'https://weir.example.test/api/auth/sso/callback',
  rules: [{ claim: 'groups', match: 'equals', value: 'secops', organization_id: org, role: 'operator' }],
  ...overrides,
});
const put = (payload: unknown, headers = admin.headers) =>
  t.app.inject({ method: 'PUT', url: '/api/identity/config', headers, payload: payload as object });

beforeAll(async () => {
  t = await createTestApp({ captureLogs: true });
  admin = await createPrincipal(t, { role: 'admin' });
  org = await createOrganization(t, 'identity-org');
  idp = await startOidcProvider({
    clients: [
      { client_id: 'weir', client_secret: SECRET, redirect_uris: ['https://weir.example.test/api/auth/sso/callback'] },
    ],
    accounts: {},
  });
}, 60_000);

afterAll(async () => {
  await t?.close();
  await idp?.close();
});

describe('rules', () => {
  it('matches equals, contains and glob; first match wins; no match is null', () => {
    const rules = [
      { claim: 'groups', match: 'contains', value: 'admins', organization_id: null, role: 'admin' },
      { claim: 'email', match: 'glob', value: '*@corp.example', organization_id: 1, role: 'viewer' },
      { claim: 'dept', match: 'equals', value: 'soc', organization_id: 2, role: 'operator' },
    ] as const;
    expect(firstMatch([...rules], { groups: ['staff', 'admins'], email: 'a@corp.example' })?.index).toBe(0);
    expect(firstMatch([...rules], { groups: ['staff'], email: 'a@corp.example' })?.index).toBe(1);
    expect(firstMatch([...rules], { dept: 'soc' })?.index).toBe(2);
    expect(firstMatch([...rules], { dept: 'soc-2', email: 'a@corp.example.evil' })).toBeNull();
    expect(globToRegExp('soc-?.*').test('soc-1.x')).toBe(true);
    expect(globToRegExp('a.b').test('axb')).toBe(false);
  });

  it('accepts only relative return paths', () => {
    expect(safeReturnPath(undefined)).toBe('/');
    expect(safeReturnPath('/a/b?c=1#d')).toBe('/a/b?c=1#d');
    for (const bad of ['//x.example', 'https://x.example', '/\\x.example', 'x', '/a\nb'])
      expect(safeReturnPath(bad)).toBeNull();
  });
});

describe('identity configuration', () => {
  it('answers an unconfigured state, and a clear 409 for test and sync before one is saved', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/identity/config', headers: admin.headers });
    expect(res.json()).toMatchObject({ configured: false, enabled: false, client_secret_set: false, rules: [] });
    for (const url of ['/api/identity/config/test', '/api/identity/config/sync']) {
      const r = await t.app.inject({ method: 'POST', url, headers: admin.headers });
      expect(r.statusCode).toBe(409);
      expect(r.json().detail).toMatch(/No identity provider is configured/);
    }
  });

  it('is for global user managers only', async () => {
    const orgAdmin = await createPrincipal(t, { role: 'admin', organizationId: org });
    const operator = await createPrincipal(t, { role: 'operator' });
    for (const p of [orgAdmin, operator]) {
      expect((await t.app.inject({ method: 'GET', url: '/api/identity/config', headers: p.headers })).statusCode).toBe(
        403,
      );
      expect((await put(body(), p.headers)).statusCode).toBe(403);
    }
  });

  it('validates rules, URLs and scopes with locations', async () => {
    const badRole = await put(
      body({ rules: [{ claim: 'groups', match: 'equals', value: 'x', organization_id: org, role: 'superuser' }] }),
    );
    expect(badRole.statusCode).toBe(422);
    const badOrg = await put(
      body({ rules: [{ claim: 'groups', match: 'equals', value: 'x', organization_id: 987654, role: 'viewer' }] }),
    );
    expect(badOrg.statusCode).toBe(422);
    expect(badOrg.json().error.details.errors).toEqual([
      { location: 'body/rules/0/organization_id', message: 'organization 987654 does not exist' },
    ]);
    const badMatch = await put(
      body({ rules: [{ claim: 'groups', match: 'regex', value: 'x', organization_id: null, role: 'viewer' }] }),
    );
    expect(badMatch.statusCode).toBe(422);
    const plain = await put(body({ issuer: 'http://idp.example.test' }));
    expect(plain.statusCode).toBe(422);
    expect(plain.json().detail).toMatch(/body\/issuer: must be an https/);
    const noOpenid = await put(body({ scopes: ['email'] }));
    expect(noOpenid.json().error.details.errors).toContainEqual({
      location: 'body/scopes',
      message: 'must include openid',
    });
    const scimNoToken = await put(body({ scim_base_url: 'https://scim.example.test/v2' }));
    expect(scimNoToken.json().error.details.errors).toContainEqual({
      location: 'body/scim_token',
      message: 'is required with scim_base_url',
    });
  });

  it('keeps the client secret and SCIM token write-only: never answered, logged or audited; kept when omitted', async () => {
    const res = await put(body({ scim_base_url: 'https://scim.example.test/v2', scim_token: SCIM_TOKEN }));
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({
      configured: true,
      client_secret_set: true,
      scim_token_set: true,
      scopes: ['openid', 'email', 'profile'],
      username_claim: 'preferred_username',
    });
    const { client_secret: _s, scim_token: _t, ...rest } = body({ scim_base_url: 'https://scim.example.test/v2' });
    const again = await put(rest);
    expect(again.json()).toMatchObject({ client_secret_set: true, scim_token_set: true });
    const row = await t.container.database.db.selectFrom('identity_config').selectAll().executeTakeFirstOrThrow();
    expect(row.client_secret).not.toContain(SECRET);
    const audit = await t.container.database.db
      .selectFrom('audit_log')
      .selectAll()
      .where('operation_id', '=', 'identity.update_config')
      .where('outcome', '=', 'success')
      .execute();
    expect(audit.length).toBeGreaterThanOrEqual(2);
    expect(audit[0]!.details).toMatchObject({ changed: expect.arrayContaining(['client_secret_set', 'rules']) });
    const everything = JSON.stringify([
      res.json(),
      again.json(),
      audit,
      t.logs,
      (await t.app.inject({ method: 'GET', url: '/api/identity/config', headers: admin.headers })).json(),
    ]);
    expect(everything).not.toContain(SECRET);
    expect(everything).not.toContain(SCIM_TOKEN);
    // null removes the secret (a public client).
    expect((await put({ ...rest, client_secret: null })).json()).toMatchObject({ client_secret_set: false });
    expect((await put(body())).json()).toMatchObject({
      client_secret_set: true,
      scim_token_set: false,
      scim_base_url: null,
    });
  });

  it('tests discovery and the JWKS against the provider, step by step', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/api/identity/config/test', headers: admin.headers });
    expect(res.statusCode).toBe(200);
    expect(res.json().ok).toBe(true);
    expect(res.json().steps.map((s: { step: string; ok: boolean }) => [s.step, s.ok])).toEqual([
      ['discovery', true],
      ['jwks', true],
    ]);
  });

  it('answers 200 with each failed step when the provider is not there', async () => {
    await put(body({ issuer: 'http://127.0.0.1:9/' }));
    const res = await t.app.inject({ method: 'POST', url: '/api/identity/config/test', headers: admin.headers });
    expect(res.statusCode).toBe(200);
    expect(res.json().ok).toBe(false);
    expect(res.json().steps[0]).toMatchObject({ step: 'discovery', ok: false });
    expect(res.json().steps[0].error).toMatch(/fetch failed|ECONNREFUSED/);
    expect(res.json().steps[1]).toMatchObject({ step: 'jwks', ok: false });
  });
});

describe('a secret that no longer decrypts', () => {
  it('answers a clear 4xx from the test and the sign-in, never a 5xx', async () => {
    await put(body());
    await t.container.database.db
      .updateTable('identity_config')
      .set({ client_secret_key_id: 'feedfacefeedface' })
      .execute();
    const test = await t.app.inject({ method: 'POST', url: '/api/identity/config/test', headers: admin.headers });
    expect(test.statusCode).toBe(409);
    expect(test.json().detail).toMatch(/client secret cannot be decrypted.*save the identity configuration again/);
    const login = await t.app.inject({ method: 'GET', url: '/api/auth/sso/login' });
    expect(login.statusCode).toBe(409);
    expect((await t.app.inject({ method: 'GET', url: '/api/auth/status' })).statusCode).toBe(200);
    expect((await put(body())).statusCode).toBe(200);
  });
});

describe('the SSRF guard', () => {
  it('refuses a loopback issuer when the outbound policy does not allow loopback', async () => {
    const strict = await createTestApp({ env: { WEIR_OUTBOUND_ALLOW_CIDRS: '' } });
    try {
      const a = await createPrincipal(strict, { role: 'admin' });
      const plain = await strict.app.inject({
        method: 'PUT',
        url: '/api/identity/config',
        headers: a.headers,
        payload: body(),
      });
      expect(plain.statusCode).toBe(422);
      expect(plain.json().detail).toMatch(/loopback address the outbound policy allows/);
      // An https issuer on a loopback address is saved, but no connection is made to it.
      const https = await strict.app.inject({
        method: 'PUT',
        url: '/api/identity/config',
        headers: a.headers,
        payload: { ...body(), issuer: 'https://127.0.0.1:9443/', rules: [] },
      });
      expect(https.statusCode, https.body).toBe(200);
      const res = await strict.app.inject({ method: 'POST', url: '/api/identity/config/test', headers: a.headers });
      expect(res.json().steps[0].error).toMatch(/refused to connect to 127\.0\.0\.1: loopback address/);
    } finally {
      await strict.close();
    }
  });
});
