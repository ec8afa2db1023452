// The service-accounts family through HTTP: scoping by organization, platform accounts,
// account tokens and what deactivation, role changes and removal do to them.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/support/app.js';
import { createOrganization, createPrincipal, type Principal } from '../../../test/support/identity.js';

let t: TestApp;
let orgA: number;
let orgB: number;
let platformAdmin: Principal;
let adminA: Principal;
let adminB: Principal;
let viewerA: Principal;

const RFC3339_Z = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;
const BASE = '/api/v1/service-accounts';
type Headers = Record<string, string>;
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const inject = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, headers: Headers, payload?: object) =>
  t.app.inject({ method, url, headers, ...(payload ? { payload } : {}) });

interface Account {
  id: number;
  name: string;
  role: string;
  organization_id: number | null;
  is_active: boolean;
  created_by: number | null;
  created_at: string;
  token_count: number;
}

interface Created {
  token: string;
  api_token: { id: number; name: string; token_prefix: string; scopes: string[] | null };
}

async function account(headers: Headers, payload: object): Promise<Account> {
  const res = await inject('POST', BASE, headers, payload);
  expect(res.statusCode, res.body).toBe(201);
  return res.json<Account>();
}

async function accountToken(headers: Headers, id: number, payload: object): Promise<Created> {
  const res = await inject('POST', `${BASE}/${id}/tokens`, headers, payload);
  expect(res.statusCode, res.body).toBe(201);
  return res.json<Created>();
}

/** An authenticated call any principal may make. */
const probe = (token: string) => inject('GET', '/api/v1/tokens', bearer(token));

beforeAll(async () => {
  t = await createTestApp({ env: { WEIR_TOKEN_RATE_LIMIT: '100000' } });
  orgA = await createOrganization(t, 'Org A');
  orgB = await createOrganization(t, 'Org B');
  platformAdmin = await createPrincipal(t, { role: 'admin' });
  adminA = await createPrincipal(t, { role: 'admin', organizationId: orgA });
  adminB = await createPrincipal(t, { role: 'admin', organizationId: orgB });
  viewerA = await createPrincipal(t, { role: 'viewer', organizationId: orgA });
});
afterAll(async () => t?.close());

describe('creating and reading service accounts', () => {
  it('an organization admin creates an account in its organization (201 with the representation)', async () => {
    const res = await inject('POST', BASE, adminA.headers, { name: 'ci-bot', role: 'operator', organization_id: orgA });
    expect(res.statusCode).toBe(201);
    const a = res.json<Account>();
    expect(a).toMatchObject({
      name: 'ci-bot',
      role: 'operator',
      organization_id: orgA,
      is_active: true,
      created_by: adminA.id,
      token_count: 0,
    });
    expect(a.created_at).toMatch(RFC3339_Z);
    const got = await inject('GET', `${BASE}/${a.id}`, adminA.headers);
    expect(got.statusCode).toBe(200);
    expect(got.json()).toEqual(a);
  });

  it('only a global caller creates a platform account (403 otherwise)', async () => {
    const denied = await inject('POST', BASE, adminA.headers, { name: 'platform-bot', role: 'viewer' });
    expect(denied.statusCode).toBe(403);
    const made = await account(platformAdmin.headers, { name: 'platform-bot', role: 'viewer' });
    expect(made.organization_id).toBeNull();
  });

  it("answers 404 for an organization outside the caller's scope or unknown", async () => {
    expect(
      (await inject('POST', BASE, adminA.headers, { name: 'x', role: 'viewer', organization_id: orgB })).statusCode,
    ).toBe(404);
    expect(
      (await inject('POST', BASE, platformAdmin.headers, { name: 'x', role: 'viewer', organization_id: 987654 }))
        .statusCode,
    ).toBe(404);
  });

  it('validates the body by schema (422)', async () => {
    for (const body of [
      { name: 'x', role: 'superuser', organization_id: orgA },
      { name: 'x', organization_id: orgA },
      { role: 'viewer', organization_id: orgA },
      { name: '', role: 'viewer', organization_id: orgA },
      { name: 'x', role: 'viewer', organization_id: orgA, is_admin: true },
    ]) {
      expect((await inject('POST', BASE, adminA.headers, body)).statusCode, JSON.stringify(body)).toBe(422);
    }
  });

  it('requires user.manage (403 naming it)', async () => {
    const res = await inject('GET', BASE, viewerA.headers);
    expect(res.statusCode).toBe(403);
    expect(res.json().detail).toContain('user.manage');
    expect(
      (await inject('POST', BASE, viewerA.headers, { name: 'x', role: 'viewer', organization_id: orgA })).statusCode,
    ).toBe(403);
  });

  it('lists only the accounts in scope: organization admins never see other organizations or platform accounts', async () => {
    const a = await account(adminA.headers, { name: 'list-a', role: 'viewer', organization_id: orgA });
    const b = await account(adminB.headers, { name: 'list-b', role: 'viewer', organization_id: orgB });
    const p = await account(platformAdmin.headers, { name: 'list-p', role: 'viewer' });
    const idsFor = async (h: Headers) => (await inject('GET', BASE, h)).json<Account[]>().map((x) => x.id);
    const seenByA = await idsFor(adminA.headers);
    expect(seenByA).toContain(a.id);
    expect(seenByA).not.toContain(b.id);
    expect(seenByA).not.toContain(p.id);
    const seenByPlatform = await idsFor(platformAdmin.headers);
    expect(seenByPlatform).toEqual(expect.arrayContaining([a.id, b.id, p.id]));
  });
});

