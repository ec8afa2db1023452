// The auth family through HTTP, part 2: user administration and admin-access, scoped by
// organization (outside scope is 404), and the effect of changes on tokens and sessions.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/support/app.js';
import { createOrganization, createPrincipal, type Principal } from '../../../test/support/identity.js';
import { SESSION_COOKIE } from './sessions.js';

let t: TestApp;
let orgA: number;
let orgB: number;
let platform: Principal;
let adminA: Principal;
let adminB: Principal;
let viewerA: Principal;

beforeAll(async () => {
  t = await createTestApp();
  orgA = await createOrganization(t, 'Org A');
  orgB = await createOrganization(t, 'Org B');
  platform = await createPrincipal(t, { role: 'admin' });
  adminA = await createPrincipal(t, { role: 'admin', organizationId: orgA });
  adminB = await createPrincipal(t, { role: 'admin', organizationId: orgB });
  viewerA = await createPrincipal(t, { role: 'viewer', organizationId: orgA });
});
afterAll(async () => t?.close());

const call = (
  method: 'GET' | 'POST' | 'PUT' | 'DELETE',
  url: string,
  who: { headers: Record<string, string> } | { cookie: string },
  payload?: unknown,
) =>
  t.app.inject({
    method,
    url,
    ...('headers' in who ? { headers: who.headers } : { cookies: { [SESSION_COOKIE]: who.cookie } }),
    ...(payload !== undefined ? { payload: payload as Record<string, unknown> } : {}),
  });

let n = 0;
const newUser = (extra: Record<string, unknown> = {}) => ({
  username: `user-${++n}`,
  password: 'password-123',
  email: `u${n}@example.test`,
  role: 'viewer',
  ...extra,
});

async function login(username: string, password: string): Promise<string> {
  const res = await t.app.inject({
    method: 'POST',
    url: '/api/auth/login',
    payload: { username, password },
    remoteAddress: `10.1.0.${++n % 250}`,
  });
  expect(res.statusCode, res.body).toBe(200);
  return res.cookies[0]?.value as string;
}

describe('permission', () => {
  it('a viewer gets 403 naming user.manage on every users route and admin-access', async () => {
    const calls = [
      call('GET', '/api/auth/users', viewerA),
      call('POST', '/api/auth/users', viewerA, newUser({ organization_id: orgA })),
      call('PUT', `/api/auth/users/${viewerA.id}`, viewerA, { role: 'admin' }),
      call('DELETE', `/api/auth/users/${adminA.id}`, viewerA),
      call('GET', '/api/auth/admin-access', viewerA),
    ];
    for (const res of await Promise.all(calls)) {
      expect(res.statusCode).toBe(403);
      expect(res.json().detail).toMatch(/user\.manage/);
    }
  });
});

describe('create', () => {
  it('an organization admin creates users in its organization; the answer has no secret', async () => {
    const res = await call('POST', '/api/auth/users', adminA, newUser({ organization_id: orgA, role: 'operator' }));
    expect(res.statusCode).toBe(201);
    const u = res.json();
    expect(u).toMatchObject({
      role: 'operator',
      organization_id: orgA,
      is_active: true,
      display_name: null,
      locale: 'en',
      last_login_at: null,
    });
    expect(Object.keys(u).sort()).toEqual([
      'created_at',
      'display_name',
      'email',
      'id',
      'is_active',
      'last_login_at',
      'locale',
      'organization_id',
      'role',
      'sso',
      'username',
    ]);
    expect(res.body).not.toMatch(/password|argon2/);
  });

  it('an organization admin may not create platform users (403) nor users of another organization (404)', async () => {
    const platformUser = await call('POST', '/api/auth/users', adminA, newUser());
    expect(platformUser.statusCode).toBe(403);
    const other = await call('POST', '/api/auth/users', adminA, newUser({ organization_id: orgB }));
    expect(other.statusCode).toBe(404);
    const missing = await call('POST', '/api/auth/users', platform, newUser({ organization_id: 999_999 }));
    expect(missing.statusCode).toBe(404);
  });

  it('a global caller creates platform users', async () => {
    const res = await call('POST', '/api/auth/users', platform, newUser({ role: 'admin' }));
    expect(res.statusCode).toBe(201);
    expect(res.json().organization_id).toBeNull();
  });

  it('refuses a duplicate username in any letter case (409)', async () => {
    const body = newUser({ organization_id: orgA });
    expect((await call('POST', '/api/auth/users', adminA, body)).statusCode).toBe(201);
    const dup = await call('POST', '/api/auth/users', platform, {
      ...body,
      username: body.username.toUpperCase(),
      organization_id: orgB,
    });
    expect(dup.statusCode).toBe(409);
    expect(dup.json().error.code).toBe('auth.username_taken');
  });

  it('validates the body: role, password length, e-mail, unknown fields (422)', async () => {
    const bad = [
      newUser({ organization_id: orgA, role: 'superuser' }),
      newUser({ organization_id: orgA, password: 'short' }),
      newUser({ organization_id: orgA, email: 'nope' }),
      newUser({ organization_id: orgA, is_admin: true }),
      { password: 'password-123', email: 'x@example.test', role: 'viewer', organization_id: orgA },
    ];
    for (const body of bad)
      expect((await call('POST', '/api/auth/users', adminA, body)).statusCode, JSON.stringify(body)).toBe(422);
  });
});

