import { afterEach, describe, expect, it } from 'vitest';
import { startFakeHec, splitConcatenated, type FakeHec } from '../../../../test/support/fake-hec.js';
import {
  ocsfEvents,
  sinkBatch,
  sinkBatchFromLines,
  sinkContext,
  failure,
} from '../../../../test/support/sink-batch.js';
import { startWebhookReceiver, TEST_TLS } from '../../../../test/support/webhook-receiver.js';
import type { Sink } from '../types.js';
import { hecBody } from './hec.js';
import { splunkHecSink } from './index.js';

const TOKEN = '6f1d7c1e-1b7a-4a57-9f4e-0c7d5f0e9a11';
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

async function hec(options: Partial<Parameters<typeof startFakeHec>[0]> = {}): Promise<FakeHec> {
  const h = await startFakeHec({ tokens: [TOKEN], ...options });
  cleanups.push(() => h.close());
  return h;
}

function sink(config: Record<string, unknown>, token: string | null = TOKEN, allowCidrs?: string[]): Sink {
  const s = splunkHecSink.create(
    sinkContext({
      config: { sourcetype: 'ocsf', ...config },
      credential: token === null ? null : { token },
      allowCidrs,
      type: splunkHecSink,
    }),
  );
  cleanups.push(() => s.close());
  return s;
}

