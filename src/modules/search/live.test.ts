// Live queries through the API against the vendor simulators (docs/live-queries.md): Community
// refuses them (403), Enterprise runs them through the integration's connector: the simulator
// sees the translated filter, the rows come back normalized by the live mapping, the local
// filter removes what the vendor filter let through, the page cap stops reading, a 429 is
// waited out, a vendor failure ends the run failed with a reason.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintLicense } from '../../../scripts/mint-license.js';
import { createTestApp, type TestApp } from '../../../test/support/app.js';
import { createOrganization, createPrincipal, type Principal } from '../../../test/support/identity.js';
import { startAwsCloudtrailSimulator } from '../../../test/support/vendors/aws_cloudtrail.js';
import { startCrowdstrikeFalconSimulator } from '../../../test/support/vendors/crowdstrike_falcon.js';
import { startGithubSimulator } from '../../../test/support/vendors/github.js';
import { startGoogleWorkspaceSimulator } from '../../../test/support/vendors/google_workspace.js';
import { startMicrosoftGraphSimulator } from '../../../test/support/vendors/microsoft_graph.js';
import { startOktaSimulator } from '../../../test/support/vendors/okta.js';
import type { VendorSimulator } from '../../../test/support/vendors/types.js';
import type { Consumer } from '../../platform/queue/port.js';
import { startConsumers } from '../../roles/jobs.js';
import { SEARCH_QUEUE } from './runs.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- API answers
const MIN = 60_000;
let t: TestApp;
let root: Principal;
let admin: Principal;
let org: number;
let consumers: Consumer[] = [];
const sims: VendorSimulator[] = [];
const window = () => ({ from: new Date(Date.now() - 50 * MIN), to: new Date(Date.now() - 10 * MIN) });

async function call(method: string, url: string, who: Principal, payload?: unknown) {
  return t.app.inject({
    method: method as 'GET',
    url,
    headers: who.headers,
    ...(payload === undefined ? {} : { payload: payload as Json }),
  });
}