describe('list and admin-access', () => {
  it('an organization admin sees only the users of its organization', async () => {
    const res = await call('GET', '/api/auth/users', adminA);
    expect(res.statusCode).toBe(200);
    const users = res.json() as { organization_id: number | null; id: number }[];
    expect(users.length).toBeGreaterThan(0);
    expect(users.every((u) => u.organization_id === orgA)).toBe(true);
    expect(users.map((u) => u.id)).toContain(viewerA.id);
    expect(JSON.stringify(users)).not.toMatch(/password/);
  });

  it('a global caller sees every user, platform users included, and may filter by organization', async () => {
    const all = (await call('GET', '/api/auth/users', platform)).json() as { organization_id: number | null }[];
    expect(all.some((u) => u.organization_id === null)).toBe(true);
    expect(all.some((u) => u.organization_id === orgB)).toBe(true);
    for (const param of ['organization_id', 'org_id']) {
      const only = (await call('GET', `/api/auth/users?${param}=${orgB}`, platform)).json() as {
        organization_id: number | null;
      }[];
      expect(only.length).toBeGreaterThan(0);
      expect(only.every((u) => u.organization_id === orgB)).toBe(true);
    }
    expect((await call('GET', `/api/auth/users?organization_id=${orgB}`, adminA)).json()).toEqual([]);
    expect((await call('GET', '/api/auth/users?orgid=1', platform)).statusCode).toBe(422);
  });

  it('admin-access says what the caller administers', async () => {
    expect((await call('GET', '/api/auth/admin-access', adminA)).json()).toEqual({
      global: false,
      organizations: [{ id: orgA, name: 'Org A' }],
    });
    const global = (await call('GET', '/api/auth/admin-access', platform)).json();
    expect(global.global).toBe(true);
    expect(global.organizations.map((o: { id: number }) => o.id)).toEqual([orgA, orgB]);
  });

  it('a platform service account with a non-admin role sees nothing', async () => {
    const sa = await createPrincipal(t, { role: 'operator', kind: 'service_account' });
    expect((await call('GET', '/api/auth/users', sa)).statusCode).toBe(403);
    const saAdmin = await createPrincipal(t, { role: 'admin', kind: 'service_account' });
    expect((await call('GET', '/api/auth/admin-access', saAdmin)).json().global).toBe(true);
  });
});

