// Saved queries and schedules through the API: permissions (mapping.read reads, query.save
// writes), organization scope (404, never 403, outside it), the audit trail, a query a
// schedule runs cannot go; the beat's slots run once each (two beats, one run), each run in
// the history, its result e-mailed with the CSV to the organization's recipients only, and a
// condition that does not hold sends nothing (recorded on the run).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/support/app.js';
import { createOrganization, createPrincipal, type Principal } from '../../../test/support/identity.js';
import { startSmtpServer, TEST_CA_PEM, type TestSmtpServer } from '../../../test/support/smtp-server.js';
import type { Clock } from '../../core/clock.js';
import { inTransaction } from '../../platform/db/ambient.js';
import type { Consumer } from '../../platform/queue/port.js';
import { storedCopies } from '../../pipeline/delivery/routing-write.js';
import { startConsumers } from '../../roles/jobs.js';
import { EMAIL_QUEUE } from '../email/jobs.js';
import { SEARCH_QUEUE } from './runs.js';
import { conditionHolds, nextSlot } from './schedules.js';

type Json = Record<string, unknown>;
let now = Date.parse('2026-11-26T10:00:30Z');
const clock: Clock = { now: () => new Date(now) };
let t: TestApp;
let smtp: TestSmtpServer;
let orgA: number;
let orgB: number;
let platform: Principal;
let adminA: Principal;
let operatorA: Principal;
let viewerA: Principal;
let adminB: Principal;
let consumers: Consumer[] = [];
let stored = 0;

async function call(method: string, url: string, who: Principal, payload?: unknown) {
  return t.app.inject({
    method: method as 'GET',
    url,
    headers: who.headers,
    ...(payload === undefined ? {} : { payload: payload as Json }),
  });
}

async function storeEvents(org: number, events: { user: string; minutesAgo: number }[]): Promise<void> {
  const store = t.container.eventStore;
  const ocsf = events.map((e) => ({
    class_uid: 3002,
    activity_id: 1,
    severity_id: 1,
    time: now - e.minutesAgo * 60_000,
    user: { name: e.user },
  }));
  const ids = ocsf.map(
    () => `0190a0b0-0000-7000-8000-${String(org).padStart(4, '0')}${String(++stored).padStart(8, '0')}`,
  );
  const copies = storedCopies(
    'd',
    { organization_id: org, integration_id: 1, stream: 'auth' },
    ocsf.map((e) => JSON.stringify(e)),
    (i) => ({ id: ids[i]!, received: now, ocsf: ocsf[i]! }),
  );
  await store.prepare(crypto.randomUUID(), [copies]);
  await inTransaction(t.container.database.db, () => store.write([copies]));
}

beforeAll(async () => {
  smtp = await startSmtpServer();
  t = await createTestApp({ clock, env: { WEIR_TOKEN_RATE_LIMIT: '1000000', WEIR_EMAIL_BACKOFF_MS: '10' } });
  orgA = await createOrganization(t, 'Sched A');
  orgB = await createOrganization(t, 'Sched B');
  platform = await createPrincipal(t, { role: 'admin', organizationId: null });
  adminA = await createPrincipal(t, { role: 'admin', organizationId: orgA });
  operatorA = await createPrincipal(t, { role: 'operator', organizationId: orgA });
  viewerA = await createPrincipal(t, { role: 'viewer', organizationId: orgA });
  adminB = await createPrincipal(t, { role: 'admin', organizationId: orgB });
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
  for (const [org, address] of [
    [orgA, 'soc-a@example.test'],
    [orgB, 'soc-b@example.test'],
  ] as const) {
    expect((await call('POST', '/api/emails/', platform, { organization_id: org, address })).statusCode).toBe(201);
  }
  await storeEvents(orgA, [
    { user: 'admin', minutesAgo: 5 },
    { user: 'bob', minutesAgo: 20 },
    { user: 'admin', minutesAgo: 90 },
  ]);
  await storeEvents(orgB, [{ user: 'admin', minutesAgo: 5 }]);
  consumers = startConsumers(
    t.container.queue,
    t.container.jobs.filter((j) => j.queue === SEARCH_QUEUE || j.queue === EMAIL_QUEUE),
    t.container.logger,
  );
});
afterAll(async () => {
  await Promise.all(consumers.map((c) => c.close()));
  await t?.close();
  await smtp?.close();
});