describe("another organization's account is 404 on every operation", () => {
  it('get, patch, delete, and its tokens', async () => {
    const b = await account(adminB.headers, { name: 'foreign', role: 'admin', organization_id: orgB });
    const tok = await accountToken(adminB.headers, b.id, { name: 'b-token' });
    const calls: [string, string, object?][] = [
      ['GET', `${BASE}/${b.id}`],
      ['PATCH', `${BASE}/${b.id}`, { is_active: false }],
      ['DELETE', `${BASE}/${b.id}`],
      ['GET', `${BASE}/${b.id}/tokens`],
      ['POST', `${BASE}/${b.id}/tokens`, { name: 'steal' }],
      ['DELETE', `${BASE}/${b.id}/tokens/${tok.api_token.id}`],
    ];
    for (const [method, url, body] of calls) {
      const res = await inject(method as 'GET', url, adminA.headers, body);
      expect(res.statusCode, `${method} ${url}`).toBe(404);
    }
    // Nothing changed.
    expect((await inject('GET', `${BASE}/${b.id}`, adminB.headers)).json<Account>()).toMatchObject({
      is_active: true,
      token_count: 1,
    });
    expect((await probe(tok.token)).statusCode).toBe(200);
  });

  it('a platform account is 404 to an organization admin', async () => {
    const p = await account(platformAdmin.headers, { name: 'hidden', role: 'admin' });
    expect((await inject('GET', `${BASE}/${p.id}`, adminA.headers)).statusCode).toBe(404);
  });
});

