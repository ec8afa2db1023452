// The Elasticsearch input as its clients see it: the startup requests of Beats (cluster info,
// license, template and lifecycle probes), `_bulk` bodies of Filebeat, Fluent Bit and the
// Elasticsearch reference (test/fixtures/es-bulk, origin and licence in its README), gzip,
// per-item answers, items the queue could not take, and refused credentials.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/support/app.js';
import { createOrganization, createPrincipal } from '../../../test/support/identity.js';
import { failEnqueue, ingestTarget } from '../../../test/support/ingest-target.js';
import { NORMALIZE_QUEUE, type IngestBatch } from '../../pipeline/envelope.js';
import { streamOfIndex } from './es-bulk.js';

type Json = Record<string, unknown>;
interface Item {
  status: number;
  _index: string;
  _id: string;
  result?: string;
  error?: { type: string; reason: string };
}

const FIXTURES = path.resolve(import.meta.dirname, '../../../test/fixtures/es-bulk');
const fixture = (name: string) => readFileSync(path.join(FIXTURES, name));
const ES = '/api/ingest/elasticsearch';

let t: TestApp;
let token: string;
const seen = new Map<string, IngestBatch>();

beforeAll(async () => {
  t = await createTestApp({ env: { WEIR_TOKEN_RATE_LIMIT: '1000000', WEIR_INGEST_BATCH_MAX_EVENTS: '2' } });
  const org = await createOrganization(t, 'Org ES');
  const admin = await createPrincipal(t, { role: 'admin', organizationId: org });
  ({ token } = await ingestTarget(t, admin, org, { name: 'shippers' }));
  t.container.queue.consume<IngestBatch>(NORMALIZE_QUEUE, async (job) => {
    seen.set(job.id, job.payload);
  });
});
afterAll(async () => t?.close());

const basic = (password: string, user = 'elastic') => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

