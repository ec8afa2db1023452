// The sync: a job on the queue that reconciles SSO users with the identity provider, over
// SCIM 2.0 (a SCIM server written from RFC 7644) or over the claims of each user's last login.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startConsumers } from '../../roles/jobs.js';
import type { Consumer } from '../../platform/queue/port.js';
import { createTestApp, type TestApp } from '../../../test/support/app.js';
import { createOrganization, createPrincipal, type Principal } from '../../../test/support/identity.js';
import { startScimServer, type ScimTestServer } from '../../../test/support/scim-server.js';
import { IDENTITY_QUEUE } from './sync.js';

const ISSUER = 'https://idp.example.test';
let t: TestApp;
let scim: ScimTestServer;
let admin: Principal;
let orgA: number;
let orgB: number;
let consumers: Consumer[] = [];

const config = (overrides: Record<string, unknown> = {}) => ({
  enabled: true,
  issuer: ISSUER,
  client_id: 'weir',
  client_secret: 'secret',
  redirect_uri: 'https://weir.example.test/api/auth/sso/callback',
  rules: [
    { claim: 'groups', match: 'contains', value: 'secops', organization_id: orgA, role: 'operator' },
    { claim: 'groups', match: 'glob', value: 'soc-*', organization_id: orgB, role: 'viewer' },
  ],
  ...overrides,
});

