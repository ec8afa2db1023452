// Splunk HEC input against a whole Weir app: a client that speaks HEC as Splunk documents it
// ("Format events for HTTP Event Collector", "HTTP Event Collector REST API endpoints",
// "Troubleshoot HTTP Event Collector"): concatenated JSON envelopes, raw text, gzip, a data
// channel with indexer acknowledgement polled at /services/collector/ack, and HEC's answer codes.
import { randomUUID } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, startWorkerConsumers, type TestApp } from '../../../test/support/app.js';
import { createOrganization, createPrincipal, type Principal } from '../../../test/support/identity.js';
import { ingestTarget } from '../../../test/support/ingest-target.js';
import type { Consumer } from '../../platform/queue/port.js';

type Json = Record<string, unknown>;

let t: TestApp;
let admin: Principal;
let integrationId: number;
let token: string;
const consumers: Consumer[] = [];

beforeAll(async () => {
  // Two pending batches at most: the backpressure test fills them while no worker runs.
  t = await createTestApp({ env: { WEIR_TOKEN_RATE_LIMIT: '1000000', WEIR_INGEST_MAX_PENDING_BATCHES: '2' } });
  const org = await createOrganization(t, 'HEC org');
  admin = await createPrincipal(t, { role: 'admin', organizationId: org });
  ({ id: integrationId, token } = await ingestTarget(t, admin, org, { name: 'splunk forwarders' }));
});
afterAll(async () => {
  await Promise.all(consumers.map((c) => c.close()));
  await t?.close();
});

function hecOnce(path: string, body: string | Buffer, headers: Record<string, string> = {}) {
  return t.app.inject({
    method: 'POST',
    url: path,
    headers: { authorization: `Splunk ${token}`, 'content-type': 'application/json', ...headers },
    payload: body,
  });
}

/** As an HEC client does: a 503 code 9 is sent again (here sooner than its Retry-After). */
async function hec(path: string, body: string | Buffer, headers: Record<string, string> = {}) {
  const deadline = Date.now() + 20_000;
  let res = await hecOnce(path, body, headers);
  while (res.statusCode === 503 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 200));
    res = await hecOnce(path, body, headers);
  }
  return res;
}

async function acks(channel: string, ids: number[]): Promise<Record<string, boolean>> {
  const res = await hec('/services/collector/ack', JSON.stringify({ acks: ids }), {
    'x-splunk-request-channel': channel,
  });
  expect(res.statusCode, res.body).toBe(200);
  return res.json<{ acks: Record<string, boolean> }>().acks;
}

async function streamCounts(): Promise<Record<string, number>> {
  const res = await t.app.inject({
    method: 'GET',
    url: `/api/ingest/integrations/${integrationId}`,
    headers: admin.headers,
  });
  const streams = (res.json<Json>().stats as { streams: { stream: string; events_in: number }[] }).streams;
  return Object.fromEntries(streams.map((s) => [s.stream, s.events_in]));
}

async function eventually<T>(read: () => Promise<T>, ok: (v: T) => boolean, ms = 20_000): Promise<T> {
  const deadline = Date.now() + ms;
  let v = await read();
  while (!ok(v) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
    v = await read();
  }
  return v;
}

