// Detection rules (a custom one and one from Sigma), saved queries and schedules in the
// configuration bundle, through the API: exported by name, imported into an empty
// organization where the rule fires on that organization's events, the schedule runs that
// organization's copy of the query; a changed object is an update (a rule's new version, a
// schedule replaced); a reference to nothing a conflict; a definition the module refuses names
// the item and rolls everything back.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/support/app.js';
import { createOrganization, createPrincipal, injectAs, type Principal } from '../../../test/support/identity.js';
import { createIntegration, ingestBatch, runNormalize } from '../../../test/support/normalization.js';

type Json = Record<string, unknown>;
const REFRESH_MS = 100;
let t: TestApp;
let orgA: number;
let orgB: number;
let adminA: Principal;
let adminB: Principal;

const SIGMA = `title: Admin sign-in from a documentation network
id: 0b5c2a8e-3f51-4c55-9f0e-6a4d1c2b3e4f
tags:
  - attack.initial_access
  - attack.t1078.004
logsource:
  product: windows
  service: security
detection:
  selection:
    TargetUserName|startswith: 'adm'
    IpAddress|cidr: 203.0.113.0/24
  condition: selection
level: high
`;
const CUSTOM = {
  name: 'Any sign-in from 198.51.100.0/24',
  enabled: false,
  definition: {
    condition: {
      all: [
        { field: 'class_uid', op: 'eq', value: 3002 },
        { field: 'src_endpoint.ip', op: 'cidr', value: '198.51.100.0/24' },
      ],
    },
    severity_id: 3,
    mitre: { tactics: ['TA0001'], techniques: ['T1078'] },
  },
};

const call = (who: Principal, method: 'GET' | 'POST', url: string, payload?: unknown) =>
  injectAs(t, who, method, url, payload);
async function ok(who: Principal, method: 'GET' | 'POST', url: string, payload?: unknown, status = 200): Promise<Json> {
  const res = await call(who, method, url, payload);
  expect(res.statusCode, res.body).toBe(status);
  return res.json<Json>();
}
const exportOf = (who: Principal) => ok(who, 'GET', '/api/collectors/config/export');
const importTo = (who: Principal, body: Json) => call(who, 'POST', '/api/collectors/config/import', body);
const byKey = (items: Json[]) => Object.fromEntries(items.map((i) => [`${String(i.kind)}:${String(i.name)}`, i]));
const settle = () => new Promise((r) => setTimeout(r, REFRESH_MS * 3));

beforeAll(async () => {
  t = await createTestApp({ env: { WEIR_TOKEN_RATE_LIMIT: '1000000', WEIR_MAPPING_REFRESH_MS: String(REFRESH_MS) } });
  orgA = await createOrganization(t, 'Rules A');
  orgB = await createOrganization(t, 'Rules B');
  adminA = await createPrincipal(t, { role: 'admin', organizationId: orgA });
  adminB = await createPrincipal(t, { role: 'admin', organizationId: orgB });
  await ok(adminA, 'POST', '/api/detections/rules/sigma', { yaml: SIGMA }, 201);
  await ok(adminA, 'POST', '/api/detections/rules', CUSTOM, 201);
  const query = await ok(
    adminA,
    'POST',
    '/api/queries/',
    { name: 'Sign-ins', description: 'every sign-in', query: { query: 'class_uid = 3002', time: { last: '1h' } } },
    201,
  );
  await ok(
    adminA,
    'POST',
    '/api/schedules/',
    {
      name: 'Hourly sign-ins',
      query_id: query.id,
      interval_seconds: 3600,
      notify: { email: false, condition: { op: 'gt', value: 0 } },
    },
    201,
  );
});
afterAll(async () => t?.close());

