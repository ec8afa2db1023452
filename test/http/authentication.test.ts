// The authentication and authorization mechanism itself, on fixture routes: the Bearer
// path, 401 details and WWW-Authenticate, scopes, global scope, the token rate limit.
import { Type } from 'typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { route, type Api } from '../../src/platform/http/routes.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { createOrganization, createPrincipal } from '../support/identity.js';

const Who = Type.Object({ kind: Type.String(), global: Type.Boolean(), organization_ids: Type.Array(Type.Integer()) });

function routes(app: Api): void {
  const who = (req: { actor?: { kind: string; global: boolean; organizationIds: readonly number[] } }) => ({
    kind: req.actor?.kind ?? 'none',
    global: req.actor?.global ?? false,
    organization_ids: [...(req.actor?.organizationIds ?? [])],
  });
  route(app, {
    method: 'GET',
    url: '/api/fixtures/whoami',
    operationId: 'fixtures.whoami',
    summary: 'any credential',
    access: { requires: 'authenticated' },
    schema: { response: { 200: Who } },
    handler: async (req) => who(req),
  });
  route(app, {
    method: 'GET',
    url: '/api/fixtures/manage',
    operationId: 'fixtures.manage',
    summary: 'needs user.manage',
    access: { requires: 'user.manage' },
    schema: { response: { 200: Who } },
    handler: async (req) => who(req),
  });
  route(app, {
    method: 'GET',
    url: '/api/fixtures/platform',
    operationId: 'fixtures.platform',
    summary: 'needs user.manage and global scope',
    access: { requires: 'user.manage', globalScope: true },
    schema: { response: { 200: Who } },
    handler: async (req) => who(req),
  });
}

let t: TestApp;
let orgA: number;

beforeAll(async () => {
  t = await createTestApp({ extraRoutes: [routes], env: { WEIR_TOKEN_RATE_LIMIT: '5' } });
  orgA = await createOrganization(t, 'Org A');
});
afterAll(async () => t?.close());

const get = (url: string, headers: Record<string, string> = {}) => t.app.inject({ method: 'GET', url, headers });

describe('Bearer tokens', () => {
  it('authenticate with the scheme word in any letter case', async () => {
    const p = await createPrincipal(t, { role: 'admin', organizationId: orgA });
    for (const scheme of ['Bearer', 'bearer', 'BEARER']) {
      const res = await get('/api/fixtures/whoami', { authorization: `${scheme} ${p.token}` });
      expect(res.statusCode, scheme).toBe(200);
      expect(res.json()).toEqual({ kind: 'user', global: false, organization_ids: [orgA] });
    }
  });

  it('answer 401 "Invalid or expired API token" with WWW-Authenticate for a bad token', async () => {
    const p = await createPrincipal(t, { role: 'viewer', organizationId: orgA });
    const forged = p.token.slice(0, -1) + (p.token.endsWith('a') ? 'b' : 'a');
    for (const token of [forged, 'svcsk_nope', 'not-a-weir-token']) {
      const res = await get('/api/fixtures/whoami', { authorization: `Bearer ${token}` });
      expect(res.statusCode).toBe(401);
      expect(res.json().detail).toBe('Invalid or expired API token');
      expect(res.headers['www-authenticate']).toBe('Bearer realm="service"');
    }
  });

  it('answer 401 without WWW-Authenticate when no credential is sent', async () => {
    const res = await get('/api/fixtures/whoami');
    expect(res.statusCode).toBe(401);
    expect(res.headers['www-authenticate']).toBeUndefined();
    expect(typeof res.json().detail).toBe('string');
  });

  it('never fall back to the session cookie when a presented token fails', async () => {
    const res = await get('/api/fixtures/whoami', {
      authorization: 'Bearer svcsk_invalid',
      cookie: 'weir_session=whatever',
    });
    expect(res.statusCode).toBe(401);
    expect(res.json().detail).toBe('Invalid or expired API token');
  });

  it('stop working at once when revoked, and when expired', async () => {
    const p = await createPrincipal(t, { role: 'viewer', organizationId: orgA });
    expect((await get('/api/fixtures/whoami', p.headers)).statusCode).toBe(200);
    const [row] = await t.container.identity.tokens.list({ kind: 'user', id: p.id });
    await t.container.identity.tokens.revoke({ kind: 'user', id: p.id }, row!.id);
    expect((await get('/api/fixtures/whoami', p.headers)).json().detail).toBe('Invalid or expired API token');

    const q = await createPrincipal(t, { role: 'viewer', organizationId: orgA });
    await t.container.database.db
      .updateTable('api_tokens')
      .set({ expires_at: new Date(Date.now() - 1000) })
      .where('user_id', '=', q.id)
      .execute();
    await t.container.cache.del(
      `tok:${(await t.container.database.db.selectFrom('api_tokens').select('token_hash').where('user_id', '=', q.id).executeTakeFirstOrThrow()).token_hash}`,
    );
    expect((await get('/api/fixtures/whoami', q.headers)).statusCode).toBe(401);
  });

  it('say "User is inactive" for a deactivated owner, and treat a deactivated service account like a wrong token', async () => {
    const u = await createPrincipal(t, { role: 'viewer', organizationId: orgA });
    await t.container.database.db.updateTable('users').set({ is_active: false }).where('id', '=', u.id).execute();
    await t.container.identity.tokens.invalidateOwner({ kind: 'user', id: u.id });
    const res = await get('/api/fixtures/whoami', u.headers);
    expect(res.statusCode).toBe(401);
    expect(res.json().detail).toBe('User is inactive');

    const sa = await createPrincipal(t, { role: 'viewer', organizationId: orgA, kind: 'service_account' });
    await t.container.database.db
      .updateTable('service_accounts')
      .set({ is_active: false })
      .where('id', '=', sa.id)
      .execute();
    await t.container.identity.tokens.invalidateOwner({ kind: 'service_account', id: sa.id });
    expect((await get('/api/fixtures/whoami', sa.headers)).json().detail).toBe('Invalid or expired API token');
  });
});

