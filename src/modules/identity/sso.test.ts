// Single sign-on against a real OpenID Connect provider (oidc-provider on a loopback port).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { manualClock } from '../../core/clock.js';
import { createTestApp, type TestApp } from '../../../test/support/app.js';
import { createOrganization, createPrincipal, type Principal } from '../../../test/support/identity.js';
import { startOidcProvider, type OidcTestProvider } from '../../../test/support/oidc-provider.js';

const REDIRECT = 'http://127.0.0.1:8080/api/auth/sso/callback';
const clock = manualClock(new Date());
let t: TestApp;
let idp: OidcTestProvider;
let admin: Principal;
let orgA: number;
let orgB: number;
let bootstrapId: number;

function config(overrides: Record<string, unknown> = {}) {
  return {
    enabled: true,
    issuer: idp.issuer,
    client_id: 'weir',
    client_secret: 'weir-client-secret',
    scopes: ['openid', 'email', 'profile', 'groups'],
    redirect_uri: REDIRECT,
    username_claim: 'preferred_username',
    rules: [
      { claim: 'groups', match: 'contains', value: 'secops', organization_id: orgA, role: 'operator' },
      { claim: 'groups', match: 'glob', value: 'soc-*', organization_id: orgB, role: 'viewer' },
      { claim: 'email', match: 'glob', value: '*@platform.example.test', organization_id: null, role: 'admin' },
    ],
    ...overrides,
  };
}

/** The browser's round trip: Weir's login, the provider's sign-in, back at the callback URL (not yet called). */
async function toCallback(account: string, returnTo?: string): Promise<URL> {
  clock.set(new Date());
  const start = await t.app.inject({
    method: 'GET',
    url: '/api/auth/sso/login',
    query: returnTo ? { return_to: returnTo } : {},
  });
  expect(start.statusCode, start.body).toBe(302);
  return idp.signIn(String(start.headers.location), account);
}

const callback = (url: URL) => t.app.inject({ method: 'GET', url: `${url.pathname}${url.search}` });

async function login(account: string, returnTo?: string) {
  return callback(await toCallback(account, returnTo));
}

function sessionCookie(res: { headers: Record<string, unknown> }): string {
  const raw = res.headers['set-cookie'];
  const all = Array.isArray(raw) ? raw : [String(raw)];
  const c = all.find((x: string) => x.startsWith('weir_session='));
  expect(c).toBeDefined();
  return c!;
}

beforeAll(async () => {
  t = await createTestApp({ clock, captureLogs: true });
  // The bootstrap administrator: the first user.
  const boot = await t.app.inject({
    method: 'POST',
    url: '/api/auth/bootstrap',
    payload: { username: 'root', password: 'root-password-1', email: 'root@example.test' },
  });
  expect(boot.statusCode).toBe(201);
  bootstrapId = boot.json().id;
  admin = await createPrincipal(t, { role: 'admin' });
  orgA = await createOrganization(t, 'sso-a');
  orgB = await createOrganization(t, 'sso-b');
  idp = await startOidcProvider({
    clients: [
      { client_id: 'weir', client_secret: 'weir-client-secret', redirect_uris: [REDIRECT] },
      { client_id: 'other-app', client_secret: 'other-secret', redirect_uris: ['http://127.0.0.1:9090/cb'] },
    ],
    accounts: {
      alice: { preferred_username: 'alice', email: 'alice@example.test', groups: ['secops', 'staff'] },
      bob: { preferred_username: 'bob', email: 'bob@example.test', groups: ['soc-tier1'] },
      pat: { preferred_username: 'pat', email: 'pat@platform.example.test', groups: [] },
      mallory: { preferred_username: 'mallory', email: 'mallory@example.test', groups: ['marketing'] },
      root: { preferred_username: 'root', email: 'root@example.test', groups: ['secops'] },
    },
    idTokenTtlSeconds: 60,
  });
  const put = await t.app.inject({
    method: 'PUT',
    url: '/api/identity/config',
    headers: admin.headers,
    payload: config(),
  });
  expect(put.statusCode, put.body).toBe(200);
}, 60_000);

afterAll(async () => {
  await t?.close();
  await idp?.close();
});