describe('detection rules, saved queries and schedules in the bundle', () => {
  it('are exported by name: the definition whole (a Sigma rule with its source), the query a schedule runs by name', async () => {
    const doc = await exportOf(adminA);
    const rules = doc.detection_rules as Json[];
    expect(rules.map((r) => r.name).sort()).toEqual([
      'Admin sign-in from a documentation network',
      'Any sign-in from 198.51.100.0/24',
    ]);
    expect(rules.find((r) => r.name === CUSTOM.name)).toEqual({ ...CUSTOM, version: 1 });
    expect(rules.find((r) => r.name !== CUSTOM.name)).toMatchObject({
      enabled: true,
      definition: {
        severity_id: 4,
        mitre: { tactics: ['TA0001'], techniques: ['T1078.004'] },
        origin: { format: 'sigma', id: '0b5c2a8e-3f51-4c55-9f0e-6a4d1c2b3e4f' },
      },
    });
    expect(doc.saved_queries).toEqual([
      {
        name: 'Sign-ins',
        description: 'every sign-in',
        integration: null,
        query: { query: 'class_uid = 3002', time: { last: '1h' } },
      },
    ]);
    expect(doc.schedules).toEqual([
      {
        name: 'Hourly sign-ins',
        query: 'Sign-ins',
        cron: null,
        timezone: 'UTC',
        interval_seconds: 3600,
        notify: { email: false, attach_csv: true, condition: { op: 'gt', value: 0 } },
        enabled: true,
      },
    ]);
  });

  it('import into an empty organization creates them; the rule fires there and the schedule runs its own copy of the query', async () => {
    const doc = await exportOf(adminA);
    const dry = (await importTo(adminB, { document: doc, dry_run: true })).json<Json>();
    const planned = byKey(dry.items as Json[]);
    for (const key of [
      'detection_rule:Admin sign-in from a documentation network',
      `detection_rule:${CUSTOM.name}`,
      'saved_query:Sign-ins',
      'schedule:Hourly sign-ins',
    ])
      expect(planned[key]?.action, key).toBe('create');
    expect((await ok(adminB, 'GET', '/api/detections/rules')).total).toBe(0);

    const res = await importTo(adminB, { document: doc });
    expect(res.statusCode, res.body).toBe(200);
    const again = await exportOf(adminB);
    const strip = (d: Json) => ({ ...d, exported_at: null, organization: null });
    expect(strip(again)).toEqual(strip(doc));

    const queries = (await ok(adminB, 'GET', '/api/queries/')).items as Json[];
    const schedules = (await ok(adminB, 'GET', '/api/schedules/')).items as Json[];
    expect(queries).toHaveLength(1);
    expect(schedules).toMatchObject([{ organization_id: orgB, query_id: queries[0]!.id, interval_seconds: 3600 }]);

    // The imported Sigma rule fires on organization B's events (the custom one is disabled, as in A).
    const integration = await createIntegration(t, orgB, 'windows_security');
    await settle();
    const login = (name: string, ip: string) => ({
      EventID: 4624,
      Channel: 'Security',
      SourceName: 'Microsoft-Windows-Security-Auditing',
      Hostname: 'dc1.corp.example',
      EventTime: new Date().toISOString(),
      TargetUserName: name,
      TargetDomainName: 'CORP',
      IpAddress: ip,
      LogonType: 3,
    });
    await runNormalize(
      t,
      ingestBatch(
        orgB,
        integration,
        'security',
        [login('adm-eve', '203.0.113.9'), login('adm-bob', '198.51.100.1')],
        'windows_security',
      ),
    );
    const found = (await ok(adminB, 'GET', '/api/detections?source=rule')).items as Json[];
    expect(found).toHaveLength(1);
    expect(found[0]).toMatchObject({
      organization_id: orgB,
      title: 'Admin sign-in from a documentation network',
      severity_id: 4,
    });
  });

  it('a change is an update: a rule gets a new version, a query its new text, a schedule is replaced', async () => {
    const doc = await exportOf(adminA);
    const custom = (doc.detection_rules as Json[]).find((r) => r.name === CUSTOM.name)!;
    custom.enabled = true;
    (custom.definition as Json).severity_id = 5;
    (doc.saved_queries as Json[])[0]!.query = { query: 'class_uid = 3002 and status_id = 2', time: { last: '1h' } };
    const schedule = (doc.schedules as Json[])[0]!;
    Object.assign(schedule, { interval_seconds: null, cron: '0 8 * * *', timezone: 'Europe/Paris' });
    const before = (await ok(adminB, 'GET', '/api/schedules/')).items as Json[];

    const dry = byKey((await importTo(adminB, { document: doc, dry_run: true })).json<{ items: Json[] }>().items);
    expect(dry[`detection_rule:${CUSTOM.name}`]).toMatchObject({
      action: 'update',
      changes: ['definition', 'enabled'],
    });
    expect(dry['detection_rule:Admin sign-in from a documentation network']).toMatchObject({ action: 'unchanged' });
    expect(dry['saved_query:Sign-ins']).toMatchObject({ action: 'update', changes: ['query'] });
    expect(dry['schedule:Hourly sign-ins']).toMatchObject({
      action: 'update',
      changes: ['cron', 'interval_seconds', 'timezone'],
    });

    expect((await importTo(adminB, { document: doc })).statusCode).toBe(200);
    const rules = (await ok(adminB, 'GET', '/api/detections/rules')).items as Json[];
    expect(rules.find((r) => r.name === CUSTOM.name)).toMatchObject({
      enabled: true,
      version: 2,
      definition: { severity_id: 5 },
    });
    const queries = (await ok(adminB, 'GET', '/api/queries/')).items as Json[];
    expect(queries[0]!.query).toEqual({ query: 'class_uid = 3002 and status_id = 2', time: { last: '1h' } });
    const after = (await ok(adminB, 'GET', '/api/schedules/')).items as Json[];
    expect(after).toMatchObject([{ name: 'Hourly sign-ins', cron: '0 8 * * *', timezone: 'Europe/Paris' }]);
    expect(after[0]!.id).not.toBe(before[0]!.id);
    const second = (await importTo(adminB, { document: doc, dry_run: true })).json<Json>();
    expect(second.summary).toMatchObject({ create: 0, update: 0, conflict: 0 });
  });

  it('a schedule of an unknown query and a query of an unknown integration are conflicts', async () => {
    const doc = await exportOf(adminA);
    (doc.schedules as Json[])[0]!.query = 'Nowhere';
    (doc.saved_queries as Json[])[0]!.integration = 'no such integration';
    const res = await importTo(adminB, { document: doc });
    expect(res.statusCode).toBe(409);
    const items = byKey(res.json<{ error: { details: { items: Json[] } } }>().error.details.items);
    expect(items['schedule:Hourly sign-ins']).toMatchObject({ action: 'conflict' });
    expect(String(items['schedule:Hourly sign-ins']!.reason)).toContain('saved query "Nowhere"');
    expect(String(items['saved_query:Sign-ins']!.reason)).toContain('integration "no such integration"');
  });

  it("a rule its module refuses names the item, and the import changes nothing; the document's shape is checked first", async () => {
    const doc = await exportOf(adminA);
    doc.saved_queries = [{ name: 'New', description: '', integration: null, query: { query: 'class_uid = 1' } }];
    doc.detection_rules = [
      {
        name: 'Broken',
        enabled: true,
        version: 1,
        definition: { condition: { field: 'no.such.field', op: 'eq', value: 1 }, severity_id: 3 },
      },
    ];
    const res = await importTo(adminB, { document: doc });
    expect(res.statusCode, res.body).toBe(422);
    expect(res.json<{ detail: string }>().detail).toContain('detection_rule "Broken"');
    expect(((await ok(adminB, 'GET', '/api/queries/')).items as Json[]).map((q) => q.name)).toEqual(['Sign-ins']);

    doc.detection_rules = [
      { name: 'Shape', enabled: true, version: 1, definition: { severity_id: 9, condition: null } },
    ];
    const shape = await importTo(adminB, { document: doc });
    expect(shape.statusCode).toBe(422);
    expect(shape.json<{ detail: string }>().detail).toContain('body/document/detection_rules/0/definition/severity_id');
  });
});
