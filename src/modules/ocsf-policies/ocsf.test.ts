import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/support/app.js';
import {
  createOrganization,
  createPrincipal,
  type Principal,
  injectAs,
  insertIntegration,
} from '../../../test/support/identity.js';
import { windowStart } from './service.js';

let t: TestApp;
let orgA: number;
let orgB: number;
let intA: number;
let intA2: number;
let intB: number;
let root: Principal;
let adminA: Principal;
let operatorA: Principal;

type Json = Record<string, unknown>;

const call = (who: Principal, method: 'GET' | 'PUT', url: string, payload?: unknown) =>
  injectAs(t, who, method, url, payload);

const integration = (organizationId: number, name: string) => insertIntegration(t, organizationId, name);

const DAY = 86_400_000;
const dayAgo = (n: number) => new Date(Date.now() - n * DAY).toISOString().slice(0, 10);

async function counters(row: {
  org: number;
  integration: number;
  classUid: number;
  daysAgo: number;
  valid: number;
  invalid: number;
  lastError?: string;
  lastInvalidAt?: Date;
}) {
  await t.container.database.db
    .insertInto('ocsf_compliance')
    .values({
      organization_id: row.org,
      integration_id: row.integration,
      class_uid: row.classUid,
      day: dayAgo(row.daysAgo),
      valid: row.valid,
      invalid: row.invalid,
      last_error: row.lastError ?? null,
      last_invalid_at: row.lastInvalidAt ?? null,
    })
    .execute();
}

beforeAll(async () => {
  t = await createTestApp({ env: { WEIR_TOKEN_RATE_LIMIT: '1000000' } });
  orgA = await createOrganization(t, 'Org A');
  orgB = await createOrganization(t, 'Org B');
  intA = await integration(orgA, 'a-okta');
  intA2 = await integration(orgA, 'a-github');
  intB = await integration(orgB, 'b-okta');
  root = await createPrincipal(t, { role: 'admin' });
  adminA = await createPrincipal(t, { role: 'admin', organizationId: orgA });
  operatorA = await createPrincipal(t, { role: 'operator', organizationId: orgA });
});
afterAll(async () => t?.close());

describe('OCSF policies', () => {
  beforeEach(async () => {
    await t.container.database.db.deleteFrom('ocsf_policies').execute();
  });

  it('lists every organization in scope, strict by default', async () => {
    const res = await call(adminA, 'GET', '/api/ocsf/policies');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      items: [
        { organization_id: orgA, organization_name: 'Org A', mode: 'strict', is_default: true, updated_at: null },
      ],
    });
    const all = (await call(root, 'GET', '/api/ocsf/policies')).json<{ items: Json[] }>().items;
    expect(all.map((p) => p.organization_id)).toEqual([orgA, orgB]);
  });

  it('sets a mode: 200 with the policy, listed afterwards, audited, updated_at moving forward', async () => {
    const res = await call(adminA, 'PUT', `/api/ocsf/policies/${orgA}`, { mode: 'lenient' });
    expect(res.statusCode).toBe(200);
    const first = res.json<Json>();
    expect(first).toMatchObject({
      organization_id: orgA,
      organization_name: 'Org A',
      mode: 'lenient',
      is_default: false,
    });
    expect(Date.now() - Date.parse(String(first.updated_at))).toBeLessThan(60_000);
    const listed = (await call(root, 'GET', '/api/ocsf/policies')).json<{ items: Json[] }>().items;
    expect(listed.find((p) => p.organization_id === orgA)).toMatchObject({ mode: 'lenient', is_default: false });
    expect(listed.find((p) => p.organization_id === orgB)).toMatchObject({ mode: 'strict', is_default: true });

    // Workers notice a change by max(updated_at): every change must move it forward.
    const second = (await call(adminA, 'PUT', `/api/ocsf/policies/${orgA}`, { mode: 'strict' })).json<Json>();
    expect(second).toMatchObject({ mode: 'strict', is_default: false });
    expect(Date.parse(String(second.updated_at))).toBeGreaterThan(Date.parse(String(first.updated_at)));
    const stored = await t.container.database.db
      .selectFrom('ocsf_policies')
      .selectAll()
      .where('organization_id', '=', orgA)
      .executeTakeFirstOrThrow();
    expect(stored).toMatchObject({ mode: 'strict' });

    const audit = await t.container.database.db
      .selectFrom('audit_log')
      .selectAll()
      .where('operation_id', '=', 'ocsf.set_policy')
      .orderBy('seq', 'desc')
      .executeTakeFirstOrThrow();
    expect(audit).toMatchObject({
      target_type: 'ocsf_policy',
      target_id: String(orgA),
      organization_id: orgA,
      outcome: 'success',
    });
    expect(audit.details).toMatchObject({ from: 'lenient', to: 'strict' });
  });

  it('answers 404 for an organization outside the scope or unknown, 422 for a bad body, 403 without user.manage', async () => {
    expect((await call(adminA, 'PUT', `/api/ocsf/policies/${orgB}`, { mode: 'lenient' })).statusCode).toBe(404);
    expect((await call(root, 'PUT', '/api/ocsf/policies/999999', { mode: 'lenient' })).statusCode).toBe(404);
    for (const body of [{ mode: 'loose' }, {}, { mode: 'strict', extra: 1 }]) {
      const res = await call(adminA, 'PUT', `/api/ocsf/policies/${orgA}`, body);
      expect(res.statusCode, JSON.stringify(body)).toBe(422);
      expect(typeof res.json().detail).toBe('string');
    }
    expect((await call(operatorA, 'PUT', `/api/ocsf/policies/${orgA}`, { mode: 'lenient' })).statusCode).toBe(403);
    expect((await call(operatorA, 'GET', '/api/ocsf/policies')).statusCode).toBe(403);
    expect(await t.container.database.db.selectFrom('ocsf_policies').selectAll().execute()).toEqual([]);
  });
});

