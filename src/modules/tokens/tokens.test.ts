// The api-tokens family through HTTP: personal tokens, their rules, revocation, scopes,
// expiry and the batched last-use time.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PERMISSIONS } from '../../core/access.js';
import { permissionsOf } from '../../core/roles.js';
import { createTestApp, type TestApp } from '../../../test/support/app.js';
import { createOrganization, createPrincipal, type Principal } from '../../../test/support/identity.js';

let t: TestApp;
let orgA: number;
let viewer: Principal;
let admin: Principal;

const RFC3339_Z = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const list = (headers: Record<string, string>) => t.app.inject({ method: 'GET', url: '/api/v1/tokens', headers });
const create = (headers: Record<string, string>, payload: object) =>
  t.app.inject({ method: 'POST', url: '/api/v1/tokens', headers, payload });
const revoke = (headers: Record<string, string>, id: number | string) =>
  t.app.inject({ method: 'DELETE', url: `/api/v1/tokens/${id}`, headers });

interface Created {
  token: string;
  api_token: {
    id: number;
    name: string;
    token_prefix: string;
    expires_at: string | null;
    is_eternal: boolean;
    scopes: string[] | null;
    created_at: string;
  };
}

async function issue(headers: Record<string, string>, payload: object): Promise<Created> {
  const res = await create(headers, payload);
  expect(res.statusCode, res.body).toBe(201);
  return res.json<Created>();
}

beforeAll(async () => {
  t = await createTestApp({ env: { WEIR_TOKEN_RATE_LIMIT: '100000' } });
  orgA = await createOrganization(t, 'Org A');
  viewer = await createPrincipal(t, { role: 'viewer', organizationId: orgA });
  admin = await createPrincipal(t, { role: 'admin', organizationId: orgA });
});
afterAll(async () => t?.close());

describe('POST /api/v1/tokens', () => {
  it('lets a viewer create a token without expiry and shows the value once', async () => {
    const res = await create(viewer.headers, { name: 'ci' });
    expect(res.statusCode).toBe(201);
    const body = res.json<Created>();
    expect(Object.keys(body).sort()).toEqual(['api_token', 'token']);
    expect(body.token).toMatch(/^svcsk_[0-9A-Za-z]+$/);
    expect(body.api_token).toMatchObject({ name: 'ci', expires_at: null, is_eternal: false, scopes: null });
    expect(body.api_token.token_prefix).toHaveLength(12);
    expect(body.api_token.token_prefix).toBe(body.token.slice(0, 12));
    expect(body.api_token.created_at).toMatch(RFC3339_Z);
    expect(body).not.toHaveProperty('warning');
    expect(JSON.stringify(body.api_token)).not.toContain(body.token);

    expect((await list(bearer(body.token))).statusCode).toBe(200);
  });

  it('creates eternal tokens and tokens with a future expiry (RFC 3339 with Z out)', async () => {
    const eternal = await issue(viewer.headers, { name: 'eternal', is_eternal: true });
    expect(eternal.api_token).toMatchObject({ is_eternal: true, expires_at: null });
    const at = new Date(Date.now() + 86_400_000);
    const dated = await issue(viewer.headers, { name: 'dated', expires_at: at.toISOString().replace('Z', '+02:00') });
    expect(dated.api_token.expires_at).toMatch(RFC3339_Z);
    expect(Date.parse(dated.api_token.expires_at as string)).toBe(at.getTime() - 2 * 3_600_000);
  });

  it('refuses is_eternal together with expires_at (400)', async () => {
    const res = await create(viewer.headers, {
      name: 'both',
      is_eternal: true,
      expires_at: new Date(Date.now() + 60_000).toISOString(),
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().detail).toMatch(/is_eternal/);
  });

  it('refuses an expires_at in the past (400) and an unparseable one (422)', async () => {
    expect((await create(viewer.headers, { name: 'past', expires_at: '2020-01-01T00:00:00Z' })).statusCode).toBe(400);
    expect((await create(viewer.headers, { name: 'garbage', expires_at: 'tomorrow' })).statusCode).toBe(422);
  });

  it('keeps names unique per owner, revoked names included (400 api_token.name_taken)', async () => {
    const first = await issue(viewer.headers, { name: 'dup' });
    const again = await create(viewer.headers, { name: 'dup' });
    expect(again.statusCode).toBe(400);
    expect(again.json().error.code).toBe('api_token.name_taken');
    expect((await revoke(viewer.headers, first.api_token.id)).statusCode).toBe(204);
    const afterRevoke = await create(viewer.headers, { name: 'dup' });
    expect(afterRevoke.statusCode).toBe(400);
    expect(afterRevoke.json().error.code).toBe('api_token.name_taken');
    // Another owner may use the name.
    expect((await create(admin.headers, { name: 'dup' })).statusCode).toBe(201);
  });

  it('limits the name to 1..100 characters (422 beyond)', async () => {
    expect((await create(viewer.headers, { name: 'x'.repeat(101) })).statusCode).toBe(422);
    expect((await create(viewer.headers, { name: '' })).statusCode).toBe(422);
    expect((await create(viewer.headers, {})).statusCode).toBe(422);
    expect((await create(viewer.headers, { name: 'y'.repeat(100) })).statusCode).toBe(201);
  });

  it("refuses scopes beyond the owner's permissions (400) and unknown scope names (422)", async () => {
    const res = await create(viewer.headers, { name: 'escalate', scopes: ['integration.read', 'user.manage'] });
    expect(res.statusCode).toBe(400);
    expect(res.json().detail).toContain('user.manage');
    expect((await create(viewer.headers, { name: 'unknown-scope', scopes: ['root'] })).statusCode).toBe(422);
  });

  it('refuses service_account_id with its error code', async () => {
    const res = await create(admin.headers, { name: 'sa', service_account_id: 1 });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.code).toBe('api_token.service_account_id_not_allowed');
  });

  it('refuses unknown body fields (422)', async () => {
    expect((await create(viewer.headers, { name: 'extra', owner: 'someone' })).statusCode).toBe(422);
  });

  it('tells a service account which endpoint creates its tokens (400)', async () => {
    const sa = await createPrincipal(t, { role: 'admin', organizationId: orgA, kind: 'service_account' });
    const res = await create(sa.headers, { name: 'mine' });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.code).toBe('api_token.wrong_endpoint');
    expect(res.json().detail).toContain('POST /api/v1/service-accounts/{service_account_id}/tokens');
  });
});

