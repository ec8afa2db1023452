// Triage at SOC volume through the API: real CrowdStrike Falcon alerts (test/corpus) pushed to
// the ingest API many times over (each copy its own composite id, as Falcon sends one alert per
// occurrence) become vendor detections; the list puts the critical one first, groups the
// identical ones with their counts, changes a whole group in one request (history, audit,
// permission and scope as a single change), names assignees and ATT&CK techniques, and shows
// the evidence as the fields that matched. A rule's finding shows its condition's fields first.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/support/app.js';
import { createOrganization, createPrincipal, type Principal } from '../../../test/support/identity.js';
import { loginDocument } from '../../../test/support/mappings.js';
import {
  catchAll,
  createIntegration,
  ingestBatch,
  publishMapping,
  runNormalize,
} from '../../../test/support/normalization.js';
import { NORMALIZE_QUEUE, type IngestBatch } from '../../pipeline/envelope.js';

type Json = Record<string, unknown>;
const SAMPLES = readFileSync(
  path.resolve(import.meta.dirname, '../../../test/corpus/crowdstrike_falcon/alerts/elastic-alerts.ndjson'),
  'utf8',
)
  .trim()
  .split('\n')
  .map((l) => JSON.parse(l) as Json);
/** A copy of a sample as another occurrence: its own composite id, its own time, some fields changed. */
function occurrence(index: number, n: number, minute: number, change: Json = {}): Json {
  const s = structuredClone(SAMPLES[index]!);
  const at = new Date(Date.UTC(2025, 0, 1, 0, minute)).toISOString();
  return {
    ...s,
    composite_id: `${String(s.composite_id)}-copy-${n}`,
    updated_timestamp: at,
    created_timestamp: at,
    timestamp: at,
    ...change,
  };
}

let t: TestApp;
let orgA: number;
let orgB: number;
let adminA: Principal;
let viewerA: Principal;
let adminB: Principal;
const queued = new Map<string, IngestBatch>();

async function call(method: string, url: string, who: Principal, payload?: unknown) {
  return t.app.inject({
    method: method as 'GET',
    url,
    headers: who.headers,
    ...(payload === undefined ? {} : { payload: payload as Json }),
  });
}

