// Organizations through HTTP: listing with page headers, scope (404 across organizations),
// global-scope operations, bulk deactivation, retention, customer mappings, the
// case-management sync when nothing is configured, and organization data deletion run
// end to end by a worker.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/support/app.js';
import { createOrganization, createPrincipal, type Principal } from '../../../test/support/identity.js';
import { startConsumers } from '../../roles/jobs.js';
import { ORGANIZATIONS_QUEUE } from './jobs.js';
import { MAX_BULK_IDS } from '../../platform/http/schemas.js';

let t: TestApp;
let orgA: number;
let orgB: number;
let platform: Principal;
let adminA: Principal;
let viewerA: Principal;
let operatorA: Principal;
let platformViewerSa: Principal;

const ENV = { NODE_ENV: 'test', WEIR_TOKEN_RATE_LIMIT: '100000' };

beforeAll(async () => {
  t = await createTestApp({ env: ENV });
  orgA = await createOrganization(t, 'Org A');
  orgB = await createOrganization(t, 'Org B');
  platform = await createPrincipal(t, { role: 'admin' });
  adminA = await createPrincipal(t, { role: 'admin', organizationId: orgA });
  viewerA = await createPrincipal(t, { role: 'viewer', organizationId: orgA });
  operatorA = await createPrincipal(t, { role: 'operator', organizationId: orgA });
  platformViewerSa = await createPrincipal(t, { role: 'viewer', kind: 'service_account' });
});
afterAll(async () => t?.close());

type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';
const call = (method: Method, url: string, who: Principal, payload?: unknown) =>
  t.app.inject({
    method,
    url,
    headers: who.headers,
    ...(payload !== undefined ? { payload: payload as Record<string, unknown> } : {}),
  });

