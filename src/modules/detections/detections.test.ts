// Detections through the API and the one pass: rules (versions, rollback, permissions, scope),
// a threshold rule firing once per window and group however the events are batched (and not
// again when a batch is redelivered), suppression, vendor findings keyed by their uid, the
// finding routed like any event with the ledger balanced, triage (permissions, scope, history,
// audit), the grouped e-mail, a case in DFIR-IRIS, and a scheduled search's alert.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/support/app.js';
import { createOrganization, createPrincipal, type Principal } from '../../../test/support/identity.js';
import { startIrisSimulator, type IrisSimulator } from '../../../test/support/iris-server.js';
import { loginDocument } from '../../../test/support/mappings.js';
import {
  catchAll,
  createIntegration,
  ingestBatch,
  outputs,
  publishMapping,
  runNormalize,
} from '../../../test/support/normalization.js';
import { startSmtpServer, TEST_CA_PEM, type TestSmtpServer } from '../../../test/support/smtp-server.js';
import type { Clock } from '../../core/clock.js';
import { FINDINGS_STREAM } from './recorder.js';
import { ledgerRows } from '../../../test/support/ledger.js';

type Json = Record<string, unknown>;
const REFRESH_MS = 100;
let now = Date.now();
const clock: Clock = { now: () => new Date(now) };
let t: TestApp;
let iris: IrisSimulator;
let smtp: TestSmtpServer;
let orgA: number;
let orgB: number;
let integration: number;
let platform: Principal;
let operatorA: Principal;
let viewerA: Principal;
let adminB: Principal;
let dest: string;

async function call(method: string, url: string, who: Principal, payload?: unknown) {
  return t.app.inject({
    method: method as 'GET',
    url,
    headers: who.headers,
    ...(payload === undefined ? {} : { payload: payload as Json }),
  });
}
const settle = () => new Promise((r) => setTimeout(r, REFRESH_MS * 3));
/** A failed (status 2) or successful login of `user` at `minute` past the hour of T0. */
const T0 = Math.floor(Date.now() / 3_600_000) * 3_600_000 - 3_600_000;
const login = (user: string, minute: number, status = 2) => ({
  type: 'login',
  ts: new Date(T0 + minute * 60_000).toISOString(),
  user: { name: user },
  client: { ip: '203.0.113.7' },
  host: 'vpn',
  status,
});
async function detectionsOf(org: number, who: Principal, query = ''): Promise<Json[]> {
  const res = await call('GET', `/api/detections?organization_id=${org}${query}`, who);
  expect(res.statusCode, res.body).toBe(200);
  return res.json<{ items: Json[] }>().items;
}

beforeAll(async () => {
  iris = await startIrisSimulator();
  smtp = await startSmtpServer();
  t = await createTestApp({
    clock,
    env: {
      WEIR_TOKEN_RATE_LIMIT: '1000000',
      WEIR_MAPPING_REFRESH_MS: String(REFRESH_MS),
      WEIR_CASE_URL: iris.url,
      WEIR_CASE_API_KEY: iris.apiKey,
      WEIR_PUBLIC_URL: 'https://weir.example.test',
    },
  });
  orgA = await createOrganization(t, 'Detect A');
  orgB = await createOrganization(t, 'Detect B');
  platform = await createPrincipal(t, { role: 'admin', organizationId: null });
  operatorA = await createPrincipal(t, { role: 'operator', organizationId: orgA });
  viewerA = await createPrincipal(t, { role: 'viewer', organizationId: orgA });
  adminB = await createPrincipal(t, { role: 'admin', organizationId: orgB });
  integration = await createIntegration(t, orgA);
  await publishMapping(t, orgA, 'custom', 'auth', loginDocument([{ target: 'status_id', from: 'status' }]));
  await publishMapping(t, orgA, 'custom', 'alerts', {
    product: { name: 'EDR', vendor_name: 'Tests' },
    rules: [
      {
        name: 'alert',
        class_uid: 2004,
        activity_id: 1,
        set: [
          { target: 'time', from: 'ts', cast: 'timestamp' },
          { target: 'finding_info.uid', from: 'id' },
          { target: 'finding_info.title', from: 'name' },
          { target: 'severity_id', from: 'sev' },
          { target: 'metadata.uid', from: 'id' },
        ],
      },
    ],
  });
  dest = await catchAll(t, orgA);
  await settle();
});
afterAll(async () => {
  await t?.close();
  await iris?.close();
  await smtp?.close();
});