describe('scopes', () => {
  it('a scoped token has only its scopes', async () => {
    const scoped = await issue(admin.headers, { name: 'read-only', scopes: ['integration.read'] });
    const denied = await t.app.inject({
      method: 'GET',
      url: '/api/v1/service-accounts',
      headers: bearer(scoped.token),
    });
    expect(denied.statusCode).toBe(403);
    expect(denied.json().detail).toContain('user.manage');
    expect(
      (await t.app.inject({ method: 'GET', url: '/api/v1/service-accounts', headers: admin.headers })).statusCode,
    ).toBe(200);
  });

  it('a scoped token never mints a broader token for its owner', async () => {
    const scoped = await issue(admin.headers, { name: 'narrow', scopes: ['integration.read', 'destination.read'] });
    const wider = await create(bearer(scoped.token), { name: 'wider', scopes: ['user.manage'] });
    expect(wider.statusCode).toBe(400);
    const inherited = await issue(bearer(scoped.token), { name: 'inherits' });
    expect(inherited.api_token.scopes?.sort()).toEqual(['destination.read', 'integration.read']);
    expect(
      (await t.app.inject({ method: 'GET', url: '/api/v1/service-accounts', headers: bearer(inherited.token) }))
        .statusCode,
    ).toBe(403);
  });

  it('GET /api/v1/tokens/scopes lists every scope name and those the caller holds', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/tokens/scopes', headers: viewer.headers });
    expect(res.statusCode).toBe(200);
    const body = res.json<{ scopes: string[]; held: string[] }>();
    expect(body.scopes).toEqual([...PERMISSIONS]);
    expect(body.held.sort()).toEqual([...permissionsOf('viewer')].sort());
  });
});

