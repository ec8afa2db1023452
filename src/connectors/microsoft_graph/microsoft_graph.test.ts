import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { stream } from '../../../test/support/builtin.js';
import { collectWindow, contextPool, vendorRejection } from '../../../test/support/vendors/collect-all.js';
import {
  startMicrosoftGraphSimulator,
  type MicrosoftGraphSimulator,
} from '../../../test/support/vendors/microsoft_graph.js';
import { createPlatformRegistry } from '../../modules/integrations/platforms.js';
import { VendorError } from '../sdk.js';
import { collection } from './client.js';
import { microsoftGraphConnector as graph } from './index.js';

const MIN = 60_000;
const CUSTOMERS = [
  { id: '11111111-aaaa-4bbb-8ccc-000000000001', displayName: 'Contoso Ltd' },
  { id: '11111111-aaaa-4bbb-8ccc-000000000002', displayName: 'Fabrikam Inc' },
  { id: '11111111-aaaa-4bbb-8ccc-000000000003', displayName: 'Northwind Traders' },
  { id: '11111111-aaaa-4bbb-8ccc-000000000004', displayName: 'Tailspin Toys' },
  { id: '11111111-aaaa-4bbb-8ccc-000000000005', displayName: 'Woodgrove Bank' },
];
let sim: MicrosoftGraphSimulator;
const { ctx, closeAll } = contextPool(() => sim.config(), ['client_secret']);

beforeAll(async () => {
  sim = await startMicrosoftGraphSimulator({ customers: CUSTOMERS, customersPageSize: 2 });
});
afterEach(closeAll);
afterAll(async () => {
  await sim.close();
});

describe('microsoft_graph connector: audit log windows', () => {
  const now = Date.now();
  const from = new Date(now - 60 * MIN);
  const to = new Date(now - 10 * MIN);
  let inside: string[];
  let outside: string[];
  let audits: string[];

  beforeAll(() => {
    outside = [
      ...sim.addEvents('signins', 12, { from: new Date(from.getTime() - 20 * MIN), to: from }),
      ...sim.addEvents('signins', 12, { from: to, to: new Date(to.getTime() + 5 * MIN) }),
    ];
    inside = sim.addEvents('signins', 230, { from, to });
    audits = sim.addEvents('directory_audits', 75, { from, to });
    sim.addEvents('directory_audits', 5, { from: to, to: new Date(to.getTime() + MIN) });
  });

  it('collects a window of many pages, every sign-in exactly once and nothing outside [from, to)', async () => {
    const before = sim.requests;
    const got = await collectWindow(graph, ctx(), 'signins', from, to, 50);
    expect(got.pages).toBe(5);
    expect(sim.requests - before).toBe(5);
    expect(new Set(got.keys).size).toBe(got.keys.length);
    expect([...got.keys].sort()).toEqual([...inside].sort());
    expect(got.keys.some((k) => outside.includes(k))).toBe(false);
    expect(got.events.map((e) => e.id)).toEqual(got.keys);
    expect(sim.eventIds('signins').filter((id) => inside.includes(id))).toEqual([...got.keys].reverse());
    const sent = sim.queries.at(-5)!.params;
    expect(sent.get('$filter')).toBe(
      `createdDateTime ge ${from.toISOString()} and createdDateTime lt ${to.toISOString()}`,
    );
    expect(sent.get('$top')).toBe('50');
  });

  it('collects directory audits on activityDateTime', async () => {
    const got = await collectWindow(graph, ctx(), 'directory_audits', from, to, 20);
    expect(got.pages).toBe(4);
    expect([...got.keys].sort()).toEqual([...audits].sort());
    expect(sim.queries.at(-1)!.params.get('$filter')).toMatch(/^activityDateTime ge .* and activityDateTime lt /);
  });

  it('resumes from its page token, and starts the window over with a token of another window', async () => {
    const c = ctx();
    const first = await graph.fetchPage(c, { stream: 'signins', cursor: null, from, to, pageSize: 100 });
    expect(first.next).not.toBeNull();
    const second = await graph.fetchPage(c, { stream: 'signins', cursor: first.next, from, to, pageSize: 100 });
    expect(second.keys.some((k) => first.keys.includes(k))).toBe(false);
    // A token of another window is not followed into this one: the window starts at its first page.
    const shorter = { from, to: new Date(to.getTime() - MIN) };
    const otherWindow = await graph.fetchPage(c, { stream: 'signins', cursor: first.next, ...shorter, pageSize: 100 });
    const fresh = await graph.fetchPage(c, { stream: 'signins', cursor: null, ...shorter, pageSize: 100 });
    expect(otherWindow.keys).toEqual(fresh.keys);
    const foreign = JSON.stringify({
      ...JSON.parse(first.next!),
      link: JSON.parse(first.next!).link.replace(sim.url, 'http://127.0.0.2:9'),
    });
    const again = await graph.fetchPage(c, { stream: 'signins', cursor: foreign, from, to, pageSize: 100 });
    expect(again.keys).toEqual(first.keys);
  });

  it('waits out a short 429 (Retry-After) and succeeds', async () => {
    sim.rateLimit(1, 1);
    const got = await collectWindow(graph, ctx(), 'signins', from, to, 1000);
    expect(got.keys).toHaveLength(inside.length);
  });

  it('gives up on a long 429 with rate_limited and the time to come back', async () => {
    sim.rateLimit(1, 3600);
    const err = await vendorRejection(
      graph.fetchPage(ctx(), { stream: 'signins', cursor: null, from, to, pageSize: 10 }),
    );
    expect(err.kind).toBe('rate_limited');
    expect(err.details.retryAfterMs).toBe(3_600_000);
  });

  it('retries 503 and 504 answers', async () => {
    sim.serverError(2);
    const before = sim.requests;
    const got = await collectWindow(graph, ctx(), 'directory_audits', from, to, 1000);
    expect(got.keys).toHaveLength(audits.length);
    expect(sim.requests - before).toBe(3);
  });

  it('refreshes an expired token once, and fails with auth when Graph keeps refusing', async () => {
    const c = ctx();
    const tokens = () => sim.tokenRequests.filter((t) => t.issued).length;
    await collectWindow(graph, c, 'signins', from, to, 1000);
    const issued = tokens();
    await collectWindow(graph, c, 'signins', from, to, 1000);
    expect(tokens()).toBe(issued);
    sim.expireTokens();
    const got = await collectWindow(graph, c, 'signins', from, to, 1000);
    expect(got.keys).toHaveLength(inside.length);
    expect(tokens()).toBe(issued + 1);

    sim.refuseTokens(true);
    try {
      const err = await vendorRejection(
        graph.fetchPage(c, { stream: 'signins', cursor: null, from, to, pageSize: 10 }),
      );
      expect([err.kind, err.details.status]).toEqual(['auth', 401]);
      expect(err.message).toMatch(/InvalidAuthenticationToken/);
      expect(tokens()).toBe(issued + 2);
    } finally {
      sim.refuseTokens(false);
    }
  });

  it('maps collected sign-ins and directory audits with the built-in mappings', async () => {
    const end = new Date(from.getTime() + 10 * MIN);
    for (const name of ['signins', 'directory_audits']) {
      const got = await collectWindow(graph, ctx(), name, from, end, 1000);
      expect(got.events.length).toBeGreaterThan(5);
      const { map } = stream('microsoft_graph', name);
      for (const raw of got.events) expect(map(raw).metadata.uid).toBe(raw.id);
    }
  });
});

