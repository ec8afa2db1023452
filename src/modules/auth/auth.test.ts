// The auth family through HTTP, part 1: bootstrap, status, login and its cookie, logout,
// sessions, the caller's own account, and how the credential is chosen (token vs cookie).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/support/app.js';
import { createOrganization, createPrincipal } from '../../../test/support/identity.js';
import { ROLE_PERMISSIONS } from '../../core/roles.js';
import { SESSION_COOKIE } from './sessions.js';

const ROOT = { username: 'root', password: 'root-password-1', email: 'root@example.test' };

let t: TestApp;
let orgA: number;
let rootCookie: string;
let addressSeq = 0;
// Every login from its own address, so the per-address limit only bites where tested.
const nextAddress = () => `10.0.${Math.floor(++addressSeq / 250)}.${addressSeq % 250}`;

beforeAll(async () => {
  t = await createTestApp({ captureLogs: true, env: { WEIR_TRUST_PROXY: 'true' } });
  orgA = await createOrganization(t, 'Org A');
});
afterAll(async () => t?.close());

type Headers = Record<string, string>;
const req = (
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE',
  url: string,
  opts: { headers?: Headers; cookie?: string; payload?: unknown; remoteAddress?: string } = {},
) =>
  t.app.inject({
    method,
    url,
    headers: opts.headers ?? {},
    remoteAddress: opts.remoteAddress ?? '127.0.0.1',
    ...(opts.cookie ? { cookies: { [SESSION_COOKIE]: opts.cookie } } : {}),
    ...(opts.payload !== undefined ? { payload: opts.payload as Record<string, unknown> } : {}),
  });

const login = (username: string, password: string, remoteAddress = nextAddress(), headers: Headers = {}) =>
  req('POST', '/api/auth/login', { payload: { username, password }, remoteAddress, headers });

async function session(username: string, password: string): Promise<string> {
  const res = await login(username, password);
  expect(res.statusCode, res.body).toBe(200);
  const c = res.cookies.find((x) => x.name === SESSION_COOKIE);
  return c?.value as string;
}

async function createUser(body: Record<string, unknown>): Promise<{ id: number; username: string }> {
  const res = await req('POST', '/api/auth/users', { cookie: rootCookie, payload: body });
  expect(res.statusCode, res.body).toBe(201);
  return res.json();
}

describe('bootstrap and status', () => {
  it('says not bootstrapped before the first user', async () => {
    const res = await req('GET', '/api/auth/status');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ bootstrapped: false, login_methods: ['password'], sso_enabled: false });
  });

  it('creates exactly one first administrator under concurrent calls', async () => {
    const answers = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        req('POST', '/api/auth/bootstrap', { payload: { ...ROOT, username: i === 0 ? ROOT.username : `root${i}` } }),
      ),
    );
    expect(answers.map((a) => a.statusCode).sort()).toEqual([201, 409, 409, 409, 409, 409]);
    const created = answers.find((a) => a.statusCode === 201)!;
    for (const refused of answers.filter((a) => a.statusCode === 409))
      expect(refused.json().error.code).toBe('auth.already_bootstrapped');
    const user = created.json();
    expect(user).toMatchObject({ role: 'admin', organization_id: null, is_active: true, last_login_at: null });
    expect(user.created_at).toMatch(/Z$/);
    expect(created.body).not.toMatch(/password|argon2/);
    const count = await t.container.database.db
      .selectFrom('users')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    expect(Number(count.n)).toBe(1);
    ROOT.username = user.username;
  });

  it('answers 409 once any user exists', async () => {
    const res = await req('POST', '/api/auth/bootstrap', {
      payload: { username: 'late', password: 'late-password', email: 'late@example.test' },
    });
    expect(res.statusCode).toBe(409);
    expect(typeof res.json().detail).toBe('string');
  });

  it('says bootstrapped afterwards', async () => {
    expect((await req('GET', '/api/auth/status')).json().bootstrapped).toBe(true);
  });
});