describe('service-account tokens', () => {
  it('creates a token for the account in the path (body service_account_id ignored), shown once', async () => {
    const a = await account(adminA.headers, { name: 'tok-a', role: 'operator', organization_id: orgA });
    const other = await account(adminA.headers, { name: 'tok-other', role: 'operator', organization_id: orgA });
    const res = await inject('POST', `${BASE}/${a.id}/tokens`, adminA.headers, {
      name: 'deploy',
      service_account_id: other.id,
      is_eternal: true,
    });
    expect(res.statusCode).toBe(201);
    const made = res.json<Created>();
    expect(made.token).toMatch(/^svcsk_/);
    expect(made.api_token.token_prefix).toBe(made.token.slice(0, 12));
    expect(made.api_token).toMatchObject({ name: 'deploy', is_eternal: true, scopes: null });

    const listed = await inject('GET', `${BASE}/${a.id}/tokens`, adminA.headers);
    expect(listed.statusCode).toBe(200);
    expect(listed.json<{ id: number }[]>().map((x) => x.id)).toEqual([made.api_token.id]);
    expect(listed.body).not.toContain(made.token);
    expect((await inject('GET', `${BASE}/${other.id}/tokens`, adminA.headers)).json()).toEqual([]);
    expect((await inject('GET', `${BASE}/${a.id}`, adminA.headers)).json<Account>().token_count).toBe(1);

    // The token acts as the account: it lists the account's own tokens.
    const own = await probe(made.token);
    expect(own.statusCode).toBe(200);
    expect(own.json<{ id: number }[]>().map((x) => x.id)).toEqual([made.api_token.id]);
  });

  it("applies the personal-token rules; scopes are bounded by the account's role, not the caller's", async () => {
    const a = await account(adminA.headers, { name: 'rules', role: 'viewer', organization_id: orgA });
    const url = `${BASE}/${a.id}/tokens`;
    const beyond = await inject('POST', url, adminA.headers, { name: 'x', scopes: ['user.manage'] });
    expect(beyond.statusCode).toBe(400);
    expect(beyond.json().detail).toContain('user.manage');
    expect(
      (
        await inject('POST', url, adminA.headers, {
          name: 'x',
          is_eternal: true,
          expires_at: new Date(Date.now() + 60_000).toISOString(),
        })
      ).statusCode,
    ).toBe(400);
    expect(
      (await inject('POST', url, adminA.headers, { name: 'x', expires_at: '2020-01-01T00:00:00Z' })).statusCode,
    ).toBe(400);
    expect((await inject('POST', url, adminA.headers, { name: 'z'.repeat(101) })).statusCode).toBe(422);
    const scoped = await accountToken(adminA.headers, a.id, { name: 'x', scopes: ['integration.read'] });
    expect(scoped.api_token.scopes).toEqual(['integration.read']);
    const dup = await inject('POST', url, adminA.headers, { name: 'x' });
    expect(dup.statusCode).toBe(400);
    expect(dup.json().error.code).toBe('api_token.name_taken');
  });

  it('revokes a token of the account: 204, then 401; 404 for a token of another account', async () => {
    const a = await account(adminA.headers, { name: 'revoke-a', role: 'viewer', organization_id: orgA });
    const other = await account(adminA.headers, { name: 'revoke-other', role: 'viewer', organization_id: orgA });
    const made = await accountToken(adminA.headers, a.id, { name: 'one' });
    const foreign = await accountToken(adminA.headers, other.id, { name: 'two' });
    expect((await probe(made.token)).statusCode).toBe(200);

    expect((await inject('DELETE', `${BASE}/${a.id}/tokens/${foreign.api_token.id}`, adminA.headers)).statusCode).toBe(
      404,
    );
    const res = await inject('DELETE', `${BASE}/${a.id}/tokens/${made.api_token.id}`, adminA.headers);
    expect(res.statusCode).toBe(204);
    expect(res.body).toBe('');
    const after = await probe(made.token);
    expect(after.statusCode).toBe(401);
    expect(after.json().detail).toBe('Invalid or expired API token');
    expect((await inject('DELETE', `${BASE}/${a.id}/tokens/${made.api_token.id}`, adminA.headers)).statusCode).toBe(
      404,
    );
    expect((await probe(foreign.token)).statusCode).toBe(200);
    // The revoked name stays reserved.
    expect((await inject('POST', `${BASE}/${a.id}/tokens`, adminA.headers, { name: 'one' })).statusCode).toBe(400);
  });
});

describe('changes to an account', () => {
  it('deactivation makes its tokens 401 like a wrong token; reactivation restores them', async () => {
    const a = await account(adminA.headers, { name: 'toggle', role: 'viewer', organization_id: orgA });
    const made = await accountToken(adminA.headers, a.id, { name: 't' });
    expect((await probe(made.token)).statusCode).toBe(200); // cached verification

    const off = await inject('PATCH', `${BASE}/${a.id}`, adminA.headers, { is_active: false });
    expect(off.statusCode).toBe(200);
    expect(off.json<Account>().is_active).toBe(false);
    const refused = await probe(made.token);
    expect(refused.statusCode).toBe(401);
    expect(refused.json().detail).toBe('Invalid or expired API token');
    expect(refused.json().error.code).toBe('auth.invalid_token');
    expect(refused.headers['www-authenticate']).toBe('Bearer realm="service"');

    expect((await inject('PATCH', `${BASE}/${a.id}`, adminA.headers, { is_active: true })).statusCode).toBe(200);
    expect((await probe(made.token)).statusCode).toBe(200);
  });

  it('a role change applies to its tokens at once', async () => {
    const a = await account(adminA.headers, { name: 'demote', role: 'admin', organization_id: orgA });
    const made = await accountToken(adminA.headers, a.id, { name: 't' });
    expect((await inject('GET', BASE, bearer(made.token))).statusCode).toBe(200);
    const res = await inject('PATCH', `${BASE}/${a.id}`, adminA.headers, { role: 'viewer', name: 'demoted' });
    expect(res.statusCode).toBe(200);
    expect(res.json<Account>()).toMatchObject({ role: 'viewer', name: 'demoted' });
    const denied = await inject('GET', BASE, bearer(made.token));
    expect(denied.statusCode).toBe(403);
    expect(denied.json().detail).toContain('user.manage');
  });

  it('validates the patch (422 for an unknown role or field)', async () => {
    const a = await account(adminA.headers, { name: 'patch-validate', role: 'viewer', organization_id: orgA });
    expect((await inject('PATCH', `${BASE}/${a.id}`, adminA.headers, { role: 'root' })).statusCode).toBe(422);
    expect((await inject('PATCH', `${BASE}/${a.id}`, adminA.headers, { organization_id: orgB })).statusCode).toBe(422);
  });

  it('removal: 204, its tokens answer 401, the account is 404', async () => {
    const a = await account(adminA.headers, { name: 'doomed', role: 'viewer', organization_id: orgA });
    const made = await accountToken(adminA.headers, a.id, { name: 't' });
    expect((await probe(made.token)).statusCode).toBe(200);
    const res = await inject('DELETE', `${BASE}/${a.id}`, adminA.headers);
    expect(res.statusCode).toBe(204);
    expect(res.body).toBe('');
    expect((await probe(made.token)).statusCode).toBe(401);
    expect((await inject('GET', `${BASE}/${a.id}`, adminA.headers)).statusCode).toBe(404);
    expect((await inject('DELETE', `${BASE}/${a.id}`, adminA.headers)).statusCode).toBe(404);
  });

  it('account tokens survive changes to the user who created the account', async () => {
    const creator = await createPrincipal(t, { role: 'admin', organizationId: orgA });
    const a = await account(creator.headers, { name: 'survivor', role: 'viewer', organization_id: orgA });
    const made = await accountToken(creator.headers, a.id, { name: 't' });
    await t.container.database.db.updateTable('users').set({ is_active: false }).where('id', '=', creator.id).execute();
    await t.container.identity.tokens.invalidateOwner({ kind: 'user', id: creator.id });
    expect((await probe(creator.token)).statusCode).toBe(401);
    expect((await probe(made.token)).statusCode).toBe(200);
    await t.container.database.db.deleteFrom('users').where('id', '=', creator.id).execute();
    expect((await probe(made.token)).statusCode).toBe(200);
  });
});