describe('deactivated organizations', () => {
  it('stop the tokens, sessions and logins of their members at once, and reactivation restores tokens', async () => {
    const orgC = await createOrganization(t, 'Org C');
    const platformAdmin = await createPrincipal(t, { role: 'admin', organizationId: null });
    const member = await createPrincipal(t, { role: 'viewer', organizationId: orgC, password: 'member-password-1' });
    const account = await createPrincipal(t, { role: 'viewer', organizationId: orgC, kind: 'service_account' });
    const username = (
      await t.container.database.db
        .selectFrom('users')
        .select('username')
        .where('id', '=', member.id)
        .executeTakeFirstOrThrow()
    ).username;
    const login = await t.app.inject({
      method: 'POST',
      url: '/api/auth/login',
      payload: { username, password: 'member-password-1' },
    });
    expect(login.statusCode).toBe(200);
    const cookie = String(login.headers['set-cookie']).split(';')[0] as string;
    expect((await get('/api/fixtures/whoami', member.headers)).statusCode).toBe(200);

    const off = await t.app.inject({
      method: 'PUT',
      url: `/api/organizations/${orgC}`,
      headers: platformAdmin.headers,
      payload: { is_active: false },
    });
    expect(off.statusCode).toBe(200);
    const byToken = await get('/api/fixtures/whoami', member.headers);
    expect(byToken.statusCode).toBe(401);
    expect(byToken.json().detail).toBe('Organization is inactive');
    expect((await get('/api/fixtures/whoami', account.headers)).json().detail).toBe('Invalid or expired API token');
    expect((await get('/api/fixtures/whoami', { cookie })).json().detail).toBe('Organization is inactive');
    const again = await t.app.inject({
      method: 'POST',
      url: '/api/auth/login',
      payload: { username, password: 'member-password-1' },
    });
    expect(again.statusCode).toBe(401);

    await t.app.inject({
      method: 'PUT',
      url: `/api/organizations/${orgC}`,
      headers: platformAdmin.headers,
      payload: { is_active: true },
    });
    expect((await get('/api/fixtures/whoami', member.headers)).statusCode).toBe(200);
  });
});

