import { afterEach, describe, expect, it } from 'vitest';
import {
  filterPath,
  startFakeElasticsearch,
  type FakeEs,
  type FakeEsOptions,
} from '../../../../test/support/fake-elasticsearch.js';
import { ocsfEvents, sinkBatch, sinkContext, failure } from '../../../../test/support/sink-batch.js';
import { startWebhookReceiver, TEST_TLS } from '../../../../test/support/webhook-receiver.js';
import { DeliveryError, type Sink } from '../types.js';
import { bulkBody, indexNamer } from './bulk.js';
import { elasticsearchSink } from './index.js';

const USERS = { weir: 'es-password-1' };
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

async function es(options: FakeEsOptions = { users: USERS }): Promise<FakeEs> {
  const e = await startFakeElasticsearch(options);
  cleanups.push(() => e.close());
  return e;
}

function sink(
  config: Record<string, unknown>,
  credential: Record<string, string> | null = { username: 'weir', password: 'es-password-1' },
  allowCidrs?: string[],
): Sink {
  const s = elasticsearchSink.create(sinkContext({ config, credential, allowCidrs, type: elasticsearchSink }));
  cleanups.push(() => s.close());
  return s;
}

describe('elasticsearch sink', () => {
  it('indexes each event with its envelope id through _bulk', async () => {
    const e = await es();
    const events = ocsfEvents(3);
    const batch = sinkBatch(events);
    expect(await sink({ url: e.url, pipeline: 'ocsf-enrich' }).send(batch, AbortSignal.timeout(5000))).toEqual({});
    const docs = e.indices.get('ocsf-events')!;
    expect([...docs.keys()]).toEqual(batch.ids);
    expect(docs.get(batch.ids[0]!)).toMatchObject({ source: events[0], version: 1, pipeline: 'ocsf-enrich' });
    // Weir's index template first (template.test.ts), then the documents with @timestamp from the OCSF time.
    expect(e.requests[0]!.path).toBe('/_index_template/weir-ocsf-events');
    const req = e.requests[1]!;
    expect(req.path).toMatch(/^\/_bulk\?filter_path=/);
    expect(req.headers['content-type']).toBe('application/x-ndjson');
    expect(req.body).toBe(
      batch.lines
        .map(
          (l, i) =>
            `{"create":{"_index":"ocsf-events","_id":"${batch.ids[i]}"}}\n` +
            `{"@timestamp":"${new Date(events[i]!.time as number).toISOString()}",${l.slice(1)}\n`,
        )
        .join(''),
    );
  });

  it('counts a redelivery (409 on create) as delivered and overwrites with op_type index', async () => {
    const e = await es();
    const batch = sinkBatch(ocsfEvents(2));
    const s = sink({ url: e.url });
    await s.send(batch, AbortSignal.timeout(5000));
    expect(await s.send(batch, AbortSignal.timeout(5000))).toEqual({});
    expect(e.docs('ocsf-events')).toHaveLength(2);
    expect(e.docs('ocsf-events')[0]!.version).toBe(1);
    await sink({ url: e.url, op_type: 'index' }).send(batch, AbortSignal.timeout(5000));
    expect(e.docs('ocsf-events')[0]!.version).toBe(2);
  });

  it('sorts item failures: mapping errors rejected, 429 and 5xx retried', async () => {
    const e = await es();
    const events = ocsfEvents(5);
    events[1]!.force_mapping_error = 'not-a-number';
    events[2]!.force_item_status = 429;
    events[4]!.force_item_status = 503;
    const result = await sink({ url: e.url, gzip: true }).send(sinkBatch(events), AbortSignal.timeout(5000));
    expect(result.rejected).toHaveLength(1);
    expect(result.rejected![0]).toMatchObject({ index: 1, statusCode: 400 });
    expect(result.rejected![0]!.reason).toContain('document_parsing_exception');
    expect(result.retry?.map((r) => [r.index, r.statusCode])).toEqual([
      [2, 429],
      [4, 503],
    ]);
    expect(e.docs('ocsf-events')).toHaveLength(2);
    expect(e.requests.find((r) => r.path.startsWith('/_bulk'))!.headers['content-encoding']).toBe('gzip');
  });

  it('names the index from the event time with a date pattern', async () => {
    const e = await es();
    const day1 = Date.UTC(2024, 2, 9, 23, 59, 59);
    const events = [...ocsfEvents(2, day1), { class_uid: 1, message: 'no time' }];
    await sink({ url: e.url, index: 'ocsf-{yyyy.MM.dd}' }).send(sinkBatch(events), AbortSignal.timeout(5000));
    expect(e.docs('ocsf-2024.03.09')).toHaveLength(1);
    expect(e.docs('ocsf-2024.03.10')).toHaveLength(1);
    const today = new Date().toISOString().slice(0, 10).replaceAll('-', '.');
    expect(e.docs(`ocsf-${today}`)).toHaveLength(1);
    expect(indexNamer('logs-{yyyy.MM}')(Date.UTC(2023, 10, 5))).toBe('logs-2023.11');
    expect(() => indexNamer('Ocsf')).toThrow(DeliveryError);
    expect(() => indexNamer('ocsf-{HH}')).toThrow(/unknown date pattern/);
    const b = sinkBatch([{ a: 1 }], { ids: ['id-"1'] });
    expect(bulkBody(b, { opType: 'index', indexOf: () => 'x', dated: false })).toBe(
      '{"index":{"_index":"x","_id":"id-\\"1"}}\n{"a":1}\n',
    );
  });

  it('authenticates with an API key and maps refusals to auth without secrets', async () => {
    const e = await es({ apiKeys: [{ id: 'key-id', key: 'key-secret-value' }] });
    await sink({ url: e.url }, { api_key: 'key-id:key-secret-value' }).send(
      sinkBatch(ocsfEvents(1)),
      AbortSignal.timeout(5000),
    );
    const encoded = Buffer.from('key-id:key-secret-value').toString('base64');
    await sink({ url: e.url }, { api_key: encoded }).send(sinkBatch(ocsfEvents(1)), AbortSignal.timeout(5000));
    expect(e.docs('ocsf-events')).toHaveLength(2);
    const err = await failure(
      sink({ url: e.url }, { api_key: 'key-id:wrong-secret' }).send(
        sinkBatch(ocsfEvents(1)),
        AbortSignal.timeout(5000),
      ),
    );
    expect(err).toMatchObject({ kind: 'auth', statusCode: 401, retryable: false });
    expect(err.message).toContain('security_exception');
    expect(err.message).not.toContain('wrong-secret');
    const none = await failure(sink({ url: e.url }, null).send(sinkBatch(ocsfEvents(1)), AbortSignal.timeout(5000)));
    expect(none.message).toContain('missing authentication credentials');
    const both = await failure(
      sink({ url: e.url }, { api_key: 'a:b', username: 'u', password: 'p' }).send(
        sinkBatch(ocsfEvents(1)),
        AbortSignal.timeout(5000),
      ),
    );
    expect(both.kind).toBe('config');
  });

  it('maps whole-request 429, 5xx and 413', async () => {
    const e = await es();
    const s = sink({ url: e.url });
    e.failNext(429, 1, { 'retry-after': '3' });
    expect(await failure(s.send(sinkBatch(ocsfEvents(1)), AbortSignal.timeout(5000)))).toMatchObject({
      kind: 'rate_limited',
      retryAfterMs: 3000,
      retryable: true,
    });
    e.failNext(503);
    const e503 = await failure(s.send(sinkBatch(ocsfEvents(1)), AbortSignal.timeout(5000)));
    expect(e503).toMatchObject({ kind: 'http_5xx', retryable: true });
    expect(e503.message).toContain('cluster_block_exception');
    e.failNext(413);
    const e413 = await failure(s.send(sinkBatch(ocsfEvents(1)), AbortSignal.timeout(5000)));
    expect(e413).toMatchObject({ kind: 'http_4xx', retryable: false, statusCode: 413 });
    expect(e413.message).toContain('max_bytes');
    expect(e.docs('ocsf-events')).toHaveLength(0);
  });

  it('times out on abort, maps refused connections and the SSRF guard', async () => {
    const hang = await startWebhookReceiver({ faults: { ratio: 1, modes: ['timeout'] } });
    cleanups.push(() => hang.close());
    expect(
      await failure(sink({ url: hang.url }).send(sinkBatch(ocsfEvents(1)), AbortSignal.timeout(150))),
    ).toMatchObject({ kind: 'timeout' });
    expect(
      (await failure(sink({ url: 'http://127.0.0.1:1' }).send(sinkBatch(ocsfEvents(1)), AbortSignal.timeout(5000))))
        .kind,
    ).toBe('connection');
    const e = await es();
    expect(
      await failure(sink({ url: e.url }, undefined, []).send(sinkBatch(ocsfEvents(1)), AbortSignal.timeout(5000))),
    ).toMatchObject({ kind: 'blocked_address', retryable: false });
    expect(e.requests).toHaveLength(0);
  });

  it('test() reads the cluster name and version', async () => {
    const e = await es({ users: USERS, tls: true });
    const ok = await sink({ url: e.url, tls_ca: TEST_TLS.cert }).test(AbortSignal.timeout(5000));
    expect(ok).toMatchObject({ ok: true, detail: 'cluster "weir-test" answered: Elasticsearch 8.15.0' });
    const bad = await sink({ url: e.url, tls_ca: TEST_TLS.cert }, { username: 'weir', password: 'nope-nope' }).test(
      AbortSignal.timeout(5000),
    );
    expect(bad).toMatchObject({ ok: false, error_kind: 'auth' });
    expect(bad.detail).not.toContain('nope-nope');
    const os = await es({ flavor: 'opensearch' });
    expect((await sink({ url: os.url }, null).test(AbortSignal.timeout(5000))).detail).toContain('OpenSearch 2.15.0');
    const notEs = await startWebhookReceiver();
    cleanups.push(() => notEs.close());
    expect(await sink({ url: notEs.url }).test(AbortSignal.timeout(5000))).toMatchObject({
      ok: false,
      error_kind: 'protocol',
    });
    expect(await sink({ url: 'http://127.0.0.1:1' }).test(AbortSignal.timeout(5000))).toMatchObject({
      ok: false,
      error_kind: 'connection',
    });
  });

  it('the fake validates bulk framing like Elasticsearch', async () => {
    const e = await es({});
    const post = (body: string, type = 'application/x-ndjson') =>
      fetch(`${e.url}/_bulk`, { method: 'POST', headers: { 'content-type': type }, body }).then(async (r) => ({
        status: r.status,
        body: (await r.json()) as Record<string, unknown>,
      }));
    expect((await post('{"create":{"_index":"a","_id":"1"}}\n{"x":1}')).status).toBe(400);
    expect((await post('{"create":{"_index":"a","_id":"1"}}\n{"x":1}\n', 'text/plain')).status).toBe(406);
    expect((await post('{"bogus":{}}\n{}\n')).body).toMatchObject({ error: { type: 'illegal_argument_exception' } });
    const ok = await post(
      '{"index":{"_index":"a","_id":"1"}}\n{"x":1}\n{"create":{"_index":"Bad","_id":"2"}}\n{"x":2}\n',
    );
    expect(ok.body).toMatchObject({
      errors: true,
      items: [
        { index: { status: 201, result: 'created' } },
        { create: { status: 400, error: { type: 'invalid_index_name_exception' } } },
      ],
    });
    expect(
      filterPath({ errors: false, took: 1, items: [{ create: { status: 201, _id: 'x' } }] }, [
        ['errors'],
        ['items', '*', 'status'],
      ]),
    ).toEqual({ errors: false, items: [{ create: { status: 201 } }] });
  });
});
