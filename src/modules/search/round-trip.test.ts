// The search round trip of issue 17, in one story on one Weir with its real consumers: a new
// organization (its event store and route made with it) pushes events over HTTP before anyone
// wrote a route; they are searched by condition and aggregated; the CSV downloads, then expires
// (410) while the JSON stays; a saved query on a schedule e-mails its CSV to the organization's
// recipient at a real SMTP server; the events are replayed into a file destination created after
// they arrived.
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/support/app.js';
import { createPrincipal, type Principal } from '../../../test/support/identity.js';
import { loginDocument } from '../../../test/support/mappings.js';
import { publishMapping } from '../../../test/support/normalization.js';
import { startSmtpServer, TEST_CA_PEM, type TestSmtpServer } from '../../../test/support/smtp-server.js';
import type { Clock } from '../../core/clock.js';
import { NORMALIZE_QUEUE } from '../../pipeline/envelope.js';
import type { Consumer } from '../../platform/queue/port.js';
import { startConsumers } from '../../roles/jobs.js';
import { EMAIL_QUEUE } from '../email/jobs.js';
import { SEARCH_QUEUE } from './runs.js';
import { ledgerRows } from '../../../test/support/ledger.js';

type Json = Record<string, unknown>;
let now = Date.now();
const clock: Clock = { now: () => new Date(now) };
let t: TestApp;
let smtp: TestSmtpServer;
let root: string;
let admin: Principal;
let org: number;
let consumers: Consumer[] = [];
let lanes: { stop(): Promise<void> } | undefined;

async function call(method: string, url: string, payload?: unknown, headers: Record<string, string> = admin.headers) {
  return t.app.inject({
    method: method as 'GET',
    url,
    headers,
    ...(payload === undefined ? {} : { payload: payload as Json }),
  });
}