describe('detection rules', () => {
  let ruleId: string;
  const bruteForce = {
    condition: {
      all: [
        { field: 'class_uid', op: 'eq', value: 3002 },
        { field: 'status_id', op: 'eq', value: 2 },
      ],
    },
    severity_id: 4,
    group_by: ['user.name'],
    threshold: { count: 10, window_seconds: 300 },
    mitre: { tactics: ['TA0006'], techniques: ['T1110'] },
  };

  it('are created with query.save, read with mapping.read, checked whole (the closest field named)', async () => {
    expect(
      (await call('POST', '/api/detections/rules', viewerA, { name: 'bf', definition: bruteForce })).statusCode,
    ).toBe(403);
    const bad = await call('POST', '/api/detections/rules', operatorA, {
      name: 'bf',
      definition: { ...bruteForce, group_by: ['user.nmae'] },
    });
    expect(bad.json()).toMatchObject({
      error: {
        code: 'detection.invalid_rule',
        details: { errors: [{ location: 'definition.group_by[0]', closest: 'user.name' }] },
      },
    });
    const res = await call('POST', '/api/detections/rules', operatorA, { name: 'Brute force', definition: bruteForce });
    expect(res.statusCode, res.body).toBe(201);
    ruleId = res.json<{ id: string }>().id;
    expect(res.json()).toMatchObject({ version: 1, enabled: true, organization_id: orgA });
    expect((await call('GET', `/api/detections/rules/${ruleId}`, viewerA)).statusCode).toBe(200);
    expect((await call('GET', `/api/detections/rules/${ruleId}`, adminB)).statusCode).toBe(404);
    expect(
      (await call('POST', '/api/detections/rules', operatorA, { name: 'brute FORCE', definition: bruteForce }))
        .statusCode,
    ).toBe(409);
  });

  it('keep versions: a new definition is a new version, a rollback makes an old one live again', async () => {
    const v2 = await call('PUT', `/api/detections/rules/${ruleId}`, operatorA, {
      definition: { ...bruteForce, severity_id: 5 },
      comment: 'critical',
    });
    expect(v2.json()).toMatchObject({ version: 2, definition: { severity_id: 5 } });
    const back = await call('POST', `/api/detections/rules/${ruleId}/rollback`, operatorA, { version: 1 });
    expect(back.json()).toMatchObject({ version: 3, definition: { severity_id: 4 } });
    expect((await call('POST', `/api/detections/rules/${ruleId}/rollback`, operatorA, { version: 3 })).statusCode).toBe(
      409,
    );
    const versions = (await call('GET', `/api/detections/rules/${ruleId}/versions`, viewerA)).json<Json[]>();
    expect(versions.map((v) => [v.version, v.comment])).toEqual([
      [3, 'rollback to version 1'],
      [2, 'critical'],
      [1, ''],
    ]);
  });

  it('fire once per window and group however the events are batched, and not again for a redelivered batch', async () => {
    await settle();
    const first = ingestBatch(orgA, integration, 'auth', [
      ...Array.from({ length: 6 }, (_, i) => login('alice', i % 5)),
      login('bob', 1),
      login('alice', 2, 1),
    ]);
    await runNormalize(t, first);
    expect(await detectionsOf(orgA, viewerA, '&source=rule')).toEqual([]);
    // The tenth failed login of alice in the window arrives in the second batch; more follow in the third.
    await runNormalize(
      t,
      ingestBatch(
        orgA,
        integration,
        'auth',
        Array.from({ length: 4 }, (_, i) => login('alice', 3 + (i % 2))),
      ),
    );
    await runNormalize(
      t,
      ingestBatch(orgA, integration, 'auth', [login('alice', 4), login('alice', 4), login('alice', 7)]),
    );
    await runNormalize(t, first, 2); // a redelivered job
    const found = await detectionsOf(orgA, viewerA, '&source=rule');
    expect(found).toHaveLength(1);
    expect(found[0]).toMatchObject({
      title: 'Brute force',
      severity_id: 4,
      status: 'new',
      status_id: 1,
      rule_id: ruleId,
      rule_version: 3,
      event_count: 10,
      mitre: { tactics: ['TA0006'], techniques: ['T1110'] },
    });
    expect(found[0]!.event_ids).toHaveLength(10);
    // Alice: 12 failures in the first window (10 to fire), 1 in the next; bob: 1. Each counted once despite the redelivery.
    const windows = await t.container.database.db
      .selectFrom('detection_windows')
      .select(['group_key', 'count', 'fired_at'])
      .where('rule_id', '=', ruleId)
      .orderBy('window_start')
      .orderBy('group_key')
      .execute();
    expect(windows.map((w) => [w.group_key, w.count, w.fired_at !== null])).toEqual([
      ['["alice"]', 12, true],
      ['["bob"]', 1, false],
      ['["alice"]', 1, false],
    ]);
  });

  it('route the finding like any event, counted in its own stream, the ledger balanced', async () => {
    const rows = await t.container.database.db
      .selectFrom('delivery_batches')
      .select(['source_batch_id', 'stream', 'event_count'])
      .where('destination_id', '=', dest)
      .where('stream', '=', FINDINGS_STREAM)
      .execute();
    expect(rows.reduce((n, r) => n + r.event_count, 0)).toBe(1);
    const balance = await ledgerRows(t, { organization_id: orgA, stream: FINDINGS_STREAM });
    expect(balance).toEqual([expect.objectContaining({ events_in: 1, routed: 1, unaccounted: 0 })]);
    const all = await ledgerRows(t, { organization_id: orgA });
    expect(all.every((b) => b.unaccounted === 0)).toBe(true);
    const [finding] = await outputs(t, rows[0]!.source_batch_id);
    expect(finding!.ocsf).toMatchObject({
      class_uid: 2004,
      finding_info: { analytic: { uid: ruleId }, related_events_count: 10 },
    });
  });

  it('suppress per group: one detection per group until the suppression ends', async () => {
    const res = await call('POST', '/api/detections/rules', operatorA, {
      name: 'Any failure',
      definition: {
        condition: { field: 'status_id', op: 'eq', value: 2 },
        severity_id: 2,
        group_by: ['user.name'],
        suppression_seconds: 3600,
      },
    });
    expect(res.statusCode, res.body).toBe(201);
    await settle();
    await runNormalize(
      t,
      ingestBatch(orgA, integration, 'auth', [login('carol', 1), login('carol', 2), login('dave', 3)]),
    );
    await runNormalize(t, ingestBatch(orgA, integration, 'auth', [login('carol', 4)]));
    expect(
      (await detectionsOf(orgA, viewerA, `&rule_id=${res.json<{ id: string }>().id}`)).map((d) => d.event_count).sort(),
    ).toEqual([1, 2]);
    now += 2 * 3_600_000;
    await runNormalize(t, ingestBatch(orgA, integration, 'auth', [login('carol', 5)]));
    expect(await detectionsOf(orgA, viewerA, `&rule_id=${res.json<{ id: string }>().id}`)).toHaveLength(3);
    now = Date.now();
    await call('PUT', `/api/detections/rules/${res.json<{ id: string }>().id}`, operatorA, { enabled: false });
  });
});

