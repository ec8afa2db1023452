// POST /api/detections/rules/sigma: a Sigma rule becomes a versioned detection rule (201), or
// is refused with a detail naming the field, modifier or position (422); dry_run compiles
// only; the permission is query.save and the organization is the caller's. The rule created
// then fires in the one pass on events a mapping normalized.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/support/app.js';
import { createOrganization, createPrincipal, type Principal } from '../../../test/support/identity.js';
import { createIntegration, ingestBatch, runNormalize } from '../../../test/support/normalization.js';

type Json = Record<string, unknown>;
const REFRESH_MS = 100;
let t: TestApp;
let orgA: number;
let orgB: number;
let integration: number;
let operatorA: Principal;
let viewerA: Principal;
let adminB: Principal;

const SIGMA = `title: Admin sign-in from a documentation network
id: 0b5c2a8e-3f51-4c55-9f0e-6a4d1c2b3e4f
description: An administrator account signs in from 203.0.113.0/24.
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
  filter:
    TargetUserName: admin-break-glass
  condition: selection and not filter
level: high
`;

async function call(method: string, url: string, who: Principal, payload?: unknown) {
  return t.app.inject({
    method: method as 'GET',
    url,
    headers: who.headers,
    ...(payload === undefined ? {} : { payload: payload as Json }),
  });
}
const settle = () => new Promise((r) => setTimeout(r, REFRESH_MS * 3));

beforeAll(async () => {
  t = await createTestApp({ env: { WEIR_TOKEN_RATE_LIMIT: '1000000', WEIR_MAPPING_REFRESH_MS: String(REFRESH_MS) } });
  orgA = await createOrganization(t, 'Sigma A');
  orgB = await createOrganization(t, 'Sigma B');
  operatorA = await createPrincipal(t, { role: 'operator', organizationId: orgA });
  viewerA = await createPrincipal(t, { role: 'viewer', organizationId: orgA });
  adminB = await createPrincipal(t, { role: 'admin', organizationId: orgB });
  // The built-in Windows Security mapping: the events below are what NXLog forwards.
  integration = await createIntegration(t, orgA, 'windows_security');
});
afterAll(async () => t?.close());