async function until<T>(what: string, fn: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

beforeAll(async () => {
  smtp = await startSmtpServer();
  root = await mkdtemp(path.join(tmpdir(), 'weir-search-story-'));
  t = await createTestApp({
    clock,
    env: {
      WEIR_TOKEN_RATE_LIMIT: '1000000',
      WEIR_FILE_SINK_ROOT: root,
      WEIR_MAPPING_REFRESH_MS: '100',
      WEIR_DISPATCH_POLL_MS: '50',
      WEIR_PASS_THREADS: '0',
    },
  });
  admin = await createPrincipal(t, { role: 'admin', organizationId: null });
  consumers = startConsumers(
    t.container.queue,
    t.container.jobs.filter((j) => [NORMALIZE_QUEUE, SEARCH_QUEUE, EMAIL_QUEUE].includes(j.queue)),
    t.container.logger,
  );
  lanes = t.container.loops.find((l) => l.name === 'delivery')!.start();
});
afterAll(async () => {
  await lanes?.stop();
  await Promise.all(consumers.map((c) => c.close()));
  await t?.close();
  await smtp?.close();
  await rm(root, { recursive: true, force: true });
});

describe('the search round trip', () => {
  it('keeps what was pushed before any route, finds it, aggregates it, mails it on a schedule and replays it', async () => {
    org = (await call('POST', '/api/organizations/', { name: 'Story' })).json<{ id: number }>().id;
    const integration = (
      await call('POST', '/api/integrations/', { name: 'app', platform: 'custom', organization_id: org })
    ).json<{ id: number }>().id;
    const token = (await call('POST', `/api/ingest/integrations/${integration}/token`)).json<{ token: string }>().token;
    await publishMapping(t, org, 'custom', 'auth', loginDocument([{ target: 'status_id', from: 'status' }]));
    await new Promise((r) => setTimeout(r, 300));

    // 1. Push, before any route of the user's own.
    const users = ['alice', 'bob', 'alice', 'mallory', 'alice', 'bob'];
    const ndjson = users
      .map((u, i) =>
        JSON.stringify({
          type: 'login',
          ts: new Date(now - (i + 1) * 60_000).toISOString(),
          user: { name: u },
          client: { ip: `10.0.0.${i}` },
          host: 'vpn',
          status: u === 'mallory' ? 2 : 1,
        }),
      )
      .join('\n');
    const pushed = await t.app.inject({
      method: 'POST',
      url: '/api/ingest/auth',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/x-ndjson' },
      payload: ndjson,
    });
    expect(pushed.statusCode, pushed.body).toBe(200);
    await until('the events in the store', async () =>
      (await ledgerRows(t, { organization_id: org }))[0]?.delivered === 6 ? true : undefined,
    );

    // 2. Query by condition, with aggregations.
    const found = await call('POST', '/api/search', {
      query: {
        organization_id: org,
        query: 'user.name in (alice, bob) and status_id = 1',
        time: { last: '1h' },
        fields: ['user.name'],
        aggregations: [{ type: 'count_by', fields: ['user.name'] }],
      },
    });
    expect(found.json()).toMatchObject({
      state: 'completed',
      matched: 5,
      aggregations: [
        {
          buckets: [
            { key: { 'user.name': 'alice' }, count: 3 },
            { key: { 'user.name': 'bob' }, count: 2 },
          ],
        },
      ],
    });
    const searchId = found.json<{ id: string }>().id;

    // 3. CSV, then its expiry: 410 for the CSV, the JSON still there.
    const csv = await call('GET', `/api/search/history/result/${searchId}/csv`);
    expect(csv.body.trim().split('\r\n')).toHaveLength(6);
    now += 25 * 3_600_000;
    await t.container.jobs.find((j) => j.queue === SEARCH_QUEUE)!.handlers['search.expire']!(
      { id: 'e', queue: SEARCH_QUEUE, name: 'search.expire', payload: {}, attempt: 1, maxAttempts: 1 },
      new AbortController().signal,
    );
    expect((await call('GET', `/api/search/history/result/${searchId}/csv`)).statusCode).toBe(410);
    expect((await call('GET', `/api/search/history/result/${searchId}`)).statusCode).toBe(200);
    now -= 25 * 3_600_000;

    // 4. A schedule e-mails the CSV to the organization's recipient.
    expect(
      (
        await call('PUT', '/api/emails/config', {
          host: 'localhost',
          port: smtp.port,
          security: 'starttls',
          from_address: 'weir@example.test',
          ca_pem: TEST_CA_PEM,
        })
      ).statusCode,
    ).toBe(200);
    expect((await call('POST', '/api/emails/', { organization_id: org, address: 'soc@example.test' })).statusCode).toBe(
      201,
    );
    const query = (
      await call('POST', '/api/queries/', {
        organization_id: org,
        name: 'failed logins',
        query: { query: 'status_id = 2', time: { last: '2h' } },
      })
    ).json<{ id: string }>().id;
    expect(
      (
        await call('POST', '/api/schedules/', {
          name: 'hourly failed logins',
          query_id: query,
          interval_seconds: 3600,
          notify: { condition: { op: 'gt', value: 0 } },
        })
      ).statusCode,
    ).toBe(201);
    // The first slot, an hour after the schedule's creation: the run reads the two hours before it.
    now += 3_600_000;
    await t.container.beatTasks.find((b) => b.name === 'search.schedules')!.run(clock.now());
    const [mail] = await smtp.waitFor(1, 20_000);
    expect(mail!.envelope.to).toEqual(['soc@example.test']);
    expect(mail!.parsed.attachments[0]!.content.toString('utf8')).toContain('mallory');
    now = Date.now();

    // 5. Replay into a file destination created after the events arrived.
    const dest = (
      await call('POST', '/api/collectors/destinations', {
        name: 'late files',
        type: 'file',
        organization_id: org,
        config: { path: 'late', idle_seconds: 1 },
      })
    ).json<{ id: string }>().id;
    const replay = (
      await call('POST', '/api/search/replay', { organization_id: org, destination_id: dest, time: { last: '2h' } })
    ).json<{ id: string }>().id;
    await until('the replay', async () =>
      (await call('GET', `/api/search/replay/${replay}`)).json<Json>().state === 'completed' ? true : undefined,
    );
    const dir = path.join(root, `org-${org}`, 'late');
    const lines = await until('the replayed file', async () => {
      const files = (await readdir(dir).catch(() => [] as string[])).filter((f) => f.endsWith('.ndjson'));
      const text = (await Promise.all(files.map((f) => readFile(path.join(dir, f), 'utf8')))).join('');
      const got = text.split('\n').filter(Boolean);
      return got.length === 6 ? got : undefined;
    });
    expect(lines.map((l) => (JSON.parse(l) as { user: { name: string } }).user.name).sort()).toEqual([...users].sort());
    const [balance] = await ledgerRows(t, { organization_id: org });
    expect(balance).toMatchObject({ events_in: 6, replayed: 6, unaccounted: 0 });
  }, 120_000);
});