describe('login', () => {
  it('sets an HttpOnly SameSite=Lax session cookie that authenticates /api/auth/me', async () => {
    const res = await login(ROOT.username.toUpperCase(), ROOT.password);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ username: ROOT.username, role: 'admin' });
    expect(res.json().last_login_at).toMatch(/Z$/);
    expect(res.body).not.toMatch(/password_hash|argon2/);
    const raw = String(res.headers['set-cookie']);
    expect(raw).toMatch(new RegExp(`^${SESSION_COOKIE}=`));
    expect(raw).toMatch(/HttpOnly/);
    expect(raw).toMatch(/SameSite=Lax/);
    expect(raw).toMatch(/Path=\//);
    expect(raw).toMatch(/Max-Age=\d+/);
    expect(raw).not.toMatch(/Secure/);
    rootCookie = res.cookies[0]?.value as string;

    const me = await req('GET', '/api/auth/me', { cookie: rootCookie });
    expect(me.statusCode).toBe(200);
    expect(me.json()).toMatchObject({ kind: 'user', username: ROOT.username, organization_id: null });
    expect(me.headers['set-cookie']).toBeUndefined();
  });

  it('marks the cookie Secure when the request came over TLS', async () => {
    const res = await login(ROOT.username, ROOT.password, nextAddress(), { 'x-forwarded-proto': 'https' });
    expect(res.statusCode).toBe(200);
    expect(String(res.headers['set-cookie'])).toMatch(/; Secure/);
  });

  it('answers the same 401 for a wrong password and an unknown user', async () => {
    const wrong = await login(ROOT.username, 'not-the-password');
    const unknown = await login('nobody-here', 'not-the-password');
    expect(wrong.statusCode).toBe(401);
    expect(unknown.statusCode).toBe(401);
    expect(wrong.body).toBe(unknown.body);
    expect(wrong.json().error.code).toBe('auth.invalid_credentials');
    expect(wrong.headers['set-cookie']).toBeUndefined();
  });

  it('refuses an inactive user', async () => {
    const u = await createUser({
      username: 'soon-inactive',
      password: 'password-123',
      email: 'i@example.test',
      role: 'viewer',
      organization_id: orgA,
    });
    expect(
      (await req('PUT', `/api/auth/users/${u.id}`, { cookie: rootCookie, payload: { is_active: false } })).statusCode,
    ).toBe(200);
    const res = await login('soon-inactive', 'password-123');
    expect(res.statusCode).toBe(401);
    expect(res.json().detail).toBe('User is inactive');
    expect(res.headers['set-cookie']).toBeUndefined();
  });

  it('throttles attempts per username with 429 and Retry-After; success resets the count', async () => {
    await createUser({
      username: 'throttled',
      password: 'password-123',
      email: 't@example.test',
      role: 'viewer',
      organization_id: orgA,
    });
    for (let i = 0; i < 9; i++) expect((await login('throttled', 'wrong-password')).statusCode).toBe(401);
    expect((await login('throttled', 'password-123')).statusCode).toBe(200);
    // The success cleared the count: ten more attempts are allowed, the eleventh is not.
    for (let i = 0; i < 10; i++) expect((await login('Throttled', 'wrong-password')).statusCode).toBe(401);
    const res = await login('throttled', 'password-123');
    expect(res.statusCode).toBe(429);
    expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
    expect(res.headers).toMatchObject({
      'ratelimit-limit': '10',
      'ratelimit-remaining': '0',
      'ratelimit-reset': res.headers['retry-after'],
    });
    expect(typeof res.json().detail).toBe('string');
    expect(res.json().error.code).toBe('rate_limit.exceeded');
  });

  it('throttles attempts per client address', async () => {
    const address = '192.0.2.77';
    // 48 earlier attempts recorded straight in the limiter (each real one costs a hash).
    for (let i = 0; i < 48; i++) await t.container.rateLimiter.hit(`login:addr:${address}`, 50, 15 * 60_000);
    for (let i = 0; i < 2; i++) expect((await login(`ghost-${i}`, 'wrong-password', address)).statusCode).toBe(401);
    const res = await login(ROOT.username, ROOT.password, address);
    expect(res.statusCode).toBe(429);
    expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
    expect((await login(ROOT.username, ROOT.password, '192.0.2.78')).statusCode).toBe(200);
  });

  it('is audited without the password, in the trail and in the logs', async () => {
    const secret = 'Very-Secret-Pass-42';
    await createUser({
      username: 'audited',
      password: secret,
      email: 'a@example.test',
      role: 'viewer',
      organization_id: orgA,
    });
    expect((await login('audited', secret)).statusCode).toBe(200);
    expect((await login('audited', `${secret}-wrong`)).statusCode).toBe(401);
    const rows = await t.container.database.db
      .selectFrom('audit_log')
      .selectAll()
      .where('operation_id', '=', 'auth.login')
      .orderBy('seq')
      .execute();
    const success = rows.find((r) => r.outcome === 'success' && r.actor_name === 'audited');
    expect(success).toMatchObject({ actor_kind: 'user', target_type: 'user' });
    expect(
      rows.some((r) => r.outcome === 'failed' && (r.details as { username?: string }).username === 'audited'),
    ).toBe(true);
    expect(JSON.stringify(rows)).not.toContain(secret);
    expect(JSON.stringify(t.logs)).not.toContain(secret);
  });
});