async function batches(ids: unknown): Promise<IngestBatch[]> {
  const list = ids as string[];
  const deadline = Date.now() + 10_000;
  while (!list.every((id) => seen.has(id)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  return list.map((id) => seen.get(id)!);
}

function bulk(body: string | Buffer, headers: Record<string, string> = {}, url = `${ES}/_bulk`) {
  return t.app.inject({
    method: 'POST',
    url,
    headers: { authorization: basic(token), 'content-type': 'application/json', ...headers },
    payload: body,
  });
}

/** The batches enqueued since `before` (the answer of _bulk does not name them). */
function enqueuedSince(before: Set<string>): IngestBatch[] {
  return [...seen.entries()].filter(([id]) => !before.has(id)).map(([, b]) => b);
}

describe('the requests Beats make before _bulk', () => {
  it('answers cluster info with an 8.x version and the product header, on GET and HEAD, with and without the slash', async () => {
    for (const url of [ES, `${ES}/`]) {
      const res = await t.app.inject({ method: 'GET', url, headers: { authorization: basic(token) } });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.headers['x-elastic-product']).toBe('Elasticsearch');
      expect(res.json()).toMatchObject({
        cluster_name: 'weir',
        version: { number: '8.17.0', build_flavor: 'default' },
      });
    }
    const head = await t.app.inject({ method: 'HEAD', url: ES, headers: { authorization: basic(token) } });
    expect(head.statusCode).toBe(200);
  });

  it('answers a basic, active license (Beats refuse a cluster without one)', async () => {
    const res = await t.app.inject({
      method: 'GET',
      url: `${ES}/_license?human=false`,
      headers: { authorization: basic(token) },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ license: { type: 'basic', status: 'active' } });
  });

  it('says a template or policy is not there (HEAD/GET 404) and acknowledges the put without keeping it', async () => {
    const headers = { authorization: basic(token) };
    const head = await t.app.inject({ method: 'HEAD', url: `${ES}/_index_template/filebeat-8.8.0`, headers });
    expect(head.statusCode).toBe(404);
    const put = await t.app.inject({
      method: 'PUT',
      url: `${ES}/_index_template/filebeat-8.8.0`,
      headers: { ...headers, 'content-type': 'application/json' },
      payload: { index_patterns: ['filebeat-8.8.0'], data_stream: {}, priority: 150 },
    });
    expect(put.statusCode, put.body).toBe(200);
    expect(put.json()).toEqual({ acknowledged: true });
    const policy = await t.app.inject({ method: 'GET', url: `${ES}/_ilm/policy/filebeat`, headers });
    expect(policy.statusCode).toBe(404);
    expect(policy.json()).toMatchObject({ error: { type: 'resource_not_found_exception' }, status: 404 });
    const putPolicy = await t.app.inject({
      method: 'PUT',
      url: `${ES}/_ilm/policy/filebeat`,
      headers: { ...headers, 'content-type': 'application/json' },
      payload: { policy: { phases: { hot: { actions: {} } } } },
    });
    expect(putPolicy.json()).toEqual({ acknowledged: true });
  });
});

describe('credentials', () => {
  it('answers 401 in Elasticsearch shape with WWW-Authenticate, without and with a wrong token', async () => {
    for (const headers of [{}, { authorization: basic('svcik_not-the-token') }]) {
      const res = await t.app.inject({ method: 'POST', url: `${ES}/_bulk`, headers, payload: '{"index":{}}\n{}\n' });
      expect(res.statusCode).toBe(401);
      expect(res.headers['www-authenticate']).toMatch(/^Basic realm="security"/);
      const body = res.json<{ error: { type: string; reason: string }; status: number }>();
      expect(body).toMatchObject({ error: { type: 'security_exception' }, status: 401 });
      expect(res.body).not.toContain('svcik_not-the-token');
      const info = await t.app.inject({ method: 'GET', url: ES, headers });
      expect(info.statusCode).toBe(401);
    }
  });

  it('takes the token as ApiKey base64("id:token") the way Beats and Logstash send an api_key, and as Bearer', async () => {
    const apiKey = Buffer.from(`weir:${token}`).toString('base64');
    for (const authorization of [`ApiKey ${apiKey}`, `ApiKey ${token}`, `Bearer ${token}`]) {
      const res = await bulk('{"index":{"_index":"app"}}\n{"a":1}\n', { authorization });
      expect(res.statusCode, res.body).toBe(200);
    }
  });
});

describe('_bulk', () => {
  it('accepts a Filebeat 8.8.0 body sent gzip as Beats do: one event per document, stream named after the index', async () => {
    const before = new Set(seen.keys());
    const res = await bulk(gzipSync(fixture('filebeat-8.8.0.ndjson')), { 'content-encoding': 'gzip' });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['x-elastic-product']).toBe('Elasticsearch');
    const body = res.json<{ took: number; errors: boolean; items: Record<string, Item>[] }>();
    expect(body.errors).toBe(false);
    expect(body.items.map((i) => Object.keys(i)[0])).toEqual(['create', 'create', 'index']);
    for (const item of body.items) {
      const it = Object.values(item)[0]!;
      expect(it).toMatchObject({ _index: 'filebeat-8.8.0', status: 201, result: 'created' });
      expect(it._id).toMatch(/^[A-Za-z0-9_-]{20}$/);
    }
    await batches([]);
    await new Promise((r) => setTimeout(r, 100));
    const got = enqueuedSince(before);
    expect(got.map((b) => b.stream)).toEqual(['filebeat', 'filebeat']);
    const events = got.flatMap((b) => b.events.map((e) => JSON.parse(e as string) as Json));
    expect(events.map((e) => e.message)).toEqual(['foobar', 'baz', 'xyz']);
  });

  it('answers the reference example item by item: index and create created, update and delete refused with 400', async () => {
    const res = await bulk(fixture('es-docs-bulk-example.ndjson'));
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json<{ errors: boolean; items: Record<string, Item>[] }>();
    expect(body.errors).toBe(true);
    const summary = body.items.map((i) => {
      const [action, item] = Object.entries(i)[0]!;
      return [action, item._id, item.status, item.error?.type];
    });
    expect(summary).toEqual([
      ['index', '1', 201, undefined],
      ['delete', '2', 400, 'illegal_argument_exception'],
      ['create', '3', 201, undefined],
      ['update', '1', 400, 'illegal_argument_exception'],
    ]);
  });

  it("takes the index from the path when the action has none, and Fluent Bit's _type lines", async () => {
    const before = new Set(seen.keys());
    const res = await bulk(fixture('fluent-bit.ndjson'), {}, `${ES}/ignored-by-action/_bulk`);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json<{ errors: boolean }>().errors).toBe(false);
    const noIndex = await bulk('{"create":{}}\n{"log":"x"}\n', {}, `${ES}/winlogbeat-8.15.0-2026.11.29/_bulk`);
    expect(Object.values(noIndex.json<{ items: Record<string, Item>[] }>().items[0]!)[0]).toMatchObject({
      _index: 'winlogbeat-8.15.0-2026.11.29',
      status: 201,
    });
    await new Promise((r) => setTimeout(r, 150));
    expect(enqueuedSince(before).map((b) => b.stream)).toEqual(['fluent-bit', 'winlogbeat']);
  });

  it('answers per item a source that is not an object and an action without index; a malformed action line fails the request', async () => {
    const res = await bulk(
      '{"index":{"_index":"a"}}\n"text"\n{"index":{}}\n{"b":1}\n{"index":{"_index":"a"}}\n{"c":1}\n',
    );
    const items = res.json<{ items: Record<string, Item>[] }>().items.map((i) => Object.values(i)[0]!);
    expect(items.map((i) => [i.status, i.error?.type])).toEqual([
      [400, 'document_parsing_exception'],
      [400, 'action_request_validation_exception'],
      [201, undefined],
    ]);
    const bad = await bulk('{"index":{"_index":"a"}\n{"c":1}\n');
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toMatchObject({ error: { type: 'illegal_argument_exception' }, status: 400 });
    expect(typeof bad.json<{ error: { reason: string } }>().error.reason).toBe('string');
  });

  it('answers 429 for the items the queue could not take (so the client resends only those), 503 when none', async () => {
    const queue = failEnqueue(t, 1);
    try {
      const body = Array.from({ length: 5 }, (_, i) => `{"create":{"_index":"app"}}\n{"i":${i}}\n`).join('');
      const res = await bulk(body);
      expect(res.statusCode, res.body).toBe(200);
      const items = res.json<{ errors: boolean; items: Record<string, Item>[] }>().items.map((i) => i.create!);
      expect(items.map((i) => i.status)).toEqual([201, 201, 429, 429, 429]);
      expect(items[2]!.error?.type).toBe('es_rejected_execution_exception');
      queue.failAll();
      const none = await bulk(body);
      expect(none.statusCode).toBe(503);
      expect(none.headers['retry-after']).toBe('5');
      expect(none.json()).toMatchObject({ status: 503, error: { type: 'status_exception' } });
    } finally {
      queue.restore();
    }
  });
});

describe('stream names from index names', () => {
  it('drops a date and a shipper version, keeps data stream names', () => {
    expect(streamOfIndex('filebeat-8.15.0-2026.11.29')).toBe('filebeat');
    expect(streamOfIndex('logstash-2026.11.29')).toBe('logstash');
    expect(streamOfIndex('logs-generic-default')).toBe('logs-generic-default');
    expect(streamOfIndex('.ds-Logs*weird')).toBe('ds-logs_weird');
    expect(streamOfIndex('')).toBe('elasticsearch');
  });
});