describe('POST /api/detections/rules/sigma', () => {
  let ruleId: string;

  it('compiles without storing anything on dry_run', async () => {
    const res = await call('POST', '/api/detections/rules/sigma?dry_run=true', operatorA, { yaml: SIGMA });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({
      name: 'Admin sign-in from a documentation network',
      definition: {
        severity_id: 4,
        mitre: { tactics: ['TA0001'], techniques: ['T1078.004'] },
        origin: { format: 'sigma', id: '0b5c2a8e-3f51-4c55-9f0e-6a4d1c2b3e4f' },
      },
    });
    const list = await call('GET', `/api/detections/rules?organization_id=${orgA}`, viewerA);
    expect(list.json<{ items: unknown[] }>().items).toEqual([]);
  });

  it("turns a count() by aggregation into a threshold per group; the request's threshold replaces it", async () => {
    const counted = SIGMA.replace('selection and not filter', 'selection and not filter | count() by IpAddress > 9')
      .replace('level: high', 'level: high\n')
      .replace('  condition:', '  timeframe: 15m\n  condition:');
    const res = await call('POST', '/api/detections/rules/sigma?dry_run=true', operatorA, { yaml: counted });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({
      definition: { threshold: { count: 10, window_seconds: 900 }, group_by: ['src_endpoint.ip'] },
    });
    const over = await call('POST', '/api/detections/rules/sigma?dry_run=true', operatorA, {
      yaml: counted,
      threshold: { count: 3, window_seconds: 60 },
    });
    expect(over.json()).toMatchObject({
      definition: { threshold: { count: 3, window_seconds: 60 }, group_by: ['src_endpoint.ip'] },
    });
  });

  it('creates a versioned rule (201) with the overrides, refuses a duplicate name (409)', async () => {
    const res = await call('POST', '/api/detections/rules/sigma', operatorA, {
      yaml: SIGMA,
      suppression_seconds: 60,
      group_by: ['user.name'],
    });
    expect(res.statusCode, res.body).toBe(201);
    const rule = res.json<Json & { id: string; definition: Json }>();
    ruleId = rule.id;
    expect(rule).toMatchObject({
      organization_id: orgA,
      name: 'Admin sign-in from a documentation network',
      version: 1,
      enabled: true,
      definition: {
        title: 'Admin sign-in from a documentation network',
        severity_id: 4,
        group_by: ['user.name'],
        suppression_seconds: 60,
      },
    });
    const versions = await call('GET', `/api/detections/rules/${ruleId}/versions`, viewerA);
    expect(versions.json<{ comment: string }[]>().map((v) => v.comment)).toEqual([
      'imported from Sigma rule 0b5c2a8e-3f51-4c55-9f0e-6a4d1c2b3e4f',
    ]);
    expect((await call('POST', '/api/detections/rules/sigma', operatorA, { yaml: SIGMA })).statusCode).toBe(409);
  });

  it('fires in the pass on normalized events, ignoring case as Sigma does', async () => {
    await settle();
    const ts = new Date().toISOString();
    const login = (name: string, ip: string) => ({
      EventID: 4624,
      Channel: 'Security',
      SourceName: 'Microsoft-Windows-Security-Auditing',
      Hostname: 'dc1.corp.example',
      EventTime: ts,
      TargetUserName: name,
      TargetDomainName: 'CORP',
      IpAddress: ip,
      LogonType: 3,
    });
    await runNormalize(
      t,
      ingestBatch(
        orgA,
        integration,
        'security',
        [
          login('ADM-eve', '203.0.113.9'),
          login('admin-break-glass', '203.0.113.9'),
          login('adm-bob', '198.51.100.1'),
          login('alice', '203.0.113.9'),
        ],
        'windows_security',
      ),
    );
    const res = await call('GET', `/api/detections?organization_id=${orgA}&rule_id=${ruleId}`, viewerA);
    const found = res.json<{ items: Json[] }>().items;
    expect(found).toHaveLength(1);
    expect(found[0]).toMatchObject({
      title: 'Admin sign-in from a documentation network',
      severity_id: 4,
      event_count: 1,
    });
  });

  it('answers 422 with a detail naming the field, the modifier or the position', async () => {
    const cases: [string, RegExp][] = [
      [
        SIGMA.replace('IpAddress|cidr', 'ClientAddress|cidr'),
        /^detection\.condition: no event of logsource product: windows, service: security has the fields this rule needs together: "TargetUserName" .*"ClientAddress" \(EventID 4778, 4779\)/,
      ],
      [
        SIGMA.replace('startswith', 'fieldref'),
        /^detection\.selection\.TargetUserName\|fieldref: the modifier "fieldref"/,
      ],
      [
        SIGMA.replace('selection and not filter', 'selection | count(TargetUserName) by IpAddress > 10'),
        /^detection\.condition \(column 11\): count\(TargetUserName\) counts distinct values/,
      ],
      ['title: x\nlogsource: [\n', /^yaml \(line \d+, column \d+\): /],
      [
        SIGMA.replace('service: security', 'service: sysmon'),
        /^logsource: no OCSF mapping for the logsource product: windows, service: sysmon/,
      ],
    ];
    for (const [yaml, detail] of cases) {
      const res = await call('POST', '/api/detections/rules/sigma', operatorA, { yaml });
      expect(res.statusCode, res.body).toBe(422);
      const body = res.json<{ detail: string; error: { code: string } }>();
      expect(body.detail).toMatch(detail);
      expect(body.error.code).toBe('detection.invalid_sigma');
    }
    // The overrides are checked as any rule definition is.
    const bad = await call('POST', '/api/detections/rules/sigma?dry_run=true', operatorA, {
      yaml: SIGMA,
      group_by: ['user.nmae'],
    });
    expect(bad.statusCode).toBe(422);
    expect(bad.json()).toMatchObject({
      error: {
        code: 'detection.invalid_rule',
        details: { errors: [{ location: 'definition.group_by[0]', closest: 'user.name' }] },
      },
    });
  });

  it('answers 4xx with a string detail to malformed input, never 5xx', async () => {
    const bodies: unknown[] = [
      { yaml: 'a\u0000b' },
      { yaml: 'title: \ud800\nlogsource: {category: process_creation}\ndetection: {s: {Image: x}, condition: s}' },
      { yaml: 'x'.repeat(10_000) },
      { yaml: '- a\n- b' },
      { yaml: 'a: &x [*x]' },
      { yaml: SIGMA.replace("'adm'", `'${'a*'.repeat(300)}'`) },
      {
        yaml: SIGMA.replace(
          "TargetUserName|startswith: 'adm'",
          `TargetUserName: [${Array.from({ length: 300 }, (_, i) => `'*u${i}*'`).join(', ')}]`,
        ),
      },
      { yaml: SIGMA, threshold: { count: 2 ** 53, window_seconds: 1 } },
      { yaml: 42 },
      { yaml: SIGMA, organization_id: 2 ** 31 },
    ];
    for (const payload of bodies) {
      const res = await call('POST', '/api/detections/rules/sigma?dry_run=true', operatorA, payload);
      expect(res.statusCode, `${JSON.stringify(payload).slice(0, 80)} ${res.body}`).toBeGreaterThanOrEqual(400);
      expect(res.statusCode).toBeLessThan(500);
      expect(typeof res.json<{ detail: unknown }>().detail).toBe('string');
    }
  });

  it("needs query.save (403), and keeps to the caller's organizations", async () => {
    expect((await call('POST', '/api/detections/rules/sigma', viewerA, { yaml: SIGMA })).statusCode).toBe(403);
    expect((await call('POST', '/api/detections/rules/sigma?dry_run=true', viewerA, { yaml: SIGMA })).statusCode).toBe(
      403,
    );
    const other = await call('POST', '/api/detections/rules/sigma', adminB, { yaml: SIGMA, organization_id: orgA });
    expect([403, 404]).toContain(other.statusCode);
    expect(typeof other.json<{ detail: unknown }>().detail).toBe('string');
    // Another organization's administrator creates the same rule in its own organization, and cannot see A's.
    const own = await call('POST', '/api/detections/rules/sigma', adminB, { yaml: SIGMA });
    expect(own.statusCode, own.body).toBe(201);
    expect(own.json()).toMatchObject({ organization_id: orgB });
    expect((await call('GET', `/api/detections/rules/${ruleId}`, adminB)).statusCode).toBe(404);
  });
});