describe('logout and sessions', () => {
  it('ends the session and clears the cookie', async () => {
    const cookie = await session(ROOT.username, ROOT.password);
    const res = await req('POST', '/api/auth/logout', { cookie });
    expect(res.statusCode).toBe(204);
    expect(String(res.headers['set-cookie'])).toMatch(new RegExp(`^${SESSION_COOKIE}=;`));
    const after = await req('GET', '/api/auth/me', { cookie });
    expect(after.statusCode).toBe(401);
    expect(after.headers['www-authenticate']).toBeUndefined();
  });

  it('is a no-op 204 for a token caller', async () => {
    const p = await createPrincipal(t, { role: 'viewer', organizationId: orgA });
    const res = await req('POST', '/api/auth/logout', { headers: p.headers });
    expect(res.statusCode).toBe(204);
    expect(res.headers['set-cookie']).toBeUndefined();
    expect((await req('GET', '/api/auth/me', { headers: p.headers })).statusCode).toBe(200);
  });

  it('revoke-others keeps the current session and ends the others', async () => {
    await createUser({
      username: 'two-sessions',
      password: 'password-123',
      email: 's@example.test',
      role: 'operator',
      organization_id: orgA,
    });
    const a = await session('two-sessions', 'password-123');
    const b = await session('two-sessions', 'password-123');
    const res = await req('POST', '/api/auth/me/sessions/revoke-others', { cookie: a });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ revoked: 1 });
    expect((await req('GET', '/api/auth/me', { cookie: a })).statusCode).toBe(200);
    expect((await req('GET', '/api/auth/me', { cookie: b })).statusCode).toBe(401);
  });

  it('password change needs the current password and ends the other sessions only', async () => {
    const u = await createUser({
      username: 'changer',
      password: 'password-123',
      email: 'c@example.test',
      role: 'operator',
      organization_id: orgA,
    });
    const a = await session('changer', 'password-123');
    const b = await session('changer', 'password-123');
    const { token } = await t.container.identity.tokens.create(
      { kind: 'user', id: u.id, role: 'operator' },
      { name: 'keep' },
    );

    const wrong = await req('POST', '/api/auth/me/password', {
      cookie: a,
      payload: { current_password: 'nope-nope', new_password: 'new-password-1' },
    });
    expect(wrong.statusCode).toBe(400);
    expect(wrong.json().error.code).toBe('auth.wrong_current_password');
    const short = await req('POST', '/api/auth/me/password', {
      cookie: a,
      payload: { current_password: 'password-123', new_password: 'short' },
    });
    expect(short.statusCode).toBe(422);
    expect((await req('GET', '/api/auth/me', { cookie: b })).statusCode).toBe(200);

    const ok = await req('POST', '/api/auth/me/password', {
      cookie: a,
      payload: { current_password: 'password-123', new_password: 'new-password-1' },
    });
    expect(ok.statusCode).toBe(204);
    expect((await req('GET', '/api/auth/me', { cookie: a })).statusCode).toBe(200);
    expect((await req('GET', '/api/auth/me', { cookie: b })).statusCode).toBe(401);
    expect((await req('GET', '/api/auth/me', { headers: { authorization: `Bearer ${token}` } })).statusCode).toBe(200);
    expect((await login('changer', 'password-123')).statusCode).toBe(401);
    expect((await login('changer', 'new-password-1')).statusCode).toBe(200);
  });
});