describe('authorization', () => {
  it('answers 403 naming the missing permission', async () => {
    const p = await createPrincipal(t, { role: 'operator', organizationId: orgA });
    const res = await get('/api/fixtures/manage', p.headers);
    expect(res.statusCode).toBe(403);
    expect(res.json().detail).toContain('user.manage');
  });

  it('restricts a scoped token to its scopes', async () => {
    const p = await createPrincipal(t, { role: 'admin', organizationId: orgA, scopes: ['integration.read'] });
    expect((await get('/api/fixtures/whoami', p.headers)).statusCode).toBe(200);
    expect((await get('/api/fixtures/manage', p.headers)).statusCode).toBe(403);
  });

  it('needs platform scope where declared: an organization admin gets 403', async () => {
    const orgAdmin = await createPrincipal(t, { role: 'admin', organizationId: orgA });
    expect((await get('/api/fixtures/platform', orgAdmin.headers)).statusCode).toBe(403);
    const platformAdmin = await createPrincipal(t, { role: 'admin', organizationId: null });
    const res = await get('/api/fixtures/platform', platformAdmin.headers);
    expect(res.statusCode).toBe(200);
    expect(res.json().global).toBe(true);
  });

  it('resolves a platform service account to no organization unless its role is admin', async () => {
    const viewer = await createPrincipal(t, { role: 'viewer', organizationId: null, kind: 'service_account' });
    expect((await get('/api/fixtures/whoami', viewer.headers)).json()).toEqual({
      kind: 'service_account',
      global: false,
      organization_ids: [],
    });
    const admin = await createPrincipal(t, { role: 'admin', organizationId: null, kind: 'service_account' });
    expect((await get('/api/fixtures/whoami', admin.headers)).json().global).toBe(true);
  });
});

describe('token rate limit', () => {
  it('answers 429 "Token rate limit exceeded" with Retry-After in seconds past the limit, per token', async () => {
    const p = await createPrincipal(t, { role: 'viewer', organizationId: orgA });
    const other = await createPrincipal(t, { role: 'viewer', organizationId: orgA });
    const statuses = [];
    for (let i = 0; i < 6; i++) statuses.push((await get('/api/fixtures/whoami', p.headers)).statusCode);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
    const res = await get('/api/fixtures/whoami', p.headers);
    expect(res.json().detail).toBe('Token rate limit exceeded');
    expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(Number(res.headers['retry-after'])).toBeLessThanOrEqual(60);
    expect((await get('/api/fixtures/whoami', other.headers)).statusCode).toBe(200);
  });

  it('says where the token stands on every answer, and on the 429 when it may go on (RateLimit-* fields)', async () => {
    const p = await createPrincipal(t, { role: 'viewer', organizationId: orgA });
    const answers = [];
    for (let i = 0; i < 6; i++) answers.push(await get('/api/fixtures/whoami', p.headers));
    expect(answers.map((r) => r.headers['ratelimit-limit'])).toEqual(['5', '5', '5', '5', '5', '5']);
    expect(answers.map((r) => r.headers['ratelimit-remaining'])).toEqual(['4', '3', '2', '1', '0', '0']);
    expect(answers[0]!.headers['ratelimit-policy']).toBe('5;w=60');
    for (const r of answers) {
      const reset = Number(r.headers['ratelimit-reset']);
      expect(reset >= 1 && reset <= 60, String(reset)).toBe(true);
    }
    const refused = answers[5]!;
    expect(refused.statusCode).toBe(429);
    expect(refused.headers['ratelimit-reset']).toBe(refused.headers['retry-after']);
    expect(refused.json().error.details).toMatchObject({ limit: 5, window_seconds: 60 });
    // Error answers of a counted request carry them too; session and public requests are not counted.
    const denied = await createPrincipal(t, { role: 'viewer', organizationId: orgA });
    const forbidden = await t.app.inject({ method: 'GET', url: '/api/auth/users', headers: denied.headers });
    expect(forbidden.statusCode).toBe(403);
    expect(forbidden.headers['ratelimit-remaining']).toBe('4');
    expect((await t.app.inject({ method: 'GET', url: '/livez' })).headers).not.toHaveProperty('ratelimit-limit');
  });
});