describe('microsoft_graph connector: security alerts', () => {
  const now = Date.now();
  const a = { from: new Date(now - 120 * MIN), to: new Date(now - 60 * MIN) };
  const b = { from: a.to, to: new Date(now - 10 * MIN) };

  it('collects alerts by lastUpdateDateTime and collects an updated alert again under a new key', async () => {
    const added = sim.addEvents('security_alerts', 23, a);
    const first = await collectWindow(graph, ctx(), 'security_alerts', a.from, a.to, 5);
    expect(first.pages).toBe(5);
    expect([...first.keys].sort()).toEqual([...added].sort());
    expect(first.keys.every((k, i) => k === `${first.events[i]!.id}@${first.events[i]!.lastUpdateDateTime}`)).toBe(
      true,
    );
    expect(sim.queries.at(-1)!.params.get('$filter')).toBe(
      `lastUpdateDateTime ge ${a.from.toISOString()} and lastUpdateDateTime lt ${a.to.toISOString()}`,
    );

    const updated = sim.updateAlert(added[3]!, new Date(b.from.getTime() + 5 * MIN), { status: 'resolved' });
    const later = await collectWindow(graph, ctx(), 'security_alerts', b.from, b.to, 500);
    expect(later.keys).toEqual([updated]);
    expect(later.events[0]!.id).toBe(added[3]!.split('@')[0]);
    expect(updated).not.toBe(added[3]);
    const { map } = stream('microsoft_graph', 'security_alerts');
    const finding = map(later.events[0]!);
    expect([finding.activity_name, finding.status, finding.time]).toEqual([
      'Close',
      'Resolved',
      b.from.getTime() + 5 * MIN,
    ]);
    for (const raw of first.events) expect(map(raw).finding_info.uid).toBe(raw.id);
  });
});