/** Pushes alerts as Falcon's relay does (NDJSON to the integration's stream) and runs the pass on them. */
async function push(org: number, who: Principal, alerts: Json[]): Promise<void> {
  const created = await call('POST', '/api/integrations/', who, {
    name: `falcon-${org}-${queued.size}`,
    platform: 'crowdstrike_falcon',
    organization_id: org,
    config: {},
  });
  expect(created.statusCode, created.body).toBe(201);
  const token = (
    await call('POST', `/api/ingest/integrations/${created.json<Json>().id as number}/token`, who)
  ).json<Json>().token as string;
  const res = await t.app.inject({
    method: 'POST',
    url: '/api/ingest/alerts',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/x-ndjson' },
    payload: alerts.map((a) => JSON.stringify(a)).join('\n'),
  });
  expect(res.statusCode, res.body).toBe(200);
  for (const id of res.json<{ batch_ids: string[] }>().batch_ids) {
    const deadline = Date.now() + 10_000;
    while (!queued.has(id) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    await runNormalize(t, queued.get(id)!);
  }
}

async function list(who: Principal, query: string) {
  const res = await call('GET', `/api/detections?${query}`, who);
  expect(res.statusCode, res.body).toBe(200);
  return res.json<{ items: Json[]; total: number }>();
}
async function groups(who: Principal, query: string) {
  const res = await call('GET', `/api/detections/groups?${query}`, who);
  expect(res.statusCode, res.body).toBe(200);
  return res.json<{ items: Json[]; total: number }>();
}

const LOWS = 30;
beforeAll(async () => {
  t = await createTestApp({ env: { WEIR_TOKEN_RATE_LIMIT: '1000000', WEIR_MAPPING_REFRESH_MS: '100' } });
  orgA = await createOrganization(t, 'Triage A');
  orgB = await createOrganization(t, 'Triage B');
  adminA = await createPrincipal(t, { role: 'admin', organizationId: orgA });
  viewerA = await createPrincipal(t, { role: 'viewer', organizationId: orgA });
  adminB = await createPrincipal(t, { role: 'admin', organizationId: orgB });
  await catchAll(t, orgA);
  await catchAll(t, orgB);
  t.container.queue.consume<IngestBatch>(NORMALIZE_QUEUE, async (job) => {
    queued.set(job.id, job.payload);
  });
  // Organization A: thirty occurrences of one low adware alert on one host (the newest),
  // three of a medium one on another host, and one identity alert raised to Critical (the oldest).
  await push(orgA, adminA, [
    ...Array.from({ length: LOWS }, (_, i) => occurrence(0, i, 100 + i)),
    ...Array.from({ length: 3 }, (_, i) => occurrence(2, i, 50 + i)),
    occurrence(1, 0, 0, { severity_name: 'Critical' }),
  ]);
  // Organization B: the same adware alert on the same host name, five times.
  await push(
    orgB,
    adminB,
    Array.from({ length: 5 }, (_, i) => occurrence(0, i, 200 + i)),
  );
});
afterAll(async () => t?.close());

describe('the list at volume', () => {
  it('puts the most severe first, then the most recent; sort=time is the most recent first', async () => {
    const first = await list(adminA, 'limit=25');
    expect(first.total).toBe(LOWS + 4);
    expect(first.items[0]).toMatchObject({ severity_id: 5, title: 'Identity verification denied' });
    expect(first.items.slice(1, 4).map((d) => d.severity_id)).toEqual([3, 3, 3]);
    const times = first.items.slice(4).map((d) => Date.parse(String(d.last_seen_at)));
    expect(times).toEqual([...times].sort((a, b) => b - a));

    const byTime = await list(adminA, 'sort=time&limit=100');
    expect(byTime.items.findIndex((d) => d.severity_id === 5)).toBe(LOWS + 3);
    expect(byTime.items[0]).toMatchObject({ severity_id: 2 });
    expect((await call('GET', '/api/detections?sort=risk', adminA)).statusCode).toBe(422);
  });

  it('pages stably: pages of 7 make the whole list, each detection once', async () => {
    const whole = (await list(adminA, 'limit=100')).items.map((d) => d.id);
    const paged: unknown[] = [];
    for (let offset = 0; offset < whole.length; offset += 7)
      paged.push(...(await list(adminA, `limit=7&offset=${offset}`)).items.map((d) => d.id));
    expect(paged).toEqual(whole);
  });
});

describe('groups', () => {
  it('makes identical findings about one entity one group with its count, first and last seen, severity', async () => {
    const g = await groups(adminA, 'status=new,in_progress');
    expect(g.total).toBe(3);
    expect(g.items.map((x) => [x.title, x.count, x.severity_id])).toEqual([
      ['Identity verification denied', 1, 5],
      ['OnDemandScanMLFileAnalysisMedium', 3, 3],
      ['PrewittPupAdwareSensorDetect-Lowest', LOWS, 2],
    ]);
    const lows = g.items[2]!;
    expect(lows).toMatchObject({
      organization_id: orgA,
      source: 'vendor',
      entity: 'device.hostname=abc709-1175',
      statuses: { new: LOWS },
      first_seen_at: new Date(Date.UTC(2025, 0, 1, 0, 100)).toISOString(),
      last_seen_at: new Date(Date.UTC(2025, 0, 1, 0, 100 + LOWS - 1)).toISOString(),
    });
    const members = await list(adminA, `group=${String(lows.key)}&limit=100`);
    expect(members.total).toBe(LOWS);
    expect(members.items.every((d) => d.group === lows.key && d.organization_id === orgA)).toBe(true);
    // Another organization's identical findings are its own group, out of A's sight.
    expect((await groups(adminB, '')).items.map((x) => [x.title, x.count])).toEqual([
      ['PrewittPupAdwareSensorDetect-Lowest', 5],
    ]);
    expect((await call('GET', '/api/detections/groups?group=not-a-key', adminA)).statusCode).toBe(422);
    expect((await call('GET', `/api/detections?group=${String(lows.key)}`, adminB)).json()).toMatchObject({
      total: 0,
    });
  });
});

describe('bulk changes', () => {
  it('needs query.run and answers 404 for what the caller cannot see, changing nothing', async () => {
    const key = (await groups(adminA, '')).items[2]!.key;
    const ids = (await list(adminA, `group=${String(key)}&limit=3`)).items.map((d) => d.id);
    expect(
      (await call('POST', '/api/detections/bulk/update', viewerA, { group: key, status: 'resolved' })).statusCode,
    ).toBe(403);
    expect(
      (await call('POST', '/api/detections/bulk/update', adminB, { group: key, status: 'resolved' })).statusCode,
    ).toBe(404);
    expect((await call('POST', '/api/detections/bulk/update', adminB, { ids, status: 'resolved' })).statusCode).toBe(
      404,
    );
    expect(
      (await call('POST', '/api/detections/bulk/update', adminA, { ids, group: key, status: 'resolved' })).statusCode,
    ).toBe(422);
    expect((await call('POST', '/api/detections/bulk/update', adminA, { group: key })).statusCode).toBe(422);
    expect((await call('POST', '/api/detections/bulk/update', adminA, { ids, status: 'done' })).statusCode).toBe(422);
    expect((await groups(adminA, 'status=new')).items[2]).toMatchObject({ count: LOWS });
  });

  it("changes a whole group's status in one request: counts, history and audit as single changes", async () => {
    const key = (await groups(adminA, 'status=new,in_progress')).items[2]!.key as string;
    const res = await call('POST', '/api/detections/bulk/update', adminA, {
      group: key,
      where_status: ['new', 'in_progress'],
      status: 'false_positive',
      comment: 'Known adware on a test machine',
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ matched: LOWS, status_changed: LOWS, commented: LOWS });

    const open = await groups(adminA, 'status=new,in_progress');
    expect(open.items.map((x) => [x.title, x.count])).toEqual([
      ['Identity verification denied', 1],
      ['OnDemandScanMLFileAnalysisMedium', 3],
    ]);
    expect((await groups(adminA, 'status=false_positive')).items[0]).toMatchObject({
      count: LOWS,
      statuses: { false_positive: LOWS },
    });
    // B's identical findings are untouched.
    expect((await groups(adminB, 'status=new')).items[0]).toMatchObject({ count: 5 });

    const one = (await list(adminA, `group=${key}&limit=1`)).items[0]!;
    const detail = (await call('GET', `/api/detections/${String(one.id)}`, adminA)).json<{ history: Json[] }>();
    expect(detail).toMatchObject({ status: 'false_positive', status_id: 4, verdict_id: 1 });
    expect(detail.history.filter((h) => h.actor === `user:${adminA.id}`)).toMatchObject([
      { kind: 'status', change: { from: 'new', to: 'false_positive', status_id: 4 } },
      { kind: 'comment', comment: 'Known adware on a test machine' },
    ]);
    const audit = await call('GET', '/api/history/audit?operation_id=detections.bulk_update&limit=10', adminA);
    expect(audit.statusCode, audit.body).toBe(200);
    const entries = audit.json<{ items: Json[] }>().items.filter((a) => a.outcome === 'success');
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({
      target_type: 'detection',
      organization_id: orgA,
      details: { count: LOWS, changes: [{ kind: 'status', from: { new: LOWS }, to: 'false_positive' }] },
    });
    expect((entries[0]!.details as { detection_ids: string[] }).detection_ids).toContain(one.id);
  });

  it('assigns a selection by name', async () => {
    const ids = (await list(adminA, 'source=vendor&severity_min=3&limit=10')).items.map((d) => d.id as string);
    expect(ids).toHaveLength(4);
    const res = await call('POST', '/api/detections/bulk/update', adminA, { ids, assignee_id: adminA.id });
    expect(res.json()).toMatchObject({ matched: 4, assignee_changed: 4 });
    const shown = await list(adminA, 'severity_min=3&limit=10');
    const me = (await call('GET', '/api/auth/me', adminA)).json<Json>();
    for (const d of shown.items)
      expect(d.assignee).toEqual({ id: adminA.id, username: me.username, display_name: me.display_name ?? null });
    expect(
      (await call('POST', '/api/detections/bulk/update', adminA, { ids, assignee_id: adminB.id })).json(),
    ).toMatchObject({ error: { code: 'detection.invalid_change' } });
  });
});

describe('what a detection shows', () => {
  it('names its ATT&CK techniques and tactics, and its evidence as the fields that matched', async () => {
    const critical = (await list(adminA, 'limit=1')).items[0]!;
    const d = (await call('GET', `/api/detections/${String(critical.id)}`, adminA)).json<Json>();
    expect(d.attack).toEqual({
      tactics: [{ id: 'TA0006', name: 'Credential Access' }],
      techniques: [
        { id: 'T1110', name: 'Brute Force', parent_name: null, tactics: [{ id: 'TA0006', name: 'Credential Access' }] },
      ],
    });
    const evidence = d.evidence as { fields: { field: string; values: string[] }[]; events: Json[] };
    expect(evidence.fields).toEqual(
      expect.arrayContaining([
        { field: 'evidences[*].user.name', values: ['admin.example'] },
        { field: 'evidences[*].src_endpoint.ip', values: ['81.2.69.144'] },
      ]),
    );
    expect(evidence.events).toHaveLength(1);
    expect(evidence.events[0]).toMatchObject({ event_id: (d.event_ids as string[])[0] });
    expect(evidence.events[0]!.from).not.toBe('none');
    expect(d.entity).toBe('user.name=admin.example');
  });
});

describe("a rule's finding", () => {
  it("is grouped by the rule's group and shows the rule's fields first in its evidence", async () => {
    const integration = await createIntegration(t, orgA);
    await publishMapping(t, orgA, 'custom', 'auth', loginDocument([{ target: 'status_id', from: 'status' }]));
    const rule = await call('POST', '/api/detections/rules', adminA, {
      name: 'Failed sign-in',
      organization_id: orgA,
      definition: {
        condition: {
          all: [
            { field: 'class_uid', op: 'eq', value: 3002 },
            { field: 'status_id', op: 'eq', value: 2 },
          ],
        },
        group_by: ['user.name'],
        severity_id: 3,
        mitre: { techniques: ['T1110.001'] },
      },
    });
    expect(rule.statusCode, rule.body).toBe(201);
    await new Promise((r) => setTimeout(r, 400));
    const at = (m: number) => new Date(Date.now() - m * 60_000).toISOString();
    const login = (user: string, m: number) => ({
      type: 'login',
      ts: at(m),
      user: { name: user },
      client: { ip: '203.0.113.9' },
      host: 'vpn',
      status: 2,
    });
    await runNormalize(
      t,
      ingestBatch(orgA, integration, 'auth', [login('mallory', 3), login('mallory', 2), login('trent', 1)]),
    );
    const g = await groups(adminA, 'source=rule');
    expect(g.items.map((x) => [x.entity, x.count])).toEqual([
      ['user.name=trent', 1],
      ['user.name=mallory', 2],
    ]);
    const one = (await list(adminA, `group=${String(g.items[1]!.key)}&limit=1`)).items[0]!;
    const d = (await call('GET', `/api/detections/${String(one.id)}`, adminA)).json<Json>();
    const evidence = d.evidence as { fields: { field: string; values: string[] }[] };
    expect(evidence.fields.slice(0, 3)).toEqual([
      { field: 'class_uid', values: ['3002'] },
      { field: 'status_id', values: ['2'] },
      { field: 'user.name', values: ['mallory'] },
    ]);
    expect(evidence.fields).toContainEqual({ field: 'src_endpoint.ip', values: ['203.0.113.9'] });
    expect((d.attack as { techniques: Json[] }).techniques).toEqual([
      {
        id: 'T1110.001',
        name: 'Password Guessing',
        parent_name: 'Brute Force',
        tactics: [{ id: 'TA0006', name: 'Credential Access' }],
      },
    ]);
  });
});