describe('saved queries', () => {
  let id: string;
  it('are saved with query.save (operator), read with mapping.read (viewer), refused to a viewer for writing', async () => {
    const body = {
      name: 'Admin logins',
      description: 'who signs in as admin',
      query: { query: 'class_uid = 3002 and user.name = "admin"', time: { last: '1h' }, fields: ['user.name'] },
    };
    expect((await call('POST', '/api/queries/', viewerA, body)).statusCode).toBe(403);
    const created = await call('POST', '/api/queries/', operatorA, body);
    expect(created.statusCode, created.body).toBe(201);
    id = created.json<{ id: string }>().id;
    expect(created.json()).toMatchObject({
      organization_id: orgA,
      name: 'Admin logins',
      query: { query: 'class_uid = 3002 and user.name = "admin"' },
    });
    expect((await call('GET', `/api/queries/${id}`, viewerA)).statusCode).toBe(200);
    expect((await call('GET', '/api/queries/', viewerA)).json()).toMatchObject({ total: 1, items: [{ id }] });
    expect((await call('POST', '/api/queries/', operatorA, body)).statusCode).toBe(409);
  });

  it('are checked whole when saved: an unknown field is a 422 with the closest name', async () => {
    const res = await call('POST', '/api/queries/', operatorA, { name: 'bad', query: { query: 'user.nam = "x"' } });
    expect(res.statusCode).toBe(422);
    expect(res.json()).toMatchObject({
      error: { code: 'search.invalid_query', details: { errors: [{ closest: 'user.name' }] } },
    });
  });

  it("are another organization's business: 404 to read, change or delete", async () => {
    expect((await call('GET', `/api/queries/${id}`, adminB)).statusCode).toBe(404);
    expect((await call('PUT', `/api/queries/${id}`, adminB, { name: 'x' })).statusCode).toBe(404);
    expect((await call('DELETE', `/api/queries/${id}`, adminB)).statusCode).toBe(404);
    expect((await call('GET', '/api/queries/', adminB)).json()).toMatchObject({ total: 0 });
  });

  it('change with PUT and run by id, with another time range; every change audited', async () => {
    const put = await call('PUT', `/api/queries/${id}`, operatorA, { description: 'changed' });
    expect(put.json()).toMatchObject({ description: 'changed', updated_by: operatorA.id });
    const run = await call('POST', '/api/search', viewerA, { query_id: id, time: { last: '2h' } });
    expect(run.json()).toMatchObject({ state: 'completed', matched: 2, query_id: id });
    const audit = await t.container.database.db
      .selectFrom('audit_log')
      .select('operation_id')
      .where('target_id', '=', id)
      .where('outcome', '=', 'success')
      .orderBy('seq')
      .execute();
    expect(audit.map((a) => a.operation_id)).toEqual(['queries.create', 'queries.update']);
  });
});