async function addIntegration(organizationId: number, name: string): Promise<number> {
  const row = await t.container.database.db
    .insertInto('integrations')
    .values({ organization_id: organizationId, name, platform: 'custom', config: JSON.stringify({}) })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

async function waitForDeletion(
  id: string,
): Promise<{ state: string; detail: Record<string, unknown>; finished_at: Date | null }> {
  const db = t.container.database.db;
  const deadline = Date.now() + 15_000;
  for (;;) {
    const row = await db
      .selectFrom('org_data_deletions')
      .select(['state', 'detail', 'finished_at'])
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    if (['completed', 'partial', 'failed'].includes(row.state)) return row as never;
    if (Date.now() > deadline) throw new Error(`deletion ${id} still ${row.state}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('GET /api/organizations/', () => {
  it('pages with page and size, counting in X-Total-Count, X-Page, X-Size', async () => {
    const res = await call('GET', '/api/organizations/?page=1&size=1', platform);
    expect(res.statusCode).toBe(200);
    const total = Number(res.headers['x-total-count']);
    expect(total).toBeGreaterThanOrEqual(2);
    expect(res.headers['x-page']).toBe('1');
    expect(res.headers['x-size']).toBe('1');
    const body =
      res.json<{ id: number; name: string; is_active: boolean; retention_days: number; created_at: string }[]>();
    expect(body).toHaveLength(1);
    expect(body[0]).toMatchObject({ id: orgA, name: 'Org A', is_active: true, retention_days: 7 });
    expect(body[0]?.created_at).toMatch(/Z$/);
    const second = await call('GET', '/api/organizations/?page=2&size=1', platform);
    expect(second.json<{ id: number }[]>()[0]?.id).toBe(orgB);
    const beyond = await call('GET', `/api/organizations/?page=${total + 1}&size=1`, platform);
    expect(beyond.json()).toEqual([]);
    expect(beyond.headers['x-total-count']).toBe(String(total));
  });

  it('shows an organization user only its organization', async () => {
    const res = await call('GET', '/api/organizations/', viewerA);
    expect(res.statusCode).toBe(200);
    expect(res.json<{ id: number }[]>().map((o) => o.id)).toEqual([orgA]);
    expect(res.headers['x-total-count']).toBe('1');
  });

  it('shows a platform service account without an administrative role nothing', async () => {
    const res = await call('GET', '/api/organizations/', platformViewerSa);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual([]);
    expect(res.headers['x-total-count']).toBe('0');
  });

  it('refuses unknown query parameters and out-of-range pages', async () => {
    expect((await call('GET', '/api/organizations/?pagesize=3', platform)).statusCode).toBe(422);
    expect((await call('GET', '/api/organizations/?page=0', platform)).statusCode).toBe(422);
  });

  it('needs a credential', async () => {
    expect((await t.app.inject({ method: 'GET', url: '/api/organizations/' })).statusCode).toBe(401);
  });
});

describe('POST /api/organizations/', () => {
  it('creates with 201 and refuses a name taken in any letter case with 409', async () => {
    const res = await call('POST', '/api/organizations/', platform, { name: '  Created Org  ' });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({ name: 'Created Org', is_active: true, retention_days: 7 });
    expect(res.json<{ id: number }>().id).toBeGreaterThan(0);
    const dup = await call('POST', '/api/organizations/', platform, { name: 'created ORG' });
    expect(dup.statusCode).toBe(409);
    expect(dup.json().error.code).toBe('resource.conflict');
  });

  it('refuses a blank name and unknown fields with 422', async () => {
    expect((await call('POST', '/api/organizations/', platform, { name: '   ' })).statusCode).toBe(422);
    expect((await call('POST', '/api/organizations/', platform, { name: 'X', extra: 1 })).statusCode).toBe(422);
  });

  it('needs global scope: an organization admin gets 403', async () => {
    const res = await call('POST', '/api/organizations/', adminA, { name: 'Sneaky' });
    expect(res.statusCode).toBe(403);
    expect(res.json().detail).toMatch(/global/);
  });

  it('names the missing permission', async () => {
    const res = await call('POST', '/api/organizations/', viewerA, { name: 'Nope' });
    expect(res.statusCode).toBe(403);
    expect(res.json().detail).toContain('user.manage');
  });
});

describe('GET and PUT /api/organizations/{org_id}', () => {
  it('reads an organization in scope and answers 404 outside it', async () => {
    expect((await call('GET', `/api/organizations/${orgA}`, viewerA)).json()).toMatchObject({
      id: orgA,
      name: 'Org A',
    });
    expect((await call('GET', `/api/organizations/${orgB}`, viewerA)).statusCode).toBe(404);
    expect((await call('GET', `/api/organizations/${orgB}`, adminA)).statusCode).toBe(404);
    expect((await call('GET', '/api/organizations/999999', platform)).statusCode).toBe(404);
  });

  it('renames and toggles is_active with user.manage, within scope only', async () => {
    const id = await createOrganization(t, 'Rename Me');
    const res = await call('PUT', `/api/organizations/${id}`, platform, { name: 'Renamed', is_active: false });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ id, name: 'Renamed', is_active: false });
    expect((await call('PUT', `/api/organizations/${id}`, platform, { is_active: true })).json()).toMatchObject({
      name: 'Renamed',
      is_active: true,
    });
    expect((await call('PUT', `/api/organizations/${id}`, platform, { name: 'org a' })).statusCode).toBe(409);
    expect((await call('PUT', `/api/organizations/${id}`, adminA, { name: 'Mine now' })).statusCode).toBe(404);
    expect((await call('PUT', `/api/organizations/${orgA}`, viewerA, { name: 'x' })).statusCode).toBe(403);
    // Changing only the letter case of its own name is not a conflict.
    expect((await call('PUT', `/api/organizations/${id}`, platform, { name: 'RENAMED' })).json()).toMatchObject({
      name: 'RENAMED',
    });
  });

  it('lets an organization admin rename its own organization', async () => {
    const id = await createOrganization(t, 'Own Org');
    const own = await createPrincipal(t, { role: 'admin', organizationId: id });
    expect((await call('PUT', `/api/organizations/${id}`, own, { name: 'Own Org 2' })).json()).toMatchObject({
      name: 'Own Org 2',
    });
  });
});

describe('DELETE /api/organizations/{org_id}', () => {
  it('needs global scope and removes the organization with its principals at once', async () => {
    const id = await createOrganization(t, 'Doomed');
    const member = await createPrincipal(t, { role: 'admin', organizationId: id });
    await addIntegration(id, 'doomed-int');
    expect((await call('GET', `/api/organizations/${id}`, member)).statusCode).toBe(200);
    expect((await call('DELETE', `/api/organizations/${id}`, member)).statusCode).toBe(403);
    const res = await call('DELETE', `/api/organizations/${id}`, platform);
    expect(res.statusCode).toBe(204);
    expect(res.body).toBe('');
    expect((await call('GET', `/api/organizations/${id}`, platform)).statusCode).toBe(404);
    // Its members' tokens stop working at once, cached verification or not.
    expect((await call('GET', '/api/organizations/', member)).statusCode).toBe(401);
    const left = await t.container.database.db
      .selectFrom('integrations')
      .select('id')
      .where('organization_id', '=', id)
      .execute();
    expect(left).toEqual([]);
    expect((await call('DELETE', `/api/organizations/${id}`, platform)).statusCode).toBe(404);
  });
});

describe('POST /api/organizations/bulk/deactivate', () => {
  it('deactivates those in scope and reports the others as not found, never 403', async () => {
    const c = await createOrganization(t, 'Bulk C');
    const adminC = await createPrincipal(t, { role: 'admin', organizationId: c });
    const res = await call('POST', '/api/organizations/bulk/deactivate', adminC, { ids: [c, orgB, 999999, c] });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      requested: 3,
      deactivated: 1,
      unchanged: 0,
      not_found: 2,
      results: [
        { id: c, result: 'deactivated' },
        { id: orgB, result: 'not_found' },
        { id: 999999, result: 'not_found' },
      ],
      errors: [
        { id: orgB, code: 'resource.not_found', detail: 'Organization not found' },
        { id: 999999, code: 'resource.not_found', detail: 'Organization not found' },
      ],
    });
    expect((await call('GET', `/api/organizations/${orgB}`, platform)).json()).toMatchObject({ is_active: true });
    const again = await call('POST', '/api/organizations/bulk/deactivate', platform, { ids: [c] });
    expect(again.json()).toMatchObject({ deactivated: 0, unchanged: 1, results: [{ id: c, result: 'unchanged' }] });
  });

  it('validates the body', async () => {
    expect((await call('POST', '/api/organizations/bulk/deactivate', platform, { ids: [] })).statusCode).toBe(422);
    expect((await call('POST', '/api/organizations/bulk/deactivate', platform, { ids: ['x'] })).statusCode).toBe(422);
    const many = Array.from({ length: MAX_BULK_IDS + 1 }, (_, i) => i + 1);
    expect((await call('POST', '/api/organizations/bulk/deactivate', platform, { ids: many })).statusCode).toBe(422);
  });
});

describe('retention', () => {
  it('defaults to 7 days, is read with integration.read and set with org.manage', async () => {
    expect((await call('GET', `/api/organizations/${orgA}/retention`, viewerA)).json()).toEqual({
      organization_id: orgA,
      retention_days: 7,
      event_store: { removed: 0, last_removed_at: null },
    });
    const denied = await call('PUT', `/api/organizations/${orgA}/retention`, operatorA, { retention_days: 30 });
    expect(denied.statusCode).toBe(403);
    expect(denied.json().detail).toContain('org.manage');
    expect((await call('PUT', `/api/organizations/${orgA}/retention`, adminA, { retention_days: 30 })).json()).toEqual({
      organization_id: orgA,
      retention_days: 30,
      event_store: { removed: 0, last_removed_at: null },
    });
    expect((await call('GET', `/api/organizations/${orgA}/retention`, viewerA)).json()).toEqual({
      organization_id: orgA,
      retention_days: 30,
      event_store: { removed: 0, last_removed_at: null },
    });
    expect((await call('GET', `/api/organizations/${orgA}`, viewerA)).json()).toMatchObject({ retention_days: 30 });
  });

  it('accepts 1 to 3650 days only', async () => {
    for (const days of [0, 3651, 1.5]) {
      expect(
        (await call('PUT', `/api/organizations/${orgA}/retention`, adminA, { retention_days: days })).statusCode,
      ).toBe(422);
    }
    expect(
      (await call('PUT', `/api/organizations/${orgA}/retention`, adminA, { retention_days: 3650 })).statusCode,
    ).toBe(200);
    expect((await call('PUT', `/api/organizations/${orgA}/retention`, adminA, { retention_days: 1 })).statusCode).toBe(
      200,
    );
  });

  it('answers 404 outside scope', async () => {
    expect((await call('GET', `/api/organizations/${orgB}/retention`, viewerA)).statusCode).toBe(404);
    expect((await call('PUT', `/api/organizations/${orgB}/retention`, adminA, { retention_days: 9 })).statusCode).toBe(
      404,
    );
  });
});

describe('customer mappings and case-management sync', () => {
  it('reads the case customer id and partner tenant ids with org.manage', async () => {
    await t.container.database.db
      .updateTable('organizations')
      .set({ case_customer_id: 'CUST-A', partner_tenant_ids: JSON.stringify(['pt-1', 'pt-2']) })
      .where('id', '=', orgA)
      .execute();
    const res = await call('GET', `/api/organizations/${orgA}/customer-mappings`, adminA);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      organization_id: orgA,
      case_customer_id: 'CUST-A',
      partner_tenant_ids: ['pt-1', 'pt-2'],
    });
    expect((await call('GET', `/api/organizations/${orgB}/customer-mappings`, platform)).json()).toEqual({
      organization_id: orgB,
      case_customer_id: null,
      partner_tenant_ids: [],
    });
    expect((await call('GET', `/api/organizations/${orgB}/customer-mappings`, adminA)).statusCode).toBe(404);
    expect((await call('GET', `/api/organizations/${orgA}/customer-mappings`, operatorA)).statusCode).toBe(403);
  });

  it('says case management is not configured: 200, not an error, nothing faked', async () => {
    const res = await call('POST', `/api/organizations/${orgA}/sync-case-customer`, adminA);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ synced: false, reason: 'case management is not configured' });
    expect((await call('POST', `/api/organizations/${orgB}/sync-case-customer`, adminA)).statusCode).toBe(404);
  });
});

describe('DELETE /api/organizations/{org_id}/data', () => {
  it('needs the exact confirmation text: anything else is 400 saying what is required', async () => {
    for (const confirm of ['DELETE org a', 'delete Org A', 'DELETE Org A ', 'Org A']) {
      const res = await call('DELETE', `/api/organizations/${orgA}/data`, adminA, { confirm });
      expect(res.statusCode, confirm).toBe(400);
      expect(res.json().detail).toContain('"DELETE Org A"');
      expect(res.json().error.code).toBe('request.invalid');
    }
    expect((await call('DELETE', `/api/organizations/${orgA}/data`, adminA, {})).statusCode).toBe(422);
    const rows = await t.container.database.db
      .selectFrom('org_data_deletions')
      .select('id')
      .where('organization_id', '=', orgA)
      .execute();
    expect(rows).toEqual([]);
  });

  it('answers 404 outside scope and 403 without org.manage', async () => {
    expect(
      (await call('DELETE', `/api/organizations/${orgB}/data`, adminA, { confirm: 'DELETE Org B' })).statusCode,
    ).toBe(404);
    expect(
      (await call('DELETE', `/api/organizations/${orgA}/data`, operatorA, { confirm: 'DELETE Org A' })).statusCode,
    ).toBe(403);
  });

  it("queues a job that deletes only that organization's data and records completed", async () => {
    const victim = await createOrganization(t, 'Data Victim');
    const victimAdmin = await createPrincipal(t, { role: 'admin', organizationId: victim });
    await addIntegration(victim, 'v-1');
    await addIntegration(victim, 'v-2');
    const keep = await addIntegration(orgB, 'keep-me');
    const res = await call('DELETE', `/api/organizations/${victim}/data`, victimAdmin, {
      confirm: 'DELETE Data Victim',
    });
    expect(res.statusCode).toBe(202);
    const body = res.json<{ deletion_id: string; organization_id: number; state: string }>();
    expect(body).toMatchObject({ organization_id: victim, state: 'queued' });
    expect(body.deletion_id).toMatch(/^[0-9a-f-]{36}$/);

    const consumers = startConsumers(
      t.container.queue,
      t.container.jobs.filter((j) => j.queue === ORGANIZATIONS_QUEUE),
      t.container.logger,
    );
    try {
      const done = await waitForDeletion(body.deletion_id);
      expect(done.state).toBe('completed');
      expect(done.finished_at).not.toBeNull();
      expect(done.detail).toMatchObject({
        failed_steps: [],
        steps: expect.arrayContaining([
          { name: 'integrations', state: 'done', rows: 2 },
          { name: 'search_index', state: 'done', rows: 0 },
        ]),
      });
    } finally {
      await Promise.all(consumers.map((c) => c.close()));
    }
    const db = t.container.database.db;
    expect(await db.selectFrom('integrations').select('id').where('organization_id', '=', victim).execute()).toEqual(
      [],
    );
    expect(await db.selectFrom('integrations').select('id').where('id', '=', keep).execute()).toEqual([{ id: keep }]);
    // The organization itself and its members stay.
    expect((await call('GET', `/api/organizations/${victim}`, victimAdmin)).statusCode).toBe(200);
    const audit = await db
      .selectFrom('audit_log')
      .select(['outcome', 'status', 'target_id'])
      .where('operation_id', '=', 'organizations.delete_data')
      .where('status', '=', 202)
      .execute();
    expect(audit).toEqual([{ outcome: 'success', status: 202, target_id: String(victim) }]);
  });

  it('ends partial when a best-effort step fails, the rest completing', async () => {
    const victim = await createOrganization(t, 'Partial Victim');
    await addIntegration(victim, 'p-1');
    t.container.organizations.dataDeletion.addStep({
      name: 'test_index_down',
      bestEffort: true,
      run: async (orgId) => {
        if (orgId === victim) throw new Error('search index unreachable');
        return { skipped: 'not the victim' };
      },
    });
    const res = await call('DELETE', `/api/organizations/${victim}/data`, platform, {
      confirm: 'DELETE Partial Victim',
    });
    expect(res.statusCode).toBe(202);
    const consumers = startConsumers(
      t.container.queue,
      t.container.jobs.filter((j) => j.queue === ORGANIZATIONS_QUEUE),
      t.container.logger,
    );
    try {
      const done = await waitForDeletion(res.json<{ deletion_id: string }>().deletion_id);
      expect(done.state).toBe('partial');
      expect(done.detail).toMatchObject({
        failed_steps: ['test_index_down'],
        steps: expect.arrayContaining([
          { name: 'integrations', state: 'done', rows: 1 },
          { name: 'test_index_down', state: 'failed', reason: 'search index unreachable' },
        ]),
      });
    } finally {
      await Promise.all(consumers.map((c) => c.close()));
    }
    expect(
      await t.container.database.db
        .selectFrom('integrations')
        .select('id')
        .where('organization_id', '=', victim)
        .execute(),
    ).toEqual([]);
  });
});