describe('single sign-on', () => {
  it('says SSO is available in the status', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/auth/status' });
    expect(res.json()).toMatchObject({ sso_enabled: true, login_methods: ['password', 'sso'] });
  });

  it('redirects to the provider with PKCE S256, state and nonce', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/auth/sso/login' });
    expect(res.statusCode).toBe(302);
    const url = new URL(String(res.headers.location));
    expect(url.origin).toBe(idp.issuer);
    expect(url.searchParams.get('code_challenge_method')).toBe('S256');
    expect(url.searchParams.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(url.searchParams.get('state')).toBeTruthy();
    expect(url.searchParams.get('nonce')).toBeTruthy();
    expect(url.searchParams.get('redirect_uri')).toBe(REDIRECT);
  });

  it('signs a user in just in time: the session cookie works and the browser lands on the return path', async () => {
    const res = await login('alice', '/cases?view=mine');
    expect(res.statusCode, res.body).toBe(302);
    expect(res.headers.location).toBe('/cases?view=mine');
    const cookie = sessionCookie(res);
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Lax/);
    const me = await t.app.inject({ method: 'GET', url: '/api/auth/me', headers: { cookie: cookie.split(';')[0]! } });
    expect(me.statusCode).toBe(200);
    expect(me.json()).toMatchObject({
      kind: 'user',
      username: 'alice',
      email: 'alice@example.test',
      role: 'operator',
      organization_id: orgA,
      sso: true,
    });
    const row = await t.container.database.db
      .selectFrom('users')
      .selectAll()
      .where('username', '=', 'alice')
      .executeTakeFirstOrThrow();
    expect(row.sso_issuer).toBe(idp.issuer);
    expect(row.sso_subject).toBe('alice');
    expect((row.sso_claims as { groups: string[] }).groups).toEqual(['secops', 'staff']);
    const audit = await t.container.database.db
      .selectFrom('audit_log')
      .selectAll()
      .where('operation_id', '=', 'auth.sso_callback')
      .where('outcome', '=', 'success')
      .execute();
    expect(audit.at(-1)).toMatchObject({ actor_name: 'alice', target_type: 'user', target_id: String(row.id) });
    expect(audit.at(-1)!.details).toMatchObject({ created: true, role: 'operator' });
  });

  it('updates the same user on the next sign-in (issuer + subject), defaulting the return path to /', async () => {
    const res = await login('alice');
    expect(res.statusCode, res.body).toBe(302);
    expect(res.headers.location).toBe('/');
    const rows = await t.container.database.db
      .selectFrom('users')
      .select('id')
      .where('username', '=', 'alice')
      .execute();
    expect(rows).toHaveLength(1);
  });

  it('maps claims through the rules: different accounts land in different organizations and roles', async () => {
    const bob = await login('bob');
    expect(bob.statusCode, bob.body).toBe(302);
    const pat = await login('pat');
    expect(pat.statusCode, pat.body).toBe(302);
    const db = t.container.database.db;
    expect(
      await db.selectFrom('users').select(['role', 'organization_id']).where('username', '=', 'bob').executeTakeFirst(),
    ).toEqual({ role: 'viewer', organization_id: orgB });
    expect(
      await db.selectFrom('users').select(['role', 'organization_id']).where('username', '=', 'pat').executeTakeFirst(),
    ).toEqual({ role: 'admin', organization_id: null });
  });

  it('refuses a user whose claims match no rule (403), creating nothing', async () => {
    const res = await login('mallory');
    expect(res.statusCode).toBe(403);
    expect(res.json().detail).toMatch(/claims match no rule/);
    expect(
      await t.container.database.db
        .selectFrom('users')
        .select('id')
        .where('username', '=', 'mallory')
        .executeTakeFirst(),
    ).toBeUndefined();
    const audit = await t.container.database.db
      .selectFrom('audit_log')
      .selectAll()
      .where('operation_id', '=', 'auth.sso_callback')
      .orderBy('seq', 'desc')
      .executeTakeFirstOrThrow();
    expect(audit).toMatchObject({ outcome: 'failed', status: 403, error_code: 'sso.not_admitted' });
  });

  it('refuses a replayed state and a replayed code, and audits the failures without secrets', async () => {
    const url = await toCallback('alice');
    expect((await callback(url)).statusCode).toBe(302);
    const replay = await callback(url);
    expect(replay.statusCode).toBe(401);
    expect(replay.json().detail).toMatch(/already used/);

    // The same code with a fresh, valid state: the provider refuses the code.
    const fresh = await t.app.inject({ method: 'GET', url: '/api/auth/sso/login' });
    const state = new URL(String(fresh.headers.location)).searchParams.get('state')!;
    const code = url.searchParams.get('code')!;
    const res = await t.app.inject({
      method: 'GET',
      url: '/api/auth/sso/callback',
      query: { code, state, iss: idp.issuer },
    });
    expect(res.statusCode).toBe(401);
    expect(res.json().detail).toMatch(/invalid_grant/);

    const rows = await t.container.database.db
      .selectFrom('audit_log')
      .selectAll()
      .where('operation_id', '=', 'auth.sso_callback')
      .where('outcome', '=', 'failed')
      .execute();
    const text = JSON.stringify([rows, t.logs]);
    expect(t.logs.some((l) => String(l.url ?? '').startsWith('/api/auth/sso/callback'))).toBe(true);
    expect(text).not.toContain(code);
    expect(text).not.toContain(state);
  });

  it('refuses a bad state and a missing one', async () => {
    const bad = await t.app.inject({ method: 'GET', url: '/api/auth/sso/callback?code=abc&state=forged' });
    expect(bad.statusCode).toBe(401);
    expect(bad.json().detail).toMatch(/state/);
    const none = await t.app.inject({ method: 'GET', url: '/api/auth/sso/callback?code=abc' });
    expect(none.statusCode).toBe(401);
  });

  it("passes on the provider's error", async () => {
    const start = await t.app.inject({ method: 'GET', url: '/api/auth/sso/login' });
    const state = new URL(String(start.headers.location)).searchParams.get('state')!;
    const res = await t.app.inject({
      method: 'GET',
      url: '/api/auth/sso/callback',
      query: { state, error: 'access_denied', error_description: 'The user said no' },
    });
    expect(res.statusCode).toBe(401);
    expect(res.json().detail).toMatch(/access_denied.*The user said no/);
  });

  it("redacts the client secret from the provider's text, in the answer and the log, as an echo of the request carries it", async () => {
    const basic = Buffer.from('weir:weir-client-secret').toString('base64');
    const start = await t.app.inject({ method: 'GET', url: '/api/auth/sso/login' });
    const state = new URL(String(start.headers.location)).searchParams.get('state')!;
    const before = t.logs.length;
    const echo = `bad client: Authorization: Basic ${basic}; client_secret=weir-client-secret; raw weir-client-secret`;
    const res = await t.app.inject({
      method: 'GET',
      url: '/api/auth/sso/callback',
      query: { state, error: 'invalid_client', error_description: echo },
    });
    expect(res.statusCode).toBe(401);
    const detail = String(res.json().detail);
    expect(detail).toMatch(/invalid_client.*bad client/);
    expect(detail).toContain('[redacted]');
    const seen = `${res.body}\n${JSON.stringify(t.logs.slice(before))}`;
    for (const form of ['weir-client-secret', basic, basic.slice(0, 12)]) expect(seen).not.toContain(form);
  });

  it('refuses an expired ID token', async () => {
    const url = await toCallback('alice');
    // The provider's ID tokens live 60 s; five minutes later (the pending login lives ten) it has expired.
    clock.advance(5 * 60_000);
    const res = await callback(url);
    expect(res.statusCode).toBe(401);
    expect(res.json().detail).toMatch(/exp/);
  });

  it('refuses a pending login older than ten minutes', async () => {
    const url = await toCallback('alice');
    clock.advance(11 * 60_000);
    const res = await callback(url);
    expect(res.statusCode).toBe(401);
    expect(res.json().detail).toMatch(/expired/);
  });

  it('refuses an ID token issued for another client (wrong audience)', async () => {
    const url = await toCallback('alice');
    idp.rewriteNextIdToken = (claims) => ({ ...claims, aud: 'other-app', azp: 'other-app' });
    const res = await callback(url);
    expect(res.statusCode).toBe(401);
    expect(res.json().detail).toMatch(/aud/);
  });

  it("refuses an ID token not signed by the provider's key, and accepts one re-signed by it", async () => {
    const forged = await toCallback('alice');
    idp.forgeNextIdToken = true;
    const res = await callback(forged);
    expect(res.statusCode).toBe(401);
    expect(res.json().detail).toMatch(/signature/i);
    const resigned = await toCallback('alice');
    idp.rewriteNextIdToken = (claims) => claims;
    expect((await callback(resigned)).statusCode).toBe(302);
  });

  it('answers odd query strings on both public routes with a 4xx and a string detail', async () => {
    const urls = [
      '/api/auth/sso/callback?state=%00%ff&code=%2F..%2F',
      '/api/auth/sso/callback?state=a&state=b',
      '/api/auth/sso/callback?code[]=x&state=y',
      `/api/auth/sso/callback?state=${'s'.repeat(600)}`,
      '/api/auth/sso/callback?error=%F0%9F%92%A5&state=x',
      '/api/auth/sso/callback?unexpected=1&state=x&code=y',
      '/api/auth/sso/login?return_to=%00',
      '/api/auth/sso/login?return_to=/ok&extra=1',
      `/api/auth/sso/login?return_to=/${'a'.repeat(3000)}`,
    ];
    for (const url of urls) {
      const res = await t.app.inject({ method: 'GET', url });
      expect(res.statusCode, url).toBeGreaterThanOrEqual(400);
      expect(res.statusCode, url).toBeLessThan(500);
      expect(typeof res.json().detail, url).toBe('string');
    }
  });

  it('accepts only a relative return path (no open redirect)', async () => {
    for (const bad of ['https://evil.example/', '//evil.example/', '/\\evil.example', 'javascript:alert(1)', 'evil']) {
      const res = await t.app.inject({ method: 'GET', url: '/api/auth/sso/login', query: { return_to: bad } });
      expect(res.statusCode, bad).toBe(400);
      expect(typeof res.json().detail).toBe('string');
    }
  });

  it('turns password login off for SSO users, never for the bootstrap administrator', async () => {
    const alice = await t.container.database.db
      .selectFrom('users')
      .select('id')
      .where('username', '=', 'alice')
      .executeTakeFirstOrThrow();
    // An administrator gave alice a password; the bootstrap administrator is also linked to the provider.
    expect(
      (
        await t.app.inject({
          method: 'PUT',
          url: `/api/auth/users/${alice.id}`,
          headers: admin.headers,
          payload: { password: 'alice-password-1' },
        })
      ).statusCode,
    ).toBe(200);
    await t.container.database.db
      .updateTable('users')
      .set({ sso_issuer: idp.issuer, sso_subject: 'root' })
      .where('id', '=', bootstrapId)
      .execute();

    const allowed = await t.app.inject({
      method: 'POST',
      url: '/api/auth/login',
      payload: { username: 'alice', password: 'alice-password-1' },
    });
    expect(allowed.statusCode).toBe(200);

    expect(
      (
        await t.app.inject({
          method: 'PUT',
          url: '/api/identity/config',
          headers: admin.headers,
          payload: config({ password_login_for_sso_users: false }),
        })
      ).statusCode,
    ).toBe(200);
    const refused = await t.app.inject({
      method: 'POST',
      url: '/api/auth/login',
      payload: { username: 'alice', password: 'alice-password-1' },
    });
    expect(refused.statusCode).toBe(403);
    expect(refused.json().detail).toMatch(/Password login is turned off/);
    const wrong = await t.app.inject({
      method: 'POST',
      url: '/api/auth/login',
      payload: { username: 'alice', password: 'not-her-password' },
    });
    expect(wrong.statusCode).toBe(401);

    const root = await t.app.inject({
      method: 'POST',
      url: '/api/auth/login',
      payload: { username: 'root', password: 'root-password-1' },
    });
    expect(root.statusCode, root.body).toBe(200);
  });

  it('answers 404 once SSO is turned off', async () => {
    expect(
      (
        await t.app.inject({
          method: 'PUT',
          url: '/api/identity/config',
          headers: admin.headers,
          payload: config({ enabled: false }),
        })
      ).statusCode,
    ).toBe(200);
    const res = await t.app.inject({ method: 'GET', url: '/api/auth/sso/login' });
    expect(res.statusCode).toBe(404);
    expect((await t.app.inject({ method: 'GET', url: '/api/auth/status' })).json()).toMatchObject({
      sso_enabled: false,
      login_methods: ['password'],
    });
    expect(
      (await t.app.inject({ method: 'PUT', url: '/api/identity/config', headers: admin.headers, payload: config() }))
        .statusCode,
    ).toBe(200);
  });

  it('limits the sign-ins started per address (each stores a pending login)', async () => {
    let last = await t.app.inject({ method: 'GET', url: '/api/auth/sso/login', remoteAddress: '192.0.2.7' });
    for (let i = 0; i < 60 && last.statusCode === 302; i++)
      last = await t.app.inject({ method: 'GET', url: '/api/auth/sso/login', remoteAddress: '192.0.2.7' });
    expect(last.statusCode).toBe(429);
    expect(last.headers['retry-after']).toBeDefined();
    expect(
      (await t.app.inject({ method: 'GET', url: '/api/auth/sso/login', remoteAddress: '192.0.2.8' })).statusCode,
    ).toBe(302);
  });
});