describe('audit', () => {
  it('records account and token operations under the account and its organization, never the token value', async () => {
    const a = await account(adminA.headers, { name: 'audited', role: 'viewer', organization_id: orgA });
    const made = await accountToken(adminA.headers, a.id, { name: 'audited-token' });
    await inject('DELETE', `${BASE}/${a.id}/tokens/${made.api_token.id}`, adminA.headers);
    await inject('DELETE', `${BASE}/${a.id}`, adminA.headers);
    const rows = await t.container.database.db
      .selectFrom('audit_log')
      .select(['operation_id', 'target_id', 'organization_id', 'outcome', 'details'])
      .where('target_id', '=', String(a.id))
      .where('operation_id', 'like', 'service_accounts.%')
      .orderBy('seq')
      .execute();
    expect(rows.map((r) => r.operation_id)).toEqual([
      'service_accounts.create',
      'service_accounts.create_token',
      'service_accounts.revoke_token',
      'service_accounts.delete',
    ]);
    for (const r of rows) expect(r).toMatchObject({ organization_id: orgA, outcome: 'success' });
    expect(rows[1]?.details).toMatchObject({ token_id: made.api_token.id });
    expect(JSON.stringify(rows)).not.toContain(made.token);
  });
});

describe('platform accounts', () => {
  it('a platform account with a non-admin role authenticates and sees no organization', async () => {
    await sql`insert into integrations (organization_id, name, platform) values (${orgA}, 'visible-to-a', 'custom')`.execute(
      t.container.database.db,
    );
    const p = await account(platformAdmin.headers, { name: 'platform-viewer', role: 'viewer' });
    const made = await accountToken(platformAdmin.headers, p.id, { name: 't' });
    expect((await probe(made.token)).statusCode).toBe(200);
    const integrations = await inject('GET', '/api/integrations/', bearer(made.token));
    expect(integrations.statusCode).toBe(200);
    expect(integrations.json()).toMatchObject({ total: 0, items: [] });
    // The same listing for an organization member is not empty.
    expect(
      (await inject('GET', '/api/integrations/', viewerA.headers)).json<{ total: number }>().total,
    ).toBeGreaterThan(0);
  });

  it('a platform admin account has global scope', async () => {
    const p = await account(platformAdmin.headers, { name: 'platform-admin', role: 'admin' });
    const made = await accountToken(platformAdmin.headers, p.id, { name: 't' });
    const res = await inject('GET', BASE, bearer(made.token));
    expect(res.statusCode).toBe(200);
    const orgs = new Set(res.json<Account[]>().map((x) => x.organization_id));
    expect(orgs).toEqual(new Set([orgA, orgB, null]));
  });
});