describe('GET /api/v1/tokens', () => {
  it("lists only the caller's own tokens, with the prefix and never the value or hash", async () => {
    const mine = await issue(viewer.headers, { name: 'listed', scopes: ['integration.read'] });
    const theirs = await issue(admin.headers, { name: 'not-mine' });
    const res = await list(viewer.headers);
    expect(res.statusCode).toBe(200);
    const items = res.json<Record<string, unknown>[]>();
    const row = items.find((i) => i.id === mine.api_token.id);
    expect(row).toBeDefined();
    expect(Object.keys(row ?? {}).sort()).toEqual([
      'created_at',
      'expires_at',
      'id',
      'is_eternal',
      'last_used_at',
      'name',
      'scopes',
      'token_prefix',
    ]);
    expect(row).toMatchObject({
      name: 'listed',
      token_prefix: mine.token.slice(0, 12),
      scopes: ['integration.read'],
      is_eternal: false,
    });
    expect(items.some((i) => i.id === theirs.api_token.id)).toBe(false);
    expect(res.body).not.toContain(mine.token);
    expect(res.body).not.toContain('token_hash');
  });
});

describe('DELETE /api/v1/tokens/{token_id}', () => {
  it('revokes at once: 204 without body, then 401 Invalid or expired API token', async () => {
    const made = await issue(viewer.headers, { name: 'short-lived' });
    expect((await list(bearer(made.token))).statusCode).toBe(200); // warm any cached verification
    const res = await revoke(viewer.headers, made.api_token.id);
    expect(res.statusCode).toBe(204);
    expect(res.body).toBe('');
    const after = await list(bearer(made.token));
    expect(after.statusCode).toBe(401);
    expect(after.json().detail).toBe('Invalid or expired API token');
    expect(after.headers['www-authenticate']).toBe('Bearer realm="service"');
    expect((await list(viewer.headers)).json<{ id: number }[]>().some((i) => i.id === made.api_token.id)).toBe(false);
    expect((await revoke(viewer.headers, made.api_token.id)).statusCode).toBe(404);
  });

  it("answers 404 for someone else's token and leaves it working", async () => {
    const theirs = await issue(admin.headers, { name: 'keep-me' });
    const res = await revoke(viewer.headers, theirs.api_token.id);
    expect(res.statusCode).toBe(404);
    expect((await list(bearer(theirs.token))).statusCode).toBe(200);
  });

  it('answers 422 for a token id that is not an integer', async () => {
    expect((await revoke(viewer.headers, 'abc')).statusCode).toBe(422);
  });

  it('lets a service account revoke its own token', async () => {
    const sa = await createPrincipal(t, { role: 'viewer', organizationId: orgA, kind: 'service_account' });
    const own = (await list(sa.headers)).json<{ id: number }[]>();
    expect(own).toHaveLength(1);
    expect((await revoke(sa.headers, own[0]?.id ?? 0)).statusCode).toBe(204);
    expect((await list(sa.headers)).statusCode).toBe(401);
  });
});

describe('expiry and last use', () => {
  it('an expired token answers 401 Invalid or expired API token', async () => {
    const made = await issue(viewer.headers, {
      name: 'expiring',
      expires_at: new Date(Date.now() + 1200).toISOString(),
    });
    expect((await list(bearer(made.token))).statusCode).toBe(200);
    await new Promise((r) => setTimeout(r, 1300));
    const res = await list(bearer(made.token));
    expect(res.statusCode).toBe(401);
    expect(res.json().detail).toBe('Invalid or expired API token');
    expect(res.headers['www-authenticate']).toBe('Bearer realm="service"');
  });

  it('writes last_used_at in batches, not on every request', async () => {
    const made = await issue(viewer.headers, { name: 'used' });
    const db = t.container.database.db;
    const row = () =>
      db.selectFrom('api_tokens').select('last_used_at').where('id', '=', made.api_token.id).executeTakeFirstOrThrow();
    for (let i = 0; i < 3; i++) expect((await list(bearer(made.token))).statusCode).toBe(200);
    expect((await row()).last_used_at).toBeNull();
    await t.container.identity.tokens.flushLastUsed();
    expect((await row()).last_used_at).not.toBeNull();
    const listed = (await list(viewer.headers))
      .json<{ id: number; last_used_at: string | null }[]>()
      .find((i) => i.id === made.api_token.id);
    expect(listed?.last_used_at).toMatch(RFC3339_Z);
  });
});