describe('vendor findings', () => {
  it('become detections keyed by their uid: a vendor update updates, never duplicates', async () => {
    const alert = (sev: number) => ({ id: 'edr-42', name: 'Credential dumping', sev, ts: new Date(T0).toISOString() });
    await runNormalize(t, ingestBatch(orgA, integration, 'alerts', [alert(4)]));
    await runNormalize(t, ingestBatch(orgA, integration, 'alerts', [alert(5)]));
    const found = await detectionsOf(orgA, viewerA, '&source=vendor');
    expect(found).toHaveLength(1);
    expect(found[0]).toMatchObject({
      uid: 'edr-42',
      title: 'Credential dumping',
      severity_id: 5,
      event_count: 2,
      integration_id: integration,
      stream: 'alerts',
    });
    const detail = (await call('GET', `/api/detections/${String(found[0]!.id)}`, viewerA)).json<{ history: Json[] }>();
    expect(detail.history.map((h) => [h.actor, h.kind])).toEqual([
      ['vendor', 'created'],
      ['vendor', 'updated'],
    ]);
  });
});

describe('triage', () => {
  let id: string;
  beforeAll(async () => {
    id = String((await detectionsOf(orgA, viewerA, '&source=rule&severity_min=4'))[0]!.id);
  });

  it('filters by status, severity, source and time; another organization sees nothing of it', async () => {
    expect(await detectionsOf(orgA, viewerA, '&status=resolved')).toEqual([]);
    expect((await detectionsOf(orgA, viewerA, '&status=new,in_progress&severity_min=5')).map((d) => d.source)).toEqual([
      'vendor',
    ]);
    expect((await call('GET', `/api/detections?status=closed`, viewerA)).statusCode).toBe(422);
    expect((await call('GET', `/api/detections/${id}`, adminB)).statusCode).toBe(404);
    expect((await call('GET', `/api/detections?organization_id=${orgA}`, adminB)).statusCode).toBe(404);
    expect((await call('GET', '/api/detections', adminB)).json()).toMatchObject({ total: 0 });
  });

  it('needs query.run to change; each change is in the history and the audit trail', async () => {
    expect((await call('PATCH', `/api/detections/${id}`, viewerA, { status: 'in_progress' })).statusCode).toBe(403);
    expect((await call('PATCH', `/api/detections/${id}`, adminB, { status: 'in_progress' })).statusCode).toBe(404);
    const stranger = await createPrincipal(t, { role: 'viewer', organizationId: orgB });
    expect(
      (await call('PATCH', `/api/detections/${id}`, operatorA, { assignee_id: stranger.id })).json(),
    ).toMatchObject({ error: { code: 'detection.invalid_change' } });
    const res = await call('PATCH', `/api/detections/${id}`, operatorA, {
      status: 'in_progress',
      assignee_id: viewerA.id,
      comment: 'looking',
    });
    expect(res.json()).toMatchObject({ status: 'in_progress', status_id: 2, assignee_id: viewerA.id });
    const fp = await call('PATCH', `/api/detections/${id}`, operatorA, { status: 'false_positive' });
    expect(fp.json()).toMatchObject({ status: 'false_positive', status_id: 4, verdict_id: 1 });
    const history = fp.json<{ history: Json[] }>().history.filter((h) => h.actor === `user:${operatorA.id}`);
    expect(history.map((h) => h.kind)).toEqual(['status', 'assignee', 'comment', 'status']);
    expect(history[2]).toMatchObject({ comment: 'looking' });
    const audit = await t.container.database.db
      .selectFrom('audit_log')
      .select(['operation_id', 'outcome'])
      .where('target_id', '=', id)
      .orderBy('seq')
      .execute();
    expect(audit.filter((a) => a.outcome === 'success').map((a) => a.operation_id)).toEqual([
      'detections.update',
      'detections.update',
    ]);
  });

  it('opens a case in DFIR-IRIS with a link back, once', async () => {
    const res = await call('POST', `/api/detections/${id}/case`, operatorA);
    expect(res.statusCode, res.body).toBe(201);
    expect(iris.cases).toHaveLength(1);
    expect(iris.cases[0]!.case_description).toContain(`https://weir.example.test/api/detections/${id}`);
    expect(res.json()).toEqual({ detection_id: id, case_id: String(iris.cases[0]!.case_id) });
    expect((await call('POST', `/api/detections/${id}/case`, operatorA)).statusCode).toBe(409);
  });
});

