// Case management against a DFIR-IRIS simulator written from IRIS's public API reference
// (test/support/iris-server.ts): the health probe (up, down, cached 30 s by the app's clock,
// not configured) and the customer sync (found by name, created, stored, audited, down).
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/support/app.js';
import { createOrganization, createPrincipal, type Principal } from '../../../test/support/identity.js';
import { IRIS_VERSION, startIrisSimulator, type IrisSimulator } from '../../../test/support/iris-server.js';
import { loadConfig } from '../../config.js';
import { manualClock } from '../../core/clock.js';
import { HEALTH_CACHE_KEY } from './service.js';

type Json = Record<string, unknown>;

let iris: IrisSimulator;
let t: TestApp;
let admin: Principal;
let viewer: Principal;
let orgA: number;
let orgB: number;
const clock = manualClock(new Date());

const get = async (who: Principal, url: string) => {
  const res = await t.app.inject({ method: 'GET', url, headers: who.headers });
  return { status: res.statusCode, json: res.json() as Json, text: res.body };
};
const sync = async (who: Principal, orgId: number) => {
  const res = await t.app.inject({
    method: 'POST',
    url: `/api/organizations/${orgId}/sync-case-customer`,
    headers: who.headers,
  });
  return { status: res.statusCode, json: res.json() as Json, text: res.body };
};

beforeAll(async () => {
  iris = await startIrisSimulator();
  t = await createTestApp({
    env: {
      WEIR_CASE_URL: iris.url,
      WEIR_CASE_API_KEY: iris.apiKey,
      WEIR_CASE_TIMEOUT_MS: '500',
      WEIR_TOKEN_RATE_LIMIT: '100000',
    },
    clock,
    captureLogs: true,
  });
  orgA = await createOrganization(t, 'Acme Corp');
  orgB = await createOrganization(t, 'Globex');
  admin = await createPrincipal(t, { role: 'admin', organizationId: orgA });
  viewer = await createPrincipal(t, { role: 'viewer', organizationId: orgA });
});
afterAll(async () => {
  await t?.close();
  await iris?.close();
});
beforeEach(async () => {
  iris.down(false);
  iris.hang(false);
  await t.container.cache.del(HEALTH_CACHE_KEY);
});

describe('GET /api/case/health', () => {
  it('answers reachable with the version and latency, then from the cache for 30 s by the clock', async () => {
    const first = await get(admin, '/api/case/health');
    expect(first.status).toBe(200);
    expect(first.json).toMatchObject({
      configured: true,
      reachable: true,
      system: 'dfir-iris',
      version: IRIS_VERSION,
      api_version: '2.0.5',
      cached: false,
      detail: null,
    });
    expect(first.json.latency_ms).toEqual(expect.any(Number));
    expect(iris.requests.filter((r) => r === 'GET /api/ping')).toHaveLength(1);
    expect(iris.authorizations.at(-1)).toBe(`Bearer ${iris.apiKey}`);

    // Down now, but within 30 s: the cached answer, no call.
    iris.down();
    clock.advance(29_000);
    const calls = iris.requests.length;
    const second = await get(admin, '/api/case/health');
    expect(second.json).toMatchObject({ reachable: true, cached: true, checked_at: first.json.checked_at });
    expect(iris.requests.length).toBe(calls);

    // Past 30 s: probed again, and down.
    clock.advance(2_000);
    const third = await get(admin, '/api/case/health');
    expect(third.status).toBe(200);
    expect(third.json).toMatchObject({
      configured: true,
      reachable: false,
      cached: false,
      version: null,
      latency_ms: null,
    });
    expect(String(third.json.detail)).toContain('503');
    expect(iris.requests.length).toBe(calls + 1);
  });

  it('says unreachable when the system does not answer in time, without the key anywhere', async () => {
    iris.hang();
    const res = await get(admin, '/api/case/health');
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ reachable: false, cached: false });
    expect(res.text).not.toContain(iris.apiKey);
    expect(JSON.stringify(t.logs)).not.toContain(iris.apiKey);
  });

  it('needs org.manage', async () => {
    expect((await get(viewer, '/api/case/health')).status).toBe(403);
  });
});

