// The Elasticsearch destination's index management: the template it puts before its first
// _bulk (checked by the test-local Elasticsearch of test/support/fake-elasticsearch.ts, which
// validates requests as Elasticsearch's REST documentation describes them; no real
// Elasticsearch runs here), data streams, manage_template: false, a refused template, and a
// round trip into Weir's own Elasticsearch _bulk input.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../../test/support/app.js';
import { startFakeElasticsearch, type FakeEs } from '../../../../test/support/fake-elasticsearch.js';
import { createOrganization, createPrincipal } from '../../../../test/support/identity.js';
import { ocsfEvents, sinkBatch, sinkContext } from '../../../../test/support/sink-batch.js';
import { NORMALIZE_QUEUE, type IngestBatch } from '../../envelope.js';
import { DeliveryError, type Sink } from '../types.js';
import { elasticsearchSink } from './index.js';
import { withTimestamp } from './template.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

async function es(): Promise<FakeEs> {
  const e = await startFakeElasticsearch({});
  cleanups.push(() => e.close());
  return e;
}

function sink(config: Record<string, unknown>, credential: Record<string, string> | null = null): Sink {
  const s = elasticsearchSink.create(sinkContext({ config, credential, type: elasticsearchSink }));
  cleanups.push(() => s.close());
  return s;
}

const send = (s: Sink, events = ocsfEvents(2)) => s.send(sinkBatch(events), AbortSignal.timeout(5000));

describe('index template', () => {
  it('puts one template with the OCSF mappings before the first _bulk, and only once', async () => {
    const e = await es();
    const s = sink({ url: e.url, index: 'ocsf-{yyyy.MM.dd}' });
    await send(s);
    await send(s);
    expect(e.requests.map((r) => `${r.method} ${r.path.split('?')[0]}`)).toEqual([
      'PUT /_index_template/weir-ocsf',
      'POST /_bulk',
      'POST /_bulk',
    ]);
    const t = e.templates.get('weir-ocsf') as {
      index_patterns: string[];
      priority: number;
      data_stream?: object;
      template: { mappings: { properties: Record<string, unknown>; dynamic_templates: Record<string, unknown>[] } };
    };
    expect(t.index_patterns).toEqual(['ocsf-*']);
    expect(t.data_stream).toBeUndefined();
    expect(t.template.mappings.properties['@timestamp']).toEqual({ type: 'date' });
    expect(t.template.mappings.properties.time).toEqual({ type: 'date', format: 'epoch_millis' });
    expect(t.template.mappings.dynamic_templates).toContainEqual({
      ocsf_ips: { match: 'ip', mapping: { type: 'ip', ignore_malformed: true } },
    });
    const doc = e.docs(`ocsf-2024.01.15`)[0]!.source;
    expect(doc['@timestamp']).toBe('2024-01-15T12:00:00.000Z');
  });

  it('declares a data stream and sends create even when op_type says index; a dated name is refused', async () => {
    const e = await es();
    await send(sink({ url: e.url, index: 'logs-ocsf-weir', data_stream: true, op_type: 'index' }));
    const t = e.templates.get('weir-logs-ocsf-weir') as { data_stream?: object; priority: number };
    expect(t.data_stream).toEqual({});
    expect(t.priority).toBeGreaterThan(100);
    expect(e.requests[1]!.body.split('\n')[0]).toMatch(/^\{"create":\{"_index":"logs-ocsf-weir"/);
    const err = await send(sink({ url: e.url, index: 'logs-{yyyy.MM}', data_stream: true })).catch((x: unknown) => x);
    expect(err).toBeInstanceOf(DeliveryError);
    expect((err as DeliveryError).kind).toBe('config');
  });

  it('puts nothing with manage_template: false', async () => {
    const e = await es();
    await send(sink({ url: e.url, manage_template: false }));
    expect(e.requests.map((r) => r.path.split('?')[0])).toEqual(['/_bulk']);
    expect(e.templates.size).toBe(0);
  });

  it('fails the batch, with what to change, when the cluster refuses the template (403); no document is sent', async () => {
    const paths: string[] = [];
    const server: Server = createServer((req, res) => {
      paths.push(req.url ?? '');
      req.resume();
      res.writeHead(403, { 'content-type': 'application/json' });
      const reason = 'action [indices:admin/index_template/put] is unauthorized for user [weir]';
      res.end(
        JSON.stringify({
          error: { root_cause: [{ type: 'security_exception', reason }], type: 'security_exception', reason },
          status: 403,
        }),
      );
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    cleanups.push(() => new Promise((r) => server.close(r)));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const err = (await send(sink({ url }, { username: 'weir', password: 'pw-secret-1' })).catch(
      (x: unknown) => x,
    )) as DeliveryError;
    expect(err).toBeInstanceOf(DeliveryError);
    expect(err.kind).toBe('auth');
    expect(err.message).toMatch(/manage_template/);
    expect(err.message).not.toContain('pw-secret-1');
    expect(paths).toEqual(['/_index_template/weir-ocsf-events']);
  });

  it('writes @timestamp first from the OCSF time, leaving lines without a time or with their own @timestamp', () => {
    expect(withTimestamp('{"time":0,"a":1}', 0)).toBe('{"@timestamp":"1970-01-01T00:00:00.000Z","time":0,"a":1}');
    expect(withTimestamp('{}', 1)).toBe('{"@timestamp":"1970-01-01T00:00:00.001Z"}');
    expect(withTimestamp('{"a":1}', undefined)).toBe('{"a":1}');
    expect(withTimestamp('{"@timestamp":"x"}', 5)).toBe('{"@timestamp":"x"}');
  });
});

describe("round trip into Weir's own _bulk input", () => {
  let t: TestApp | undefined;
  afterAll(async () => t?.close());

  it('delivers through the template and _bulk of /api/ingest/elasticsearch, the documents arriving as events', async () => {
    t = await createTestApp({ env: { WEIR_TOKEN_RATE_LIMIT: '1000000' } });
    const org = await createOrganization(t, 'Org RT');
    const admin = await createPrincipal(t, { role: 'admin', organizationId: org });
    const row = await t.container.database.db
      .insertInto('integrations')
      .values({ organization_id: org, name: 'weir-upstream', platform: 'custom', config: '{}' })
      .returning('id')
      .executeTakeFirstOrThrow();
    const tok = await t.app.inject({
      method: 'POST',
      url: `/api/ingest/integrations/${row.id}/token`,
      headers: admin.headers,
    });
    const token = String(tok.json<{ token: string }>().token);
    const seen: IngestBatch[] = [];
    t.container.queue.consume<IngestBatch>(NORMALIZE_QUEUE, async (job) => {
      seen.push(job.payload);
    });
    const address = await t.app.listen({ port: 0, host: '127.0.0.1' });
    const s = sink(
      { url: `${address}/api/ingest/elasticsearch`, index: 'ocsf-{yyyy.MM.dd}', gzip: true },
      { api_key: token },
    );
    expect((await s.test(AbortSignal.timeout(5000))).detail).toMatch(/Elasticsearch 8\./);
    const events = ocsfEvents(3);
    expect(await send(s, events)).toEqual({});
    const deadline = Date.now() + 10_000;
    while (seen.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(seen[0]!.stream).toBe('ocsf');
    const got = seen[0]!.events.map((e) => JSON.parse(e as string) as Record<string, unknown>);
    expect(got.map((e) => e.time)).toEqual(events.map((e) => e.time));
    expect(got[0]!['@timestamp']).toBe('2024-01-15T12:00:00.000Z');
  });
});