describe('microsoft_graph connector: managed provider (GDAP)', () => {
  const partner = () => ({ ...sim.config(), partner: true });

  it('discovers the customer tenants across nextLink pages', async () => {
    const before = sim.requests;
    const found = await graph.tenants!.discover(ctx(partner()));
    expect(sim.requests - before).toBe(3);
    expect(found).toEqual(
      CUSTOMERS.map((c) => ({
        external_id: c.id,
        name: c.displayName,
        domain: null,
        details: { tenant_id: c.id, source: 'delegatedAdminCustomers' },
      })),
    );
    await expect(graph.test(ctx(partner()))).resolves.toMatch(/delegated admin customers \(2 on the first page\)/);
  });

  it('collects a customer tenant with the partner app, and the parent collects nothing itself', async () => {
    const customer = CUSTOMERS[1]!.id;
    const from = new Date(Date.now() - 40 * MIN);
    const to = new Date(Date.now() - 5 * MIN);
    const own = sim.addEvents('signins', 7, { from, to }, { tenant: customer });
    const child = ctx({ ...partner(), partner: false }, { tenantId: customer });
    const got = await collectWindow(graph, child, 'signins', from, to, 1000);
    expect([...got.keys].sort()).toEqual([...own].sort());
    expect(sim.tokenRequests.at(-1)).toEqual({ tenant: customer, issued: true });
    expect(sim.queries.at(-1)!.tenant).toBe(customer);
    await expect(graph.test(child)).resolves.toContain(`tenant ${customer}`);

    const err = await vendorRejection(
      graph.fetchPage(ctx(partner()), { stream: 'signins', cursor: null, from, to, pageSize: 10 }),
    );
    expect(err.kind).toBe('config');
    const stranger = await vendorRejection(
      graph.test(ctx(sim.config(), { tenantId: '22222222-aaaa-4bbb-8ccc-000000000009' })),
    );
    expect(stranger.kind).toBe('auth');
    expect(stranger.message).toMatch(/AADSTS90002/);
  });
});

describe('microsoft_graph connector: credentials and declaration', () => {
  it('test() gets a token and reads one sign-in; refused credentials are auth and never echo the secret', async () => {
    await expect(graph.test(ctx())).resolves.toMatch(
      new RegExp(`token for tenant ${sim.tenantId} and read its sign-in log`),
    );
    expect(sim.queries.at(-1)!.params.get('$top')).toBe('1');
    const wrongSecret = { ...sim.config(), client_secret: 'not-the-secret-0123456789' };
    const err = await vendorRejection(graph.test(ctx(wrongSecret)));
    expect([err.kind, err.details.status]).toEqual(['auth', 401]);
    expect(err.message).toMatch(/AADSTS7000215/);
    expect(err.message).not.toContain('not-the-secret-0123456789');
    expect(err.message).not.toContain('Trace ID');
    const wrongApp = await vendorRejection(
      graph.test(ctx({ ...sim.config(), client_id: '33333333-aaaa-4bbb-8ccc-000000000000' })),
    );
    expect([wrongApp.kind, wrongApp.details.status]).toEqual(['auth', 400]);
    expect(wrongApp.message).toMatch(/AADSTS700016/);
  });

  it('refuses a nextLink that leaves the configured Graph', () => {
    const t = { login: new URL(sim.url), graph: new URL(sim.url), tenant: sim.tenantId, clientId: sim.clientId };
    expect(() => collection({ value: [], '@odata.nextLink': 'https://attacker.example/v1.0/x' }, t, 'signIns')).toThrow(
      /outside the configured Graph/,
    );
    expect(() => collection({ values: [] }, t, 'signIns')).toThrow(VendorError);
  });

  const platform = createPlatformRegistry([
    {
      name: 'microsoft_graph',
      display_name: 'Graph',
      kind: 'pull',
      description: '',
      config_schema: graph.config_schema,
    },
  ]).get('microsoft_graph')!;

  it('requires the app credentials only when collecting; the client secret is a secret', () => {
    expect(platform.secretFields).toEqual(['client_secret']);
    expect(platform.validate({})).toEqual([]);
    expect(platform.validate({ collect: true }).map((i) => i.location)).toEqual(
      expect.arrayContaining(['body/config/tenant_id', 'body/config/client_id', 'body/config/client_secret']),
    );
    const ok = { collect: true, tenant_id: sim.tenantId, client_id: sim.clientId, client_secret: 's3cr3t~value' };
    expect(platform.validate(ok)).toEqual([]);
    expect(platform.validate({ ...ok, tenant_id: 'contoso.onmicrosoft.com', partner: true })).toEqual([]);
    expect(platform.validate({ ...ok, tenant_id: '../../evil' })).not.toEqual([]);
    expect(platform.validate({ ...ok, client_id: 'not-a-guid' })).not.toEqual([]);
    expect(platform.validate({ ...ok, graph_url: 'ftp://graph.example' })).not.toEqual([]);
  });

  it('declares three date streams with the vendor retention and page limits', () => {
    expect(graph.streams.map((s) => [s.name, s.cursor, s.retentionDays, s.pageSize])).toEqual([
      ['signins', 'date', 30, 1000],
      ['directory_audits', 'date', 30, 1000],
      ['security_alerts', 'date', 180, 500],
    ]);
    for (const s of graph.streams) expect(s.settleMs).toBeLessThanOrEqual(5 * MIN);
  });
});