/** An SSO user as a past login left it. */
async function ssoUser(
  username: string,
  claims: Record<string, unknown>,
  at: { role: string; organization_id: number | null },
) {
  const row = await t.container.database.db
    .insertInto('users')
    .values({
      username,
      email: `${username}@example.test`,
      password_hash: '!sso',
      ...at,
      sso_issuer: ISSUER,
      sso_subject: `sub-${username}`,
      sso_claims: JSON.stringify({ sub: `sub-${username}`, ...claims }),
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

const user = (id: number) =>
  t.container.database.db
    .selectFrom('users')
    .select(['role', 'organization_id', 'is_active'])
    .where('id', '=', id)
    .executeTakeFirstOrThrow();
const sync = () => t.app.inject({ method: 'POST', url: '/api/identity/config/sync', headers: admin.headers });

async function finished(id: string) {
  for (let i = 0; i < 200; i++) {
    const s = (
      await t.app.inject({ method: 'GET', url: '/api/identity/config/sync-status', headers: admin.headers })
    ).json();
    if (!s.running && s.last?.id === id) return s.last;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('the sync did not finish');
}

beforeAll(async () => {
  t = await createTestApp();
  admin = await createPrincipal(t, { role: 'admin' });
  orgA = await createOrganization(t, 'sync-a');
  orgB = await createOrganization(t, 'sync-b');
  scim = await startScimServer({ token: 'scim-bearer', pageSize: 2 });
}, 60_000);

afterAll(async () => {
  await Promise.all(consumers.map((c) => c.close()));
  await t?.close();
  await scim?.close();
});

describe('identity sync', () => {
  it('re-applies the rules to the last login claims, one run at a time, reporting progress and result', async () => {
    expect(
      (await t.app.inject({ method: 'PUT', url: '/api/identity/config', headers: admin.headers, payload: config() }))
        .statusCode,
    ).toBe(200);
    const moved = await ssoUser('claims-moved', { groups: ['secops'] }, { role: 'viewer', organization_id: orgB });
    const kept = await ssoUser('claims-kept', { groups: ['soc-tier2'] }, { role: 'viewer', organization_id: orgB });
    const lost = await ssoUser('claims-lost', { groups: ['marketing'] }, { role: 'viewer', organization_id: orgA });

    const first = await sync();
    expect(first.statusCode, first.body).toBe(202);
    // No worker runs yet: the run stays queued, and a second one is refused.
    const second = await sync();
    expect(second.statusCode).toBe(409);
    expect(second.json().detail).toMatch(/already queued or running/);
    const status = (
      await t.app.inject({ method: 'GET', url: '/api/identity/config/sync-status', headers: admin.headers })
    ).json();
    expect(status).toMatchObject({
      running: true,
      current: { id: first.json().id, status: 'queued', source: 'claims' },
    });

    consumers = startConsumers(
      t.container.queue,
      t.container.jobs.filter((j) => j.queue === IDENTITY_QUEUE),
      t.container.logger,
    );
    const run = await finished(first.json().id);
    expect(run).toMatchObject({
      status: 'succeeded',
      source: 'claims',
      seen: 3,
      total: 3,
      result: { deactivated: 1, changed: 1, unchanged: 1, errors: [] },
    });
    expect(run.result.note).toMatch(/cannot be detected/);
    expect(await user(moved)).toEqual({ role: 'operator', organization_id: orgA, is_active: true });
    expect(await user(kept)).toEqual({ role: 'viewer', organization_id: orgB, is_active: true });
    expect(await user(lost)).toMatchObject({ is_active: false });

    const audit = await t.container.database.db
      .selectFrom('audit_log')
      .selectAll()
      .where('operation_id', '=', 'identity.sync_run')
      .execute();
    expect(audit.map((a) => [a.target_id, (a.details as { change: string }).change]).sort()).toEqual(
      [
        [String(moved), 'changed'],
        [String(lost), 'deactivated'],
      ].sort(),
    );
    // The next run may start.
    const third = await sync();
    expect(third.statusCode).toBe(202);
    await finished(third.json().id);
    await t.container.database.db.deleteFrom('users').where('sso_issuer', '=', ISSUER).execute();
  });

  it('over SCIM: deactivates users the provider no longer lists or lists as inactive, and re-applies the rules to SCIM groups', async () => {
    const put = await t.app.inject({
      method: 'PUT',
      url: '/api/identity/config',
      headers: admin.headers,
      payload: config({ scim_base_url: scim.baseUrl, scim_token: scim.token }),
    });
    expect(put.statusCode, put.body).toBe(200);
    const alice = await ssoUser('alice', { groups: ['soc-tier1'] }, { role: 'viewer', organization_id: orgB });
    const bob = await ssoUser('bob', { groups: ['secops'] }, { role: 'operator', organization_id: orgA });
    const carol = await ssoUser('carol', { groups: ['secops'] }, { role: 'operator', organization_id: orgA });
    const dave = await ssoUser('dave', { groups: ['secops'] }, { role: 'operator', organization_id: orgA });
    const erin = await ssoUser('erin', { groups: ['secops'] }, { role: 'operator', organization_id: orgA });
    // Alice moved to secops; bob is suspended; carol is gone; dave is matched by userName, erin by externalId.
    scim.users.set('1', {
      id: '1',
      userName: 'alice',
      externalId: 'sub-alice',
      emails: ['alice@example.test'],
      groups: ['secops'],
    });
    scim.users.set('2', { id: '2', userName: 'bob', externalId: 'sub-bob', active: false, groups: ['secops'] });
    scim.users.set('3', { id: '3', userName: 'dave', groups: ['secops'] });
    scim.users.set('4', { id: '4', userName: 'erin.renamed', externalId: 'sub-erin', groups: ['secops'] });
    scim.users.set('5', { id: '5', userName: 'frank', groups: ['secops'] });

    const res = await sync();
    expect(res.statusCode).toBe(202);
    const run = await finished(res.json().id);
    expect(run).toMatchObject({
      status: 'succeeded',
      source: 'scim',
      seen: 5,
      total: 5,
      result: { deactivated: 2, changed: 1, unchanged: 2, errors: [], note: null },
    });
    expect(await user(alice)).toEqual({ role: 'operator', organization_id: orgA, is_active: true });
    expect(await user(bob)).toMatchObject({ is_active: false });
    expect(await user(carol)).toMatchObject({ is_active: false });
    expect(await user(dave)).toMatchObject({ is_active: true });
    expect(await user(erin)).toMatchObject({ is_active: true });
    // Paged with startIndex/count: five users in pages of two.
    expect(scim.requests.filter((r) => r.startsWith('/scim/v2/Users'))).toEqual([
      '/scim/v2/Users?startIndex=1&count=100',
      '/scim/v2/Users?startIndex=3&count=100',
      '/scim/v2/Users?startIndex=5&count=100',
    ]);
    const deactivations = await t.container.database.db
      .selectFrom('audit_log')
      .selectAll()
      .where('operation_id', '=', 'identity.sync_run')
      .where('target_id', 'in', [String(bob), String(carol)])
      .execute();
    expect(deactivations.map((a) => (a.details as { reason: string }).reason).sort()).toEqual([
      'inactive at the identity provider',
      'unknown to the identity provider',
    ]);
  });

  it('records a failed run when the SCIM endpoint refuses the token', async () => {
    await t.app.inject({
      method: 'PUT',
      url: '/api/identity/config',
      headers: admin.headers,
      payload: config({ scim_base_url: scim.baseUrl, scim_token: 'wrong' }),
    });
    const res = await sync();
    const run = await finished(res.json().id);
    expect(run).toMatchObject({ status: 'failed' });
    expect(run.error).toMatch(/HTTP 401/);
    const test = await t.app.inject({ method: 'POST', url: '/api/identity/config/test', headers: admin.headers });
    expect(test.json().steps.find((s: { step: string }) => s.step === 'scim')).toMatchObject({
      ok: false,
      error: 'HTTP 401 (the SCIM token is refused)',
    });
  });
});
