// Where organization_id goes, and when it may be left out (docs/permissions.md, "Which
// organization"): a platform administrator while exactly one organization exists gets that one
// by default in every family (search, detection rules, integrations, and the config export of
// `weir config export`); with several, 422 naming where the field goes for that operation: the
// body (a search: the query definition in it) or the query string.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';
import { createOrganization, createPrincipal, injectAs, type Principal } from '../support/identity.js';

type Json = Record<string, unknown>;
interface Refusal {
  detail: string;
  error: { code: string; details: { errors: { location: string; message: string }[] } };
}
const ROOT = path.resolve(import.meta.dirname, '../..');

let t: TestApp;
let url: string;
let platform: Principal;
let acme: number;

const RULE = {
  definition: { condition: 'class_uid = 3002 and status_id = 2', severity_id: 4 },
};
const SEARCH = { query: { time: { last: '1h' } }, wait_ms: 2000 };

function weir(args: string[]): Promise<{ code: number | string; stdout: string; stderr: string }> {
  const proc = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, WEIR_URL: url, WEIR_TOKEN: platform.token },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  proc.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
  proc.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
  return new Promise((resolve) =>
    proc.on('exit', (code, signal) => resolve({ code: code ?? signal ?? -1, stdout, stderr })),
  );
}

function refusal(res: { statusCode: number; body: string; json<T>(): T }, location: string): Refusal {
  expect(res.statusCode, res.body).toBe(422);
  const body = res.json<Refusal>();
  expect(typeof body.detail).toBe('string');
  expect(body.detail).toContain(location);
  expect(body.error.details.errors.map((e) => e.location)).toEqual([location]);
  return body;
}

beforeAll(async () => {
  t = await createTestApp();
  platform = await createPrincipal(t, { role: 'admin', organizationId: null });
  url = (await t.app.listen({ port: 0, host: '127.0.0.1' })).replace(/\/+$/, '');
}, 60_000);
afterAll(async () => {
  await t?.close();
});

describe('a platform administrator and one organization', () => {
  it('with no organization yet, says to create one, naming the field', async () => {
    const res = await injectAs(t, platform, 'POST', '/api/detections/rules', { name: 'too early', ...RULE });
    expect(refusal(res, 'body/organization_id').detail).toMatch(/no organization exists yet/);
  });

  it('searches, creates a rule, an integration and a destination without organization_id', async () => {
    acme = await createOrganization(t, 'Acme');
    const search = await injectAs(t, platform, 'POST', '/api/search', SEARCH);
    expect([200, 202], search.body).toContain(search.statusCode);
    const run = search.json<Json & { run?: Json }>();
    expect(run.organization_id ?? run.run?.organization_id).toBe(acme);

    const rule = await injectAs(t, platform, 'POST', '/api/detections/rules', { name: 'Brute force', ...RULE });
    expect(rule.statusCode, rule.body).toBe(201);
    expect(rule.json<Json>().organization_id).toBe(acme);

    const integration = await injectAs(t, platform, 'POST', '/api/integrations/', {
      name: 'okta',
      platform: 'custom',
    });
    expect(integration.statusCode, integration.body).toBe(201);
    expect(integration.json<Json>().organization_id).toBe(acme);

    // A destination a platform caller creates without organization_id is global (docs/permissions.md).
    const destination = await injectAs(t, platform, 'POST', '/api/collectors/destinations', {
      name: 'shared webhook',
      type: 'http',
      config: { url: 'http://127.0.0.1:9/hook' },
    });
    expect(destination.statusCode, destination.body).toBe(201);
    expect(destination.json<Json>().organization_id).toBeNull();
  });

  it('exports the configuration with `weir config export` and no --organization', async () => {
    const out = await weir(['config', 'export']);
    expect(out.code, out.stderr).toBe(0);
    expect(JSON.parse(out.stdout)).toMatchObject({ organization: { name: 'Acme' } });
  }, 60_000);
});

describe('a platform administrator and several organizations', () => {
  beforeAll(async () => {
    await createOrganization(t, 'Globex');
  });

  it('gets 422 naming body/organization_id for a body operation, saying there are several', async () => {
    const rule = await injectAs(t, platform, 'POST', '/api/detections/rules', { name: 'Another', ...RULE });
    expect(refusal(rule, 'body/organization_id').detail).toMatch(/several organizations/);
    const integration = await injectAs(t, platform, 'POST', '/api/integrations/', { name: 'x', platform: 'custom' });
    refusal(integration, 'body/organization_id');
    // Given, it is taken as given.
    const given = await injectAs(t, platform, 'POST', '/api/detections/rules', {
      name: 'Another',
      organization_id: acme,
      ...RULE,
    });
    expect(given.statusCode, given.body).toBe(201);
  });

  it('names body/query/organization_id for a search: the field of the query definition', async () => {
    refusal(await injectAs(t, platform, 'POST', '/api/search', SEARCH), 'body/query/organization_id');
  });

  it('names query/organization_id for an operation that takes it in the query string', async () => {
    const res = await injectAs(t, platform, 'GET', '/api/collectors/config/export');
    expect(refusal(res, 'query/organization_id').detail).toMatch(/several organizations/);
    const given = await injectAs(t, platform, 'GET', `/api/collectors/config/export?organization_id=${acme}`);
    expect(given.statusCode, given.body).toBe(200);
  });

  it('`weir config export` without --organization says which option to give', async () => {
    const out = await weir(['config', 'export']);
    expect(out.code).toBe(2);
    expect(out.stderr).toMatch(/query\/organization_id is required.*several organizations/);
    expect(out.stderr).toContain('--organization');
    const given = await weir(['config', 'export', '--organization', String(acme)]);
    expect(given.code, given.stderr).toBe(0);
  }, 60_000);

  it('an organization administrator of one organization still needs no organization_id', async () => {
    const orgAdmin = await createPrincipal(t, { role: 'admin', organizationId: acme });
    const res = await injectAs(t, orgAdmin, 'POST', '/api/detections/rules', { name: 'Own', ...RULE });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json<Json>().organization_id).toBe(acme);
  });
});