describe('the grouped e-mail of new high and critical detections', () => {
  it("tells the organization's recipients once for everything new, then waits the interval", async () => {
    expect(
      (
        await call('PUT', '/api/emails/config', platform, {
          host: 'localhost',
          port: smtp.port,
          security: 'starttls',
          from_address: 'weir@example.test',
          ca_pem: TEST_CA_PEM,
        })
      ).statusCode,
    ).toBe(200);
    expect(
      (await call('POST', '/api/emails/', platform, { organization_id: orgA, address: 'soc@example.test' })).statusCode,
    ).toBe(201);
    const digest = t.container.jobs.find((j) => j.queue === 'detections')!.handlers['detections.digest']!;
    const run = () =>
      digest(
        { id: 'd', queue: 'detections', name: 'detections.digest', payload: {}, attempt: 1, maxAttempts: 1 },
        new AbortController().signal,
      );
    await run();
    await t.container.jobs.find((j) => j.queue === 'email')!;
    const sendJob = t.container.jobs.find((j) => j.queue === 'email')!.handlers['email.send']!;
    const pending = await t.container.database.db
      .selectFrom('email_deliveries')
      .select('id')
      .where('status', '=', 'queued')
      .execute();
    expect(pending).toHaveLength(1);
    await sendJob(
      {
        id: pending[0]!.id,
        queue: 'email',
        name: 'email.send',
        payload: { delivery_id: pending[0]!.id },
        attempt: 1,
        maxAttempts: 1,
      },
      new AbortController().signal,
    );
    const [mail] = await smtp.waitFor(1);
    expect(mail!.parsed.subject).toBe('Weir: 2 new critical or high detections');
    expect(mail!.parsed.text).toContain('Credential dumping');
    // A new one within the interval waits for the next message.
    await runNormalize(
      t,
      ingestBatch(orgA, integration, 'alerts', [
        { id: 'edr-43', name: 'Lateral movement', sev: 4, ts: new Date(T0).toISOString() },
      ]),
    );
    await run();
    expect(await t.container.database.db.selectFrom('email_deliveries').select('id').execute()).toHaveLength(1);
    now += 16 * 60_000;
    await run();
    expect(await t.container.database.db.selectFrom('email_deliveries').select('id').execute()).toHaveLength(2);
    now = Date.now();
  });
});