describe('Splunk HEC input', () => {
  it('answers ackId per channel, false until the request is processed, true once, then forgotten', async () => {
    const channel = randomUUID();
    const res = await hec(
      '/services/collector/event',
      '{"time": 1426279439, "sourcetype": "ack:test", "event": {"action": "login"}}',
      { 'x-splunk-request-channel': channel },
    );
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ text: 'Success', code: 0, ackId: 0 });
    // No worker runs yet: accepted, not processed.
    expect(await acks(channel, [0, 7])).toEqual({ '0': false, '7': false });
    // Another channel's ids are its own, and the query-string form of the channel works.
    const other = await hec(
      `/services/collector/event?channel=${randomUUID()}`,
      '{"event":"x","sourcetype":"ack:test"}',
    );
    expect(other.json()).toMatchObject({ code: 0, ackId: 0 });
  });

  it('answers 503 code 9 with Retry-After while the pipeline is saturated', async () => {
    let res = await hecOnce('/services/collector/event', '{"event":"fill","sourcetype":"ack:test"}');
    const deadline = Date.now() + 10_000;
    while (res.statusCode === 200 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 300));
      res = await hecOnce('/services/collector/event', '{"event":"fill","sourcetype":"ack:test"}');
    }
    expect(res.statusCode, res.body).toBe(503);
    expect(res.json()).toMatchObject({ text: 'Server is busy', code: 9 });
    expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
  });

  it('acknowledges once the workers have normalized and routed the request', async () => {
    const channel = randomUUID();
    consumers.push(...startWorkerConsumers(t));
    const first = await hec('/services/collector/event', '{"event":{"n":1}}{"event":{"n":2}}', {
      'x-splunk-request-channel': channel,
    });
    expect(first.json()).toEqual({ text: 'Success', code: 0, ackId: 0 });
    expect(
      await eventually(
        () => acks(channel, [0]),
        (a) => a['0'] === true,
      ),
    ).toEqual({ '0': true });
    // HEC answers an acknowledgement true once.
    expect(await acks(channel, [0])).toEqual({ '0': false });
    const second = await hec('/services/collector/event', '{"event":{"n":3}}', { 'x-splunk-request-channel': channel });
    expect(second.json()).toMatchObject({ code: 0, ackId: 1 });
  });

  it('takes concatenated envelopes, gzip and raw text into streams named by the sourcetype', async () => {
    const before = await streamCounts();
    // Splunk's documented batch: envelopes back to back, and one per line.
    const batch =
      '{"time":1426279439,"host":"web-01","source":"/var/log/auth.log","sourcetype":"linux:auth","fields":{"dc":"eu","tags":["a","b"]},"event":"Failed password for root"}' +
      '{"sourcetype":"linux:auth","event":{"user":"root","action":"denied"}}\n' +
      '  {"sourcetype":"linux:auth","event":"third"}';
    const plain = await hec('/services/collector', batch);
    expect(plain.json()).toEqual({ text: 'Success', code: 0 });
    const zipped = await hec('/services/collector/event/1.0', gzipSync(batch), { 'content-encoding': 'gzip' });
    expect(zipped.json()).toEqual({ text: 'Success', code: 0 });
    const raw = await hec(
      '/services/collector/raw?sourcetype=access_combined&host=proxy',
      'GET /a 200\n\nGET /b 404\n',
      {
        'content-type': 'text/plain',
      },
    );
    expect(raw.json()).toEqual({ text: 'Success', code: 0 });
    const after = await eventually(
      streamCounts,
      (c) => (c.linux_auth ?? 0) >= (before.linux_auth ?? 0) + 6 && (c.access_combined ?? 0) >= 2,
    );
    expect(after.linux_auth! - (before.linux_auth ?? 0)).toBe(6);
    expect(after.access_combined! - (before.access_combined ?? 0)).toBe(2);

    await t.container.normalization.aggregates.flush();
    const samples = await t.app.inject({
      method: 'GET',
      url: `/api/mappings/samples?integration_id=${integrationId}&stream=linux_auth&limit=50`,
      headers: admin.headers,
    });
    const raws = samples.json<{ items: { raw: Json }[] }>().items.map((i) => i.raw);
    // (user names are masked in samples)
    expect(raws).toContainEqual(expect.objectContaining({ action: 'denied', hec: { sourcetype: 'linux:auth' } }));
    expect(raws).toContainEqual(
      expect.objectContaining({
        message: expect.any(String),
        hec: expect.objectContaining({
          time: 1426279439,
          sourcetype: 'linux:auth',
          fields: { dc: 'eu', tags: ['a', 'b'] },
        }),
      }),
    );
  });

  it('stops at the first bad event: the ones before it are accepted, code and invalid-event-number say which', async () => {
    const before = (await streamCounts()).prefix ?? 0;
    const good = '{"sourcetype":"prefix","event":{"ok":1}}';
    const cases: [string, number, number][] = [
      [`${good}${good}{"sourcetype":"prefix","event":{"ok":`, 6, 2],
      [`${good}{"sourcetype":"prefix","host":"h"}`, 12, 1],
      [`${good}{"event":""}`, 13, 1],
      [`${good}{"event":"x","fields":{"nested":{"a":1}}}`, 15, 1],
      [`${good}{"event":"x","time":"yesterday"}`, 6, 1],
      ['[{"event":"an array is not HEC"}]', 6, 0],
    ];
    for (const [body, code, at] of cases) {
      const res = await hec('/services/collector/event', body);
      expect(res.statusCode, body).toBe(400);
      expect(res.json(), body).toMatchObject({ code, 'invalid-event-number': at, detail: expect.any(String) });
    }
    const after = await eventually(streamCounts, (c) => (c.prefix ?? 0) >= before + 6);
    expect(after.prefix! - before).toBe(6);
  });

  it("answers HEC's codes for credentials, channels and empty requests", async () => {
    const noAuth = await t.app.inject({ method: 'POST', url: '/services/collector/event', payload: '{"event":"x"}' });
    expect([noAuth.statusCode, noAuth.json()]).toEqual([
      401,
      expect.objectContaining({ text: 'Token is required', code: 2 }),
    ]);
    const basic = await hec('/services/collector/event', '{"event":"x"}', { authorization: 'Basic eDp5' });
    expect([basic.statusCode, basic.json().code]).toEqual([401, 3]);
    const wrong = await hec('/services/collector/event', '{"event":"x"}', {
      authorization: 'Splunk svcik_not-a-token',
    });
    expect([wrong.statusCode, wrong.json()]).toEqual([
      403,
      expect.objectContaining({ text: 'Invalid token', code: 4 }),
    ]);
    const bearer = await hec('/services/collector/event', '{"event":"x"}', { authorization: `Bearer ${token}` });
    expect([bearer.statusCode, bearer.json().code]).toEqual([200, 0]);

    // HEC's query-string token: refused, and the token appears nowhere in the answer.
    const inQuery = await t.app.inject({
      method: 'POST',
      url: `/services/collector/event?token=${token}`,
      payload: '{"event":"x"}',
    });
    expect(inQuery.statusCode).toBe(400);
    expect(inQuery.json()).toMatchObject({ text: 'Query string authorization is not enabled', code: 16 });
    expect(inQuery.json().detail).toMatch(/Authorization: Splunk <token>/);
    expect(inQuery.body).not.toContain(token);

    const empty = await hec('/services/collector/event', '  \n');
    expect([empty.statusCode, empty.json()]).toEqual([400, expect.objectContaining({ text: 'No data', code: 5 })]);
    const badChannel = await hec('/services/collector/event', '{"event":"x"}', {
      'x-splunk-request-channel': 'not-a-guid',
    });
    expect([badChannel.statusCode, badChannel.json().code]).toEqual([400, 11]);
    const noChannel = await hec('/services/collector/ack', '{"acks":[0]}');
    expect([noChannel.statusCode, noChannel.json().code]).toEqual([400, 10]);
    const badAcks = await hec('/services/collector/ack', '{"acks":"all"}', {
      'x-splunk-request-channel': randomUUID(),
    });
    expect([badAcks.statusCode, badAcks.json().code]).toEqual([400, 6]);
  });

  it('answers the health check, and checks a token when one is given', async () => {
    for (const url of ['/services/collector/health', '/services/collector/health/1.0']) {
      const res = await t.app.inject({ method: 'GET', url });
      expect([res.statusCode, res.json()]).toEqual([200, { text: 'HEC is healthy', code: 17 }]);
    }
    const withToken = await t.app.inject({
      method: 'GET',
      url: '/services/collector/health',
      headers: { authorization: `Splunk ${token}` },
    });
    expect(withToken.json().code).toBe(17);
    const bad = await t.app.inject({
      method: 'GET',
      url: '/services/collector/health',
      headers: { authorization: 'Splunk wrong' },
    });
    expect([bad.statusCode, bad.json().code]).toEqual([403, 4]);
  });
});