describe('POST /api/organizations/{org_id}/sync-case-customer', () => {
  it('finds the customer by name, stores its id and audits it', async () => {
    const existing = iris.addCustomer('acme corp');
    const res = await sync(admin, orgA);
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({
      synced: true,
      action: 'found_by_name',
      system: 'dfir-iris',
      case_customer_id: String(existing.customer_id),
      customer_name: 'acme corp',
    });
    const mappings = await get(admin, `/api/organizations/${orgA}/customer-mappings`);
    expect(mappings.json.case_customer_id).toBe(String(existing.customer_id));
    const audit = await t.container.database.db
      .selectFrom('audit_log')
      .selectAll()
      .where('operation_id', '=', 'organizations.sync_case_customer')
      .execute();
    expect(audit.length).toBeGreaterThan(0);
    expect(JSON.stringify(audit)).toContain('found_by_name');
    expect(JSON.stringify(audit)).not.toContain(iris.apiKey);

    // Again: the stored id is verified, nothing created.
    const again = await sync(admin, orgA);
    expect(again.json).toMatchObject({
      synced: true,
      action: 'verified',
      case_customer_id: String(existing.customer_id),
    });
    expect(iris.customers).toHaveLength(1);
  });

  it('creates the customer when IRIS has none of that name, and replaces a stale id', async () => {
    const root = await createPrincipal(t, { role: 'admin' });
    await t.container.database.db
      .updateTable('organizations')
      .set({ case_customer_id: '9999' })
      .where('id', '=', orgB)
      .execute();
    const res = await sync(root, orgB);
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ synced: true, action: 'created', customer_name: 'Globex' });
    expect(String(res.json.reason)).toContain('9999');
    const created = iris.customers.find((c) => c.customer_name === 'Globex');
    expect(created).toBeDefined();
    expect(res.json.case_customer_id).toBe(String(created!.customer_id));
    const row = await t.container.database.db
      .selectFrom('organizations')
      .select('case_customer_id')
      .where('id', '=', orgB)
      .executeTakeFirstOrThrow();
    expect(row.case_customer_id).toBe(String(created!.customer_id));
  });

  it('answers 502 with the reason when IRIS is down, and changes nothing', async () => {
    iris.down();
    const before = await t.container.database.db
      .selectFrom('organizations')
      .select('case_customer_id')
      .where('id', '=', orgA)
      .executeTakeFirstOrThrow();
    const res = await sync(admin, orgA);
    expect(res.status).toBe(502);
    expect(typeof res.json.detail).toBe('string');
    expect(String(res.json.detail)).toContain('DFIR-IRIS');
    expect(res.text).not.toContain(iris.apiKey);
    const after = await t.container.database.db
      .selectFrom('organizations')
      .select('case_customer_id')
      .where('id', '=', orgA)
      .executeTakeFirstOrThrow();
    expect(after).toEqual(before);
  });

  it('keeps another organization out of reach', async () => {
    expect((await sync(admin, orgB)).status).toBe(404);
  });
});

describe('not configured', () => {
  let bare: TestApp;
  let root: Principal;
  beforeAll(async () => {
    bare = await createTestApp();
    root = await createPrincipal(bare, { role: 'admin' });
  });
  afterAll(async () => bare?.close());

  it('is a valid 200 answer for the probe and the sync', async () => {
    const health = await bare.app.inject({ method: 'GET', url: '/api/case/health', headers: root.headers });
    expect(health.statusCode).toBe(200);
    expect(health.json()).toMatchObject({
      configured: false,
      reachable: false,
      system: null,
      cached: false,
      detail: 'case management is not configured',
    });
    const orgId = await createOrganization(bare, 'Lonely');
    const res = await bare.app.inject({
      method: 'POST',
      url: `/api/organizations/${orgId}/sync-case-customer`,
      headers: root.headers,
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ synced: false, reason: 'case management is not configured', case_customer_id: null });
  });
});

describe('configuration', () => {
  it('reads the key from a file, and refuses a URL without a key', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'weir-case-'));
    const file = path.join(dir, 'key');
    writeFileSync(file, 'from-file\n');
    expect(
      loadConfig({ WEIR_CASE_URL: 'https://iris.example', WEIR_CASE_API_KEY_FILE: file }).caseManagement,
    ).toMatchObject({ url: 'https://iris.example', apiKey: 'from-file' });
    expect(() => loadConfig({ WEIR_CASE_URL: 'https://iris.example' })).toThrow(/WEIR_CASE_API_KEY/);
    expect(() =>
      loadConfig({ WEIR_CASE_URL: 'https://iris.example', WEIR_CASE_API_KEY: 'a', WEIR_CASE_API_KEY_FILE: file }),
    ).toThrow(/not both/);
    expect(loadConfig({}).caseManagement.url).toBeUndefined();
  });
});

describe('IRIS text in errors', () => {
  it('never carries the API key, even from a server that echoes the Authorization header', async () => {
    const { createServer } = await import('node:http');
    const { createIrisClient, CaseSystemError } = await import('./client.js');
    const { createNetPolicy } = await import('../../platform/net/ssrf.js');
    const server = createServer((req, res) => {
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          status: 'error',
          message: `refused; you sent ${String(req.headers.authorization)}`,
          data: { header: req.headers.authorization },
        }),
      );
    });
    await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
    try {
      const apiKey = `iris-${'k'.repeat(40)}`;
      const { port } = server.address() as { port: number };
      const client = createIrisClient({
        url: `http://127.0.0.1:${port}`,
        apiKey,
        timeoutMs: 2_000,
        net: createNetPolicy({ allowCidrs: ['127.0.0.0/8'] }),
      });
      for (const attempt of [
        () => client.addCustomer('Acme', ''),
        () => client.addCase({ customerId: '1', name: 'n', description: 'd', socId: 's' }),
      ]) {
        const err = await attempt().then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(err).toBeInstanceOf(CaseSystemError);
        expect((err as Error).message).toMatch(/IRIS refused/);
        expect((err as Error).message).not.toContain(apiKey);
        expect((err as Error).message).not.toContain('kkkkkkkk');
      }
    } finally {
      await new Promise((ok) => server.close(ok));
    }
  });
});