async function integration(platform: string, sim: VendorSimulator): Promise<number> {
  sims.push(sim);
  const res = await call('POST', '/api/integrations/', admin, {
    organization_id: org,
    platform,
    name: `${platform} live ${sims.length}`,
    config: sim.config(),
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json<{ id: number }>().id;
}

let enterprise = false;
/** Activates an Enterprise license once (after the Community test, which runs first). */
async function activateEnterprise(): Promise<void> {
  if (enterprise) return;
  const res = await call('POST', '/api/licenses/activate', root, { license_token: await mintLicense() });
  expect(res.statusCode, res.body).toBe(200);
  enterprise = true;
}

/** Runs a live query (Enterprise) and waits for it; the answer's JSON. */
async function live(integrationId: number, query: string, extra: Json = {}): Promise<Json> {
  await activateEnterprise();
  const res = await call('POST', '/api/search', admin, {
    query: { organization_id: org, integration_id: integrationId, time: { last: '1h' }, query, limit: 1000, ...extra },
    wait_ms: 30_000,
  });
  expect(res.statusCode, res.body).toBe(200);
  return res.json<Json>();
}

beforeAll(async () => {
  t = await createTestApp({
    env: {
      WEIR_TOKEN_RATE_LIMIT: '1000000',
      WEIR_OUTBOUND_ALLOW_CIDRS: '127.0.0.0/8',
      WEIR_SEARCH_LIVE_MAX_PAGES: '2',
    },
  });
  org = await createOrganization(t, 'Live');
  root = await createPrincipal(t, { role: 'admin' });
  admin = await createPrincipal(t, { role: 'admin', organizationId: org });
  consumers = startConsumers(
    t.container.queue,
    t.container.jobs.filter((j) => j.queue === SEARCH_QUEUE),
    t.container.logger,
  );
});
afterAll(async () => {
  await Promise.all(consumers.map((c) => c.close()));
  await t?.close();
  await Promise.all(sims.map((s) => s.close()));
});

describe('live queries: the edition', () => {
  it('Community refuses a live query with 403 edition.enterprise_required and stores no run', async () => {
    const id = await integration('okta', await startOktaSimulator());
    const res = await call('POST', '/api/search', admin, {
      query: { organization_id: org, integration_id: id, query: 'class_uid = 3002' },
    });
    expect(res.statusCode, res.body).toBe(403);
    expect(res.json().error.code).toBe('edition.enterprise_required');
    expect(typeof res.json().detail).toBe('string');
    const history = (await call('GET', '/api/search/history', admin)).json<Json>();
    expect(history.items).toEqual([]);
  });

  it('refuses an integration outside the organization (404) and a stream the platform lacks (422)', async () => {
    await activateEnterprise();
    const missing = await call('POST', '/api/search', admin, {
      query: { organization_id: org, integration_id: 999_999 },
    });
    expect(missing.statusCode).toBe(404);
    const id = await integration('okta', await startOktaSimulator());
    const stream = await call('POST', '/api/search', admin, {
      query: { organization_id: org, integration_id: id, stream: 'nope' },
    });
    expect(stream.statusCode).toBe(422);
    expect(stream.json().error.code).toBe('search.live_unsupported');
  });
});

describe('live queries: Okta', () => {
  let id: number;
  let sim: Awaited<ReturnType<typeof startOktaSimulator>>;
  const users = ['ana@example.com', 'ANA@example.com', 'bob@example.com', 'carl@example.com'];
  let expected: string[];

  beforeAll(async () => {
    sim = await startOktaSimulator();
    id = await integration('okta', sim);
    const ids = sim.addPatched('system_log', 40, window(), (raw, i) => {
      (raw.actor as Json).alternateId = users[i % 4];
    });
    // The fixtures cycle through 10 event types; indexes 0, 1 and 4 are user.session.*.
    expected = ids.filter((_, i) => i % 4 === 0 && [0, 1, 4].includes(i % 10));
  });

  it('pushes the filter down, normalizes the rows and narrows what Okta matched case-insensitively', async () => {
    const out = await live(
      id,
      'actor.user.name = "ana@example.com" and metadata.event_code startswith "user.session" and class_uid = 3002',
    );
    expect(out.state).toBe('completed');
    expect(sim.filters.at(-1)).toBe('actor.alternateId eq "ana@example.com" and eventType sw "user.session"');
    expect(out.rows.map((r: Json) => r.event_id).sort()).toEqual([...expected].sort());
    for (const r of out.rows) {
      expect(r).toMatchObject({
        integration_id: id,
        stream: 'system_log',
        event: { class_uid: 3002, actor: { user: { name: 'ana@example.com' } } },
      });
    }
    // The simulator also answered ANA@example.com; the local filter removed those.
    expect(out.live).toMatchObject({
      platform: 'okta',
      stream: 'system_log',
      pushed_down: sim.filters.at(-1),
      page_cap: 2,
      complete: true,
    });
    expect(out.live.fetched).toBeGreaterThan(out.rows.length);
    expect(out.matched).toBe(expected.length);
  });

  it('pulls everything when an OR has a branch Okta cannot filter, then filters locally; aggregations as the store computes them', async () => {
    const before = sim.filters.length;
    const out = await live(id, 'actor.user.name = "bob@example.com" or severity_id = 99', {
      fields: ['actor.user.name', 'time'],
      sort: [{ field: 'time', order: 'asc' }],
      aggregations: [{ type: 'count' }, { type: 'top', field: 'actor.user.name' }],
    });
    expect(sim.filters.length).toBe(before);
    expect(out.live.pushed_down).toBeNull();
    expect(out.matched).toBe(10);
    expect(out.rows.every((r: Json) => r.fields['actor.user.name'] === 'bob@example.com')).toBe(true);
    const times = out.rows.map((r: Json) => r.fields.time as number);
    expect([...times].sort((a, b) => a - b)).toEqual(times);
    expect(out.aggregations).toEqual([
      { type: 'count', value: 10 },
      { type: 'top', field: 'actor.user.name', values: [{ value: 'bob@example.com', count: 10 }] },
    ]);
  });

  it('waits out a short 429 and answers', async () => {
    sim.rateLimit(1, 1);
    const out = await live(id, 'actor.user.name = "carl@example.com"');
    expect(out.state).toBe('completed');
    expect(out.matched).toBe(10);
    expect(out.live.rate_limited).toBe(1);
  });

  it('a long 429 fails the run with the time to come back; the run is in the history', async () => {
    sim.rateLimit(1, 3600);
    const out = await live(id, 'actor.user.name = "carl@example.com"');
    expect(out.state).toBe('failed');
    expect(out.error).toMatch(/vendor rate_limited.*run the query again later/);
    const history = (await call('GET', '/api/search/history', admin)).json<Json>();
    expect(history.items.find((r: Json) => r.id === out.id)).toMatchObject({
      state: 'failed',
      query: { integration_id: id },
    });
  });
});

describe('live queries: Microsoft Graph', () => {
  it('startswith and eq in $filter beside the window; Graph matches case-insensitively, the local filter does not', async () => {
    const sim = await startMicrosoftGraphSimulator();
    const id = await integration('microsoft_graph', sim);
    // Fixture 1 is jane.doe in "Office 365 Exchange Online"; every other one of them is renamed in lower case.
    const ids = sim.addPatched('signins', 24, window(), (raw, i) => {
      if (i % 12 === 1) raw.appDisplayName = 'office portal';
    });
    // user.name may come from a service principal's name (the mapping's fallback): it stays local.
    const out = await live(id, 'actor.app_name startswith "office" and user.name = "jane.doe@example.com"', {
      stream: 'signins',
    });
    expect(out.state, out.error).toBe('completed');
    expect(sim.filters.at(-1)).toMatch(
      /^createdDateTime ge \S+ and createdDateTime lt \S+ and startswith\(appDisplayName, 'office'\)$/,
    );
    expect(out.live.pushed_down).toBe("startswith(appDisplayName, 'office')");
    expect(out.live.fetched).toBeGreaterThan(2);
    expect(out.live.fetched).toBeLessThan(24);
    expect(out.rows.map((r: Json) => r.event_id).sort()).toEqual(ids.filter((_, i) => i % 12 === 1).sort());
    expect(out.rows[0].event).toMatchObject({
      actor: { app_name: 'office portal' },
      user: { name: 'jane.doe@example.com' },
    });
  });
});

describe('live queries: AWS CloudTrail', () => {
  let sim: Awaited<ReturnType<typeof startAwsCloudtrailSimulator>>;
  let id: number;
  let ids: string[];

  beforeAll(async () => {
    sim = await startAwsCloudtrailSimulator();
    id = await integration('aws_cloudtrail', sim);
    ids = sim.addEvents('cloudtrail', 150, window());
  });

  it('sends one lookup attribute and filters the rest locally', async () => {
    const out = await live(
      id,
      'api.service.name = "iam.amazonaws.com" and metadata.event_code in ("CreateUser", "DeleteUser")',
    );
    expect(out.state, out.error).toBe('completed');
    expect(sim.filters.at(-1)).toBe(
      JSON.stringify([{ AttributeKey: 'EventSource', AttributeValue: 'iam.amazonaws.com' }]),
    );
    // Fixtures 3 to 6 are IAM calls (60 events, two pages of 50); 3 and 6 are CreateUser and DeleteUser.
    expect(out.live).toMatchObject({ fetched: 60, pages: 2, complete: true });
    expect(out.rows.map((r: Json) => r.event_id).sort()).toEqual(ids.filter((_, i) => [3, 6].includes(i % 10)).sort());
  });

  it('stops at the page cap and says so', async () => {
    const out = await live(id, 'class_uid > 0');
    expect(out.state, out.error).toBe('completed');
    expect(out.live).toMatchObject({ pushed_down: null, pages: 2, page_cap: 2, complete: false, fetched: 100 });
    expect(out.matched).toBe(100);
  });
});

describe('live queries: GitHub', () => {
  it('action: and actor: in the phrase; the repository (entity.name) is filtered locally', async () => {
    const sim = await startGithubSimulator();
    const id = await integration('github', sim);
    const ids = sim.addPatched('audit_log', 36, window(), (raw, i) => {
      raw.repo = i % 2 ? 'example-corp/api' : 'example-corp/web';
    });
    const out = await live(
      id,
      'metadata.event_code = "repo.create" and actor.user.name = "jane-doe-example" and entity.name = "example-corp/web"',
    );
    expect(out.state, out.error).toBe('completed');
    expect(sim.filters.at(-1)).toBe('action:repo.create actor:jane-doe-example');
    // Fixture 4 is jane-doe-example's repo.create: indexes 4, 13, 22 and 31; the even ones are in example-corp/web.
    expect(out.live.fetched).toBe(4);
    expect(out.rows.map((r: Json) => r.event_id).sort()).toEqual(
      ids.filter((_, i) => i % 9 === 4 && i % 2 === 0).sort(),
    );
  });
});

describe('live queries: CrowdStrike Falcon', () => {
  it("field:'value' in FQL beside the window; NOT is applied locally", async () => {
    const sim = await startCrowdstrikeFalconSimulator();
    const id = await integration('crowdstrike_falcon', sim);
    const ids = sim.addEvents('alerts', 20, window());
    const out = await live(id, 'device.name = "LT-JDOE-01" and not finding_info.analytic.name = "PUPAdwareDetected"');
    expect(out.state, out.error).toBe('completed');
    expect(sim.filters.at(-1)).toBe("device.hostname:'LT-JDOE-01'");
    // Fixtures 1 and 4 are on LT-JDOE-01; 4 is the adware alert.
    expect(out.live.fetched).toBe(8);
    // The row's id is the connector's key (composite id @ updated_timestamp); metadata.uid is the alert's composite id.
    expect(out.rows.map((r: Json) => r.event.metadata.uid).sort()).toEqual(ids.filter((_, i) => i % 5 === 1).sort());
  });
});

describe('live queries: Google Workspace', () => {
  it('userKey, eventName and filters; the address is filtered locally', async () => {
    const sim = await startGoogleWorkspaceSimulator();
    const id = await integration('google_workspace', sim);
    sim.addPatched('login', 24, window(), (raw, i) => {
      if (i % 16 === 1) raw.ipAddress = '10.1.1.1';
    });
    const out = await live(
      id,
      'actor.user.name = "jane.doe@example.com" and metadata.event_code = "login_failure" and status_detail = "login_failure_invalid_password" and src_endpoint.ip = "10.1.1.1"',
      { stream: 'login' },
    );
    expect(out.state, out.error).toBe('completed');
    expect(sim.filters.at(-1)).toBe(
      'userKey=jane.doe@example.com eventName=login_failure filters=login_failure_type==login_failure_invalid_password',
    );
    // Fixture 1 is jane's failed login: indexes 1, 9 and 17; 1 and 17 came from 10.1.1.1.
    expect(out.live.fetched).toBe(3);
    expect(out.matched).toBe(2);
    for (const r of out.rows)
      expect(r.event).toMatchObject({
        src_endpoint: { ip: '10.1.1.1' },
        actor: { user: { name: 'jane.doe@example.com' } },
      });
  });
});