describe('update', () => {
  it('answers 404 for a user of another organization, and for a platform user', async () => {
    const res = await call('PUT', `/api/auth/users/${adminB.id}`, adminA, { role: 'viewer' });
    expect(res.statusCode).toBe(404);
    expect((await call('PUT', `/api/auth/users/${platform.id}`, adminA, { is_active: false })).statusCode).toBe(404);
    expect((await call('PUT', '/api/auth/users/999999', adminA, { is_active: false })).statusCode).toBe(404);
    expect((await call('GET', `/api/auth/users`, adminA)).json().some((u: { id: number }) => u.id === adminB.id)).toBe(
      false,
    );
  });

  it("a role change takes effect on the user's token at once", async () => {
    const u = await createPrincipal(t, { role: 'admin', organizationId: orgA });
    expect((await call('GET', '/api/auth/users', u)).statusCode).toBe(200);
    const res = await call('PUT', `/api/auth/users/${u.id}`, adminA, { role: 'viewer' });
    expect(res.statusCode).toBe(200);
    expect(res.json().role).toBe('viewer');
    const denied = await call('GET', '/api/auth/users', u);
    expect(denied.statusCode).toBe(403);
    expect(denied.json().detail).toMatch(/user\.manage/);
  });

  it('deactivation makes the token answer 401 "User is inactive" at once and ends the sessions', async () => {
    const created = (await call('POST', '/api/auth/users', adminA, newUser({ organization_id: orgA }))).json();
    const cookie = await login(created.username, 'password-123');
    const { token } = await t.container.identity.tokens.create(
      { kind: 'user', id: created.id, role: 'viewer' },
      { name: 'mine' },
    );
    const bearer = { headers: { authorization: `Bearer ${token}` } };
    expect((await call('GET', '/api/auth/me', bearer)).statusCode).toBe(200);

    expect((await call('PUT', `/api/auth/users/${created.id}`, adminA, { is_active: false })).json().is_active).toBe(
      false,
    );
    const res = await call('GET', '/api/auth/me', bearer);
    expect(res.statusCode).toBe(401);
    expect(res.json().detail).toBe('User is inactive');
    expect((await call('GET', '/api/auth/me', { cookie })).statusCode).toBe(401);

    expect((await call('PUT', `/api/auth/users/${created.id}`, adminA, { is_active: true })).statusCode).toBe(200);
    expect((await call('GET', '/api/auth/me', bearer)).statusCode).toBe(200);
  });

  it("changes e-mail and resets the password (ending the user's sessions)", async () => {
    const created = (await call('POST', '/api/auth/users', adminA, newUser({ organization_id: orgA }))).json();
    const cookie = await login(created.username, 'password-123');
    const res = await call('PUT', `/api/auth/users/${created.id}`, adminA, {
      email: 'changed@example.test',
      password: 'reset-password-9',
    });
    expect(res.statusCode).toBe(200);
    expect(res.json().email).toBe('changed@example.test');
    expect(res.body).not.toMatch(/reset-password-9|password_hash/);
    expect((await call('GET', '/api/auth/me', { cookie })).statusCode).toBe(401);
    await login(created.username, 'reset-password-9');
    expect((await call('PUT', `/api/auth/users/${created.id}`, adminA, { password: 'short' })).statusCode).toBe(422);
    expect((await call('PUT', `/api/auth/users/${created.id}`, adminA, { organization_id: orgB })).statusCode).toBe(
      422,
    );
  });

  it('records the change in the audit trail without the password', async () => {
    const rows = await t.container.database.db
      .selectFrom('audit_log')
      .selectAll()
      .where('operation_id', '=', 'auth.update_user')
      .execute();
    expect(rows.length).toBeGreaterThan(0);
    // Denied calls are refused before the operation runs; every other entry names the user.
    expect(rows.filter((r) => r.outcome !== 'denied').every((r) => r.target_type === 'user')).toBe(true);
    expect(
      rows.some((r) => r.outcome === 'success' && (r.details as { changed?: string[] }).changed?.includes('password')),
    ).toBe(true);
    expect(JSON.stringify(rows)).not.toMatch(/reset-password-9/);
  });
});

describe('delete', () => {
  it('refuses yourself (400) and users outside scope (404)', async () => {
    const self = await call('DELETE', `/api/auth/users/${adminA.id}`, adminA);
    expect(self.statusCode).toBe(400);
    expect((await call('DELETE', `/api/auth/users/${adminB.id}`, adminA)).statusCode).toBe(404);
    expect((await call('DELETE', `/api/auth/users/${platform.id}`, adminA)).statusCode).toBe(404);
  });

  it('removes the user and its tokens stop working at once', async () => {
    const victim = await createPrincipal(t, { role: 'operator', organizationId: orgA });
    expect((await call('GET', '/api/auth/me', victim)).statusCode).toBe(200);
    const res = await call('DELETE', `/api/auth/users/${victim.id}`, adminA);
    expect(res.statusCode).toBe(204);
    expect(res.body).toBe('');
    expect((await call('GET', '/api/auth/me', victim)).statusCode).toBe(401);
    expect((await call('GET', '/api/auth/users', adminA)).json().some((u: { id: number }) => u.id === victim.id)).toBe(
      false,
    );
    expect((await call('DELETE', `/api/auth/users/${victim.id}`, adminA)).statusCode).toBe(404);
  });
});