describe('which credential counts', () => {
  it('a Bearer token wins over a session cookie', async () => {
    const p = await createPrincipal(t, { role: 'viewer', organizationId: orgA });
    const res = await req('GET', '/api/auth/me', { cookie: rootCookie, headers: p.headers });
    expect(res.json()).toMatchObject({ kind: 'user', id: p.id });
  });

  it('an invalid svcsk_ token with a valid cookie is 401, no fallback', async () => {
    const res = await req('GET', '/api/auth/me', {
      cookie: rootCookie,
      headers: { authorization: `Bearer svcsk_${'x'.repeat(40)}` },
    });
    expect(res.statusCode).toBe(401);
    expect(res.json().detail).toBe('Invalid or expired API token');
    expect(res.headers['www-authenticate']).toBe('Bearer realm="service"');
  });

  it('accepts the scheme word in lower case', async () => {
    const p = await createPrincipal(t, { role: 'viewer', organizationId: orgA });
    const res = await req('GET', '/api/auth/me', { headers: { authorization: `bearer ${p.token}` } });
    expect(res.statusCode).toBe(200);
  });

  it('answers 401 without any credential', async () => {
    for (const url of ['/api/auth/me', '/api/auth/me/profile', '/api/auth/permissions']) {
      expect((await req('GET', url)).statusCode).toBe(401);
    }
  });
});