describe('splunk_hec sink', () => {
  it('sends HEC event objects with OCSF time, index, source type and the event id', async () => {
    const h = await hec();
    const events = ocsfEvents(3, Date.UTC(2024, 0, 15, 12, 0, 0) + 123);
    const batch = sinkBatch(events);
    const s = sink({ url: h.url, index: 'security', sourcetype: 'ocsf:{class_uid}', source: 'weir', host: 'weir-1' });
    expect(await s.send(batch, AbortSignal.timeout(5000))).toEqual({});
    expect(h.events).toHaveLength(3);
    expect(h.events[0]).toMatchObject({
      index: 'security',
      sourcetype: 'ocsf:3002',
      source: 'weir',
      host: 'weir-1',
      time: 1705320000.123,
      fields: { weir_event_id: batch.ids[0] },
    });
    expect(h.events.map((e) => e.event)).toEqual(events);
    const req = h.requests[0]!;
    expect(req.path).toBe('/services/collector/event');
    expect(req.headers.authorization).toBe(`Splunk ${TOKEN}`);
    expect(req.headers['x-splunk-request-channel']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('embeds each line verbatim and omits what is not set', () => {
    const batch = sinkBatchFromLines(['{"class_uid":1001,"time":1000,"b":"x\\n"}', '{"no_time":true}'], {
      ids: ['id-1', 'id-2'],
    });
    expect(hecBody(batch, { sourcetype: 'ocsf' })).toBe(
      '{"time":1.000,"sourcetype":"ocsf","event":{"class_uid":1001,"time":1000,"b":"x\\n"},"fields":{"weir_event_id":"id-1"}}\n' +
        '{"sourcetype":"ocsf","event":{"no_time":true},"fields":{"weir_event_id":"id-2"}}',
    );
    expect(splitConcatenated('{"a":"}"}{"b":[{}]} \n{"c":1}').parts).toEqual(['{"a":"}"}', '{"b":[{}]}', '{"c":1}']);
  });

  it('accepts a URL that already names the collector path, and gzip', async () => {
    const h = await hec();
    await sink({ url: `${h.url}/services/collector/event`, gzip: true }).send(
      sinkBatch(ocsfEvents(2)),
      AbortSignal.timeout(5000),
    );
    expect(h.requests[0]).toMatchObject({ path: '/services/collector/event', status: 200, code: 0 });
    expect(h.requests[0]!.headers['content-encoding']).toBe('gzip');
    expect(h.events[0]!.index).toBe('main');
  });

  it('maps token refusals to auth without the token in the message', async () => {
    const h = await hec({ tokens: [TOKEN, { token: 'disabled-token-1', disabled: true }] });
    const invalid = await failure(
      sink({ url: h.url }, 'unknown-token-1').send(sinkBatch(ocsfEvents(1)), AbortSignal.timeout(5000)),
    );
    expect(invalid).toMatchObject({ kind: 'auth', statusCode: 403, retryable: false });
    expect(invalid.message).toBe('HEC 403 code 4: Invalid token');
    const disabled = await failure(
      sink({ url: h.url }, 'disabled-token-1').send(sinkBatch(ocsfEvents(1)), AbortSignal.timeout(5000)),
    );
    expect(disabled.message).toContain('code 1');
    expect(disabled.message).not.toContain('disabled-token-1');
    const missing = await failure(sink({ url: h.url }, null).send(sinkBatch(ocsfEvents(1)), AbortSignal.timeout(5000)));
    expect(missing.kind).toBe('config');
    expect(h.events).toHaveLength(0);
  });

  it('maps busy (503 code 9) with Retry-After and a wrong index to config', async () => {
    const h = await hec({ tokens: [{ token: TOKEN, indexes: ['security'] }] });
    h.setBusy(1, 5);
    const busy = await failure(
      sink({ url: h.url, index: 'security' }).send(sinkBatch(ocsfEvents(1)), AbortSignal.timeout(5000)),
    );
    expect(busy).toMatchObject({ kind: 'http_5xx', retryable: true, statusCode: 503, retryAfterMs: 5000 });
    expect(busy.message).toBe('HEC 503 code 9: Server is busy');
    const wrongIndex = await failure(
      sink({ url: h.url, index: 'other' }).send(sinkBatch(ocsfEvents(2)), AbortSignal.timeout(5000)),
    );
    expect(wrongIndex).toMatchObject({ kind: 'config', retryable: false, statusCode: 400 });
    expect(wrongIndex.message).toContain('Incorrect index');
  });

  it('rejects the one event HEC names as invalid and resends the others', async () => {
    const h = await hec();
    // An event whose "event" is blank (an empty string OCSF line cannot happen; a crafted one can).
    const batch = sinkBatchFromLines(['{"a":1}', '""', '{"c":3}'], { ids: ['e1', 'e2', 'e3'] });
    const result = await sink({ url: h.url }).send(batch, AbortSignal.timeout(5000));
    expect(result.rejected).toEqual([
      { index: 1, reason: 'HEC 400 code 13: Event field cannot be blank', statusCode: 400 },
    ]);
    expect(result.retry?.map((r) => r.index)).toEqual([0, 2]);
    // Like HEC, the fake indexed the event before the bad one: resending it is a duplicate, not a loss.
    expect(h.events.map((e) => e.fields?.weir_event_id)).toEqual(['e1']);
  });

  it('times out on abort, and maps refused connections and the SSRF guard', async () => {
    const hang = await startWebhookReceiver({ faults: { ratio: 1, modes: ['timeout'] } });
    cleanups.push(() => hang.close());
    expect(
      await failure(sink({ url: hang.url }).send(sinkBatch(ocsfEvents(1)), AbortSignal.timeout(150))),
    ).toMatchObject({ kind: 'timeout' });
    expect(
      (await failure(sink({ url: 'http://127.0.0.1:1' }).send(sinkBatch(ocsfEvents(1)), AbortSignal.timeout(5000))))
        .kind,
    ).toBe('connection');
    const h = await hec();
    const blocked = await failure(
      sink({ url: h.url }, TOKEN, []).send(sinkBatch(ocsfEvents(1)), AbortSignal.timeout(5000)),
    );
    expect(blocked).toMatchObject({ kind: 'blocked_address', retryable: false });
    expect(h.requests).toHaveLength(0);
  });

  it('test() checks health and the token without indexing anything', async () => {
    const h = await hec({ tls: true });
    const ok = await sink({ url: h.url, tls_ca: TEST_TLS.cert }).test(AbortSignal.timeout(5000));
    expect(ok).toMatchObject({ ok: true });
    expect(ok.detail).toBe('HEC health endpoint answered "HEC is healthy" and HEC accepted the credential');
    expect(h.requests.map((r) => r.code)).toEqual([17, 5]);
    expect(h.events).toHaveLength(0);

    const bad = await sink({ url: h.url, tls_ca: TEST_TLS.cert }, 'wrong-token-1').test(AbortSignal.timeout(5000));
    expect(bad).toMatchObject({ ok: false, error_kind: 'auth' });
    expect(bad.detail).toBe('HEC refused the credential (HEC 403 code 4: Invalid token)');

    h.setUnhealthy(true);
    expect(await sink({ url: h.url, tls_ca: TEST_TLS.cert }).test(AbortSignal.timeout(5000))).toMatchObject({
      ok: false,
      error_kind: 'http_5xx',
    });
    expect(await sink({ url: h.url }).test(AbortSignal.timeout(5000))).toMatchObject({ ok: false, error_kind: 'tls' });

    const notHec = await startWebhookReceiver();
    cleanups.push(() => notHec.close());
    expect(await sink({ url: notHec.url }).test(AbortSignal.timeout(5000))).toMatchObject({
      ok: false,
      error_kind: 'http_4xx',
    });
    expect(await sink({ url: 'http://127.0.0.1:1' }).test(AbortSignal.timeout(5000))).toMatchObject({
      ok: false,
      error_kind: 'connection',
    });
  });
});