describe('GET /api/ocsf/compliance', () => {
  beforeAll(async () => {
    const older = new Date(Date.now() - 3 * DAY);
    const latest = new Date(Date.now() - DAY);
    // Authentication (3002) on integration A: three days in the window, one outside it.
    await counters({ org: orgA, integration: intA, classUid: 3002, daysAgo: 0, valid: 90, invalid: 0 });
    await counters({
      org: orgA,
      integration: intA,
      classUid: 3002,
      daysAgo: 1,
      valid: 50,
      invalid: 10,
      lastError: 'user.uid: missing',
      lastInvalidAt: latest,
    });
    await counters({
      org: orgA,
      integration: intA,
      classUid: 3002,
      daysAgo: 3,
      valid: 40,
      invalid: 10,
      lastError: 'time: not a timestamp',
      lastInvalidAt: older,
    });
    await counters({
      org: orgA,
      integration: intA,
      classUid: 3002,
      daysAgo: 10,
      valid: 1000,
      invalid: 1000,
      lastError: 'too old',
    });
    // API activity (6003) on integration A2, and a class the catalog does not know.
    await counters({ org: orgA, integration: intA2, classUid: 6003, daysAgo: 2, valid: 7, invalid: 0 });
    await counters({ org: orgA, integration: intA2, classUid: 9999, daysAgo: 0, valid: 0, invalid: 0 });
    await counters({
      org: orgB,
      integration: intB,
      classUid: 3002,
      daysAgo: 0,
      valid: 1,
      invalid: 1,
      lastError: 'b',
      lastInvalidAt: latest,
    });
  });

  it('sums the last 7 days per integration and class, with rates, the latest error and the totals', async () => {
    const res = await call(adminA, 'GET', '/api/ocsf/compliance');
    expect(res.statusCode).toBe(200);
    const body = res.json<{ window_days: number; since_day: string; items: Json[]; totals: Json }>();
    expect(body.window_days).toBe(7);
    expect(body.since_day).toBe(dayAgo(6));
    expect(body.items).toEqual([
      {
        organization_id: orgA,
        integration_id: intA,
        integration_name: 'a-okta',
        class_uid: 3002,
        class_name: 'Authentication',
        valid: 180,
        invalid: 20,
        compliance_rate: 0.9,
        last_error: 'user.uid: missing',
        last_invalid_at: expect.stringMatching(/Z$/),
      },
      {
        organization_id: orgA,
        integration_id: intA2,
        integration_name: 'a-github',
        class_uid: 6003,
        class_name: 'API Activity',
        valid: 7,
        invalid: 0,
        compliance_rate: 1,
        last_error: null,
        last_invalid_at: null,
      },
      {
        organization_id: orgA,
        integration_id: intA2,
        integration_name: 'a-github',
        class_uid: 9999,
        class_name: null,
        valid: 0,
        invalid: 0,
        compliance_rate: null,
        last_error: null,
        last_invalid_at: null,
      },
    ]);
    expect(body.totals).toEqual({ valid: 187, invalid: 20, compliance_rate: 187 / 207 });
  });

  it('takes days (1 to 30), integration_id and organization_id', async () => {
    const today = (await call(adminA, 'GET', '/api/ocsf/compliance?days=1')).json<{ items: Json[]; totals: Json }>();
    expect(today.items.map((i) => [i.class_uid, i.valid])).toEqual([
      [3002, 90],
      [9999, 0],
    ]);
    expect(today.totals).toEqual({ valid: 90, invalid: 0, compliance_rate: 1 });
    const month = (await call(adminA, 'GET', `/api/ocsf/compliance?days=30&integration_id=${intA}`)).json<{
      items: Json[];
    }>();
    expect(month.items).toHaveLength(1);
    expect(month.items[0]).toMatchObject({ valid: 1180, invalid: 1020, last_error: 'user.uid: missing' });
    const b = (await call(root, 'GET', `/api/ocsf/compliance?org_id=${orgB}`)).json<{ items: Json[] }>();
    expect(b.items.map((i) => i.integration_id)).toEqual([intB]);
    for (const q of ['days=0', 'days=31', 'days=x', 'class_uid=3002']) {
      expect((await call(adminA, 'GET', `/api/ocsf/compliance?${q}`)).statusCode, q).toBe(422);
    }
  });

  it('reports nothing outside the scope; a window without events has a null rate', async () => {
    const foreign = (await call(adminA, 'GET', `/api/ocsf/compliance?organization_id=${orgB}`)).json();
    expect(foreign).toMatchObject({ items: [], totals: { valid: 0, invalid: 0, compliance_rate: null } });
    expect((await call(operatorA, 'GET', '/api/ocsf/compliance')).statusCode).toBe(403);
  });
});

describe('windowStart', () => {
  it('counts back whole UTC days, today included', () => {
    expect(windowStart(new Date('2025-03-01T23:59:59Z'), 1)).toBe('2025-03-01');
    expect(windowStart(new Date('2025-03-01T00:00:00Z'), 7)).toBe('2025-02-23');
    expect(windowStart(new Date('2024-03-01T12:00:00+05:00'), 2)).toBe('2024-02-29');
  });
});