describe('the caller itself', () => {
  it('PATCH me changes display name and e-mail', async () => {
    const res = await req('PATCH', '/api/auth/me', {
      cookie: rootCookie,
      payload: { display_name: 'The Root', email: 'new-root@example.test' },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ kind: 'user', display_name: 'The Root', email: 'new-root@example.test' });
    expect(
      (await req('PATCH', '/api/auth/me', { cookie: rootCookie, payload: { email: 'not-an-email' } })).statusCode,
    ).toBe(422);
    expect((await req('PATCH', '/api/auth/me', { cookie: rootCookie, payload: { role: 'admin' } })).statusCode).toBe(
      422,
    );
  });

  it('PUT me/locale takes a BCP 47 tag', async () => {
    const ok = await req('PUT', '/api/auth/me/locale', { cookie: rootCookie, payload: { locale: 'pt-BR' } });
    expect(ok.statusCode).toBe(200);
    expect(ok.json().locale).toBe('pt-BR');
    for (const locale of ['', 'english please', 'x', 'en_US', 'a'.repeat(40)]) {
      expect(
        (await req('PUT', '/api/auth/me/locale', { cookie: rootCookie, payload: { locale } })).statusCode,
        locale,
      ).toBe(422);
    }
  });

  it('profile describes role, organization, permissions, scope and auth method', async () => {
    const p = await createPrincipal(t, {
      role: 'operator',
      organizationId: orgA,
      scopes: ['integration.read', 'quarantine.read'],
    });
    const res = await req('GET', '/api/auth/me/profile', { headers: p.headers });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      kind: 'user',
      id: p.id,
      role: 'operator',
      organization_id: orgA,
      organization: { id: orgA, name: 'Org A' },
      global: false,
      permissions: ['integration.read', 'quarantine.read'],
      auth_method: 'token',
    });
    const root = (await req('GET', '/api/auth/me/profile', { cookie: rootCookie })).json();
    expect(root).toMatchObject({ global: true, organization: null, auth_method: 'session', role: 'admin' });
  });

  it('permissions lists the caller (sorted) and publishes the role table', async () => {
    const p = await createPrincipal(t, { role: 'viewer', organizationId: orgA });
    const body = (await req('GET', '/api/auth/permissions', { headers: p.headers })).json();
    expect(body.role).toBe('viewer');
    expect(body.global).toBe(false);
    expect(body.permissions).toEqual([...ROLE_PERMISSIONS.viewer].sort());
    for (const role of ['viewer', 'operator', 'admin'] as const)
      expect(body.roles[role]).toEqual([...ROLE_PERMISSIONS[role]].sort());
  });

  it('describes a service account; user-only operations answer 400', async () => {
    const sa = await createPrincipal(t, { role: 'operator', organizationId: orgA, kind: 'service_account' });
    const me = await req('GET', '/api/auth/me', { headers: sa.headers });
    expect(me.statusCode).toBe(200);
    expect(me.json()).toMatchObject({
      kind: 'service_account',
      id: sa.id,
      role: 'operator',
      organization_id: orgA,
      is_active: true,
    });
    const profile = (await req('GET', '/api/auth/me/profile', { headers: sa.headers })).json();
    expect(profile).toMatchObject({
      kind: 'service_account',
      email: null,
      auth_method: 'token',
      organization: { id: orgA },
    });
    expect((await req('GET', '/api/auth/permissions', { headers: sa.headers })).json().role).toBe('operator');
    const calls = [
      req('POST', '/api/auth/me/password', {
        headers: sa.headers,
        payload: { current_password: 'whatever1', new_password: 'whatever2' },
      }),
      req('PUT', '/api/auth/me/locale', { headers: sa.headers, payload: { locale: 'fr' } }),
      req('POST', '/api/auth/me/sessions/revoke-others', { headers: sa.headers }),
      req('PATCH', '/api/auth/me', { headers: sa.headers, payload: { display_name: 'x' } }),
    ];
    for (const res of await Promise.all(calls)) {
      expect(res.statusCode).toBe(400);
      expect(res.json().error.code).toBe('auth.users_only');
      expect(res.json().detail).toMatch(/users/);
    }
  });
});

describe('the last platform administrator', () => {
  it('cannot deactivate or demote themself while no other active platform admin exists', async () => {
    const rootId = (await req('GET', '/api/auth/me', { cookie: rootCookie })).json().id as number;
    for (const payload of [{ is_active: false }, { role: 'operator' }]) {
      const res = await req('PUT', `/api/auth/users/${rootId}`, { cookie: rootCookie, payload });
      expect(res.statusCode).toBe(409);
      expect(res.json().error.code).toBe('auth.last_platform_admin');
    }
    // A platform admin service account (global) cannot delete the last one either.
    const sa = await createPrincipal(t, { role: 'admin', kind: 'service_account' });
    expect((await req('DELETE', `/api/auth/users/${rootId}`, { headers: sa.headers })).statusCode).toBe(409);
    // With a second platform admin, the first may step down.
    const other = await createUser({
      username: 'second-root',
      password: 'password-123',
      email: 'r2@example.test',
      role: 'admin',
    });
    const res = await req('PUT', `/api/auth/users/${rootId}`, { cookie: rootCookie, payload: { role: 'operator' } });
    expect(res.statusCode, res.body).toBe(200);
    expect((await req('GET', '/api/auth/users', { cookie: rootCookie })).statusCode).toBe(403);
    // ...and now the second one is the last.
    const cookie = await session('second-root', 'password-123');
    expect(
      (await req('PUT', `/api/auth/users/${other.id}`, { cookie, payload: { is_active: false } })).statusCode,
    ).toBe(409);
  });
});