describe('schedules', () => {
  let queryId: string;
  let scheduleId: string;
  beforeAll(async () => {
    queryId = (
      await call('POST', '/api/queries/', operatorA, {
        name: 'Recent admin logins',
        query: { query: 'user.name = "admin"', time: { last: '1h' } },
      })
    ).json<{ id: string }>().id;
  });

  it('refuse what cannot run: no timing, a bad cron, a bad zone, too often', async () => {
    for (const body of [
      {},
      { cron: 'not cron' },
      { cron: '0 8 * * *', timezone: 'Mars/Olympus' },
      { cron: '* * * * * *' },
      { cron: '0 8 * * *', interval_seconds: 600 },
    ]) {
      const res = await call('POST', '/api/schedules/', operatorA, { name: 's', query_id: queryId, ...body });
      expect(res.statusCode, JSON.stringify(body)).toBe(422);
      expect(typeof res.json<{ detail: unknown }>().detail).toBe('string');
    }
  });

  it('are created on an interval, listed with their next run, and 404 outside the organization', async () => {
    const res = await call('POST', '/api/schedules/', operatorA, {
      name: 'Every hour',
      query_id: queryId,
      interval_seconds: 3600,
      notify: { condition: { op: 'gt', value: 0 } },
    });
    expect(res.statusCode, res.body).toBe(201);
    scheduleId = res.json<{ id: string }>().id;
    expect(res.json()).toMatchObject({
      organization_id: orgA,
      interval_seconds: 3600,
      next_run_at: new Date(now + 3_600_000).toISOString(),
      notify: { email: true, attach_csv: true, condition: { op: 'gt', value: 0 } },
    });
    expect((await call('GET', '/api/schedules/', viewerA)).json()).toMatchObject({ total: 1 });
    expect((await call('GET', `/api/schedules/${scheduleId}/history`, adminB)).statusCode).toBe(404);
    expect((await call('DELETE', `/api/schedules/${scheduleId}`, adminB)).statusCode).toBe(404);
    expect(
      (await call('POST', '/api/schedules/', adminB, { name: 'x', query_id: queryId, interval_seconds: 3600 }))
        .statusCode,
    ).toBe(404);
    // The query a schedule runs stays.
    expect((await call('DELETE', `/api/queries/${queryId}`, operatorA)).json()).toMatchObject({
      error: { code: 'search.query_in_use' },
    });
  });

  it("run each slot once, however many beats tick, and e-mail the CSV to the organization's recipients only", async () => {
    now += 3_600_000;
    // Within the slot's hour: one admin login (the earlier ones are older than the query's hour).
    await storeEvents(orgA, [{ user: 'admin', minutesAgo: 10 }]);
    const schedules = t.container.beatTasks.find((b) => b.name === 'search.schedules')!;
    // Two beats at the handover: one run for the slot.
    await Promise.all([schedules.run(clock.now()), schedules.run(clock.now())]);
    await schedules.run(clock.now());
    let history: { items: Json[] } = { items: [] };
    for (let i = 0; i < 100; i++) {
      history = (await call('GET', `/api/schedules/${scheduleId}/history`, viewerA)).json();
      if (history.items[0]?.notified) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(history.items).toHaveLength(1);
    expect(history.items[0]).toMatchObject({
      kind: 'scheduled',
      state: 'completed',
      matched: 1,
      schedule_id: scheduleId,
      run_by: `schedule:${scheduleId}`,
      notified: { sent: true },
    });
    const [mail] = await smtp.waitFor(1);
    expect(mail!.envelope.to).toEqual(['soc-a@example.test']);
    expect(mail!.parsed.subject).toBe('Weir: Every hour: 1 matching events');
    expect(mail!.parsed.attachments).toHaveLength(1);
    expect(mail!.parsed.attachments[0]!.content.toString('utf8')).toContain('""name"":""admin""');
    // A viewer reads the schedule's run.
    expect((await call('GET', `/api/search/history/result/${String(history.items[0]!.id)}`, viewerA)).statusCode).toBe(
      200,
    );
  });

  it('send nothing when the condition does not hold, and say so on the run', async () => {
    now += 3 * 3_600_000; // the admin logins are now older than the query's hour
    await t.container.beatTasks.find((b) => b.name === 'search.schedules')!.run(clock.now());
    let items: Json[] = [];
    for (let i = 0; i < 100; i++) {
      items = (await call('GET', `/api/schedules/${scheduleId}/history`, viewerA)).json<{ items: Json[] }>().items;
      if (items[0]?.notified) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    // The missed slots are not run one by one.
    expect(items).toHaveLength(2);
    expect(items[0]).toMatchObject({
      matched: 0,
      notified: { sent: false, reason: expect.stringMatching(/does not hold/) },
    });
    expect(smtp.received).toHaveLength(1);
  });

  it('are deleted with query.save; their runs stay in the history', async () => {
    expect((await call('DELETE', `/api/schedules/${scheduleId}`, viewerA)).statusCode).toBe(403);
    expect((await call('DELETE', `/api/schedules/${scheduleId}`, operatorA)).statusCode).toBe(204);
    expect(
      (await call('GET', '/api/search/history?scope=organization', adminA))
        .json<{ items: Json[] }>()
        .items.filter((r) => r.schedule_id === scheduleId),
    ).toHaveLength(2);
  });

  it('with an alert, make one detection per slot when the condition holds, the run attached', async () => {
    const created = await call('POST', '/api/schedules/', operatorA, {
      name: 'Admin sign-ins alert',
      query_id: queryId,
      interval_seconds: 3600,
      notify: {
        email: false,
        condition: { op: 'gt', value: 0 },
        alert: { severity_id: 4, title: 'Admin signed in', mitre: { tactics: ['TA0004'], techniques: ['T1078'] } },
      },
    });
    expect(created.statusCode, created.body).toBe(201);
    const alertId = created.json<{ id: string }>().id;
    const schedules = t.container.beatTasks.find((b) => b.name === 'search.schedules')!;
    const runsOf = async () =>
      (await call('GET', `/api/schedules/${alertId}/history`, viewerA)).json<{ items: Json[] }>().items;
    const detectionsOf = async () =>
      (await call('GET', `/api/detections?organization_id=${orgA}&source=schedule`, viewerA)).json<{ items: Json[] }>()
        .items;
    // First slot: nothing matches, no detection.
    now += 3_600_000;
    await schedules.run(clock.now());
    for (let i = 0; i < 100 && !(await runsOf())[0]?.notified; i++) await new Promise((r) => setTimeout(r, 50));
    expect(await detectionsOf()).toEqual([]);
    // Second slot: an admin sign-in within the hour; two beats tick, one run, one detection.
    now += 3_600_000;
    await storeEvents(orgA, [{ user: 'admin', minutesAgo: 10 }]);
    await Promise.all([schedules.run(clock.now()), schedules.run(clock.now())]);
    let runs: Json[] = [];
    for (let i = 0; i < 100; i++) {
      runs = await runsOf();
      if (runs.length === 2 && runs[0]!.notified) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    const found = await detectionsOf();
    expect(found).toHaveLength(1);
    expect(found[0]).toMatchObject({
      source: 'schedule',
      title: 'Admin signed in',
      severity_id: 4,
      status: 'new',
      event_count: 1,
      mitre: { tactics: ['TA0004'], techniques: ['T1078'] },
    });
    expect(found[0]!.event_ids).toHaveLength(1);
    const detail = (await call('GET', `/api/detections/${String(found[0]!.id)}`, viewerA)).json<Json>();
    expect(detail).toMatchObject({ schedule_id: alertId, search_id: runs[0]!.id });
    // Another organization sees none of it.
    expect((await call('GET', `/api/detections/${String(found[0]!.id)}`, adminB)).statusCode).toBe(404);
    expect((await call('DELETE', `/api/schedules/${alertId}`, operatorA)).statusCode).toBe(204);
  });
});

describe('slots and conditions', () => {
  it('follow a cron expression in its time zone and an interval from the creation', () => {
    const created = new Date('2026-11-26T10:00:00Z');
    expect(
      nextSlot(
        { cron: '0 8 * * *', timezone: 'Europe/Paris', interval_seconds: null, created_at: created },
        new Date('2026-11-26T07:30:00Z'),
      ).toISOString(),
    ).toBe('2026-11-27T07:00:00.000Z');
    expect(
      nextSlot(
        { cron: null, timezone: 'UTC', interval_seconds: 600, created_at: created },
        new Date('2026-11-26T10:25:00Z'),
      ).toISOString(),
    ).toBe('2026-11-26T10:30:00.000Z');
    expect(
      nextSlot(
        { cron: null, timezone: 'UTC', interval_seconds: 600, created_at: created },
        new Date('2026-11-26T10:30:00Z'),
      ).toISOString(),
    ).toBe('2026-11-26T10:40:00.000Z');
  });

  it('hold as written', () => {
    expect(conditionHolds(null, 0)).toBe(true);
    expect(conditionHolds({ op: 'gt', value: 0 }, 0)).toBe(false);
    expect(conditionHolds({ op: 'gte', value: 3 }, 3)).toBe(true);
    expect(conditionHolds({ op: 'ne', value: 3 }, 3)).toBe(false);
  });
});
