// The OTLP logs sink against real receivers: Weir's own OTLP/HTTP input (the round trip: the
// events come back through the API as the receiving integration's raw events), and a local
// server that decodes requests with the official definitions and answers as a receiver may
// (partial_success, a google.rpc.Status with 400 or 503).
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, startWorkerConsumers, type TestApp } from '../../../../test/support/app.js';
import { waitFor } from '../../../../test/support/delivery-api.js';
import { createOrganization, createPrincipal, type Principal } from '../../../../test/support/identity.js';
import { http } from '../../../../test/support/ingest.js';
import { ocsfEvents, sinkBatch, sinkContext } from '../../../../test/support/sink-batch.js';
import type { Credential } from '../../../core/credentials.js';
import type { Consumer } from '../../../platform/queue/port.js';
import { ExportLogsServiceRequest, ExportLogsServiceResponse, RpcStatus } from '../../sources/otlp/messages.js';
import { DeliveryError, type Sink } from '../types.js';
import { otlpSink } from './index.js';

type Json = Record<string, unknown>;

let t: TestApp;
let base: string;
let admin: Principal;
let org: number;
const consumers: Consumer[] = [];
const sinks: Sink[] = [];

/** What the local receiver got, and how it answers the next request. */
const received: { headers: IncomingMessage['headers']; request: Json }[] = [];
let respond: (res: ServerResponse) => void = (res) => res.writeHead(200).end();
let receiverUrl = '';
const receiver = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    let body = Buffer.concat(chunks);
    if (req.headers['content-encoding'] === 'gzip') body = gunzipSync(body);
    const request = ExportLogsServiceRequest.toObject(ExportLogsServiceRequest.decode(body), { longs: String });
    received.push({ headers: req.headers, request });
    respond(res);
  });
});

function sink(config: Json, credential: Credential | null = null): Sink {
  const s = otlpSink.create(sinkContext({ config, credential, type: otlpSink }));
  sinks.push(s);
  return s;
}

beforeAll(async () => {
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/v1/logs`;
  t = await createTestApp({ env: { WEIR_TOKEN_RATE_LIMIT: '1000000' } });
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  org = await createOrganization(t, 'OTLP out');
  admin = await createPrincipal(t, { role: 'admin', organizationId: org });
  consumers.push(...startWorkerConsumers(t));
});

afterAll(async () => {
  await Promise.all(sinks.map((s) => s.close()));
  await Promise.all(consumers.map((c) => c.close()));
  await t?.close();
  receiver.closeAllConnections();
  await new Promise((r) => receiver.close(r));
});

describe('otlp sink', () => {
  it("delivers to Weir's own OTLP input: the OCSF events come back whole, with severity, time and ocsf attributes", async () => {
    const created = await http(
      base,
      'POST',
      '/api/integrations/',
      { name: 'otlp in', platform: 'custom', organization_id: org },
      admin.headers,
    );
    expect(created.status, JSON.stringify(created.json)).toBe(201);
    const id = Number(created.json.id);
    const token = String(
      (await http(base, 'POST', `/api/ingest/integrations/${id}/token`, {}, admin.headers)).json.token,
    );

    const events = ocsfEvents(3);
    events[2]!.severity_id = 4;
    events[2]!.severity = 'High';
    const s = sink(
      { url: `${base}/v1/logs`, service_name: 'weir-edge', resource_attributes: { 'weir.stream': 'ocsf_in' } },
      { bearer_token: token },
    );
    expect((await s.test(AbortSignal.timeout(5000))).ok).toBe(true);
    expect(await s.send(sinkBatch(events), AbortSignal.timeout(10_000))).toEqual({});

    const listed = await waitFor(
      'three events in quarantine',
      async () => {
        const res = await http(base, 'GET', `/api/quarantine?integration_id=${id}&limit=10`, undefined, admin.headers);
        const items = res.json.items as Json[] | undefined;
        return items && items.length >= 3 ? items : undefined;
      },
      30_000,
    );
    const raws: Json[] = [];
    for (const item of listed)
      raws.push((await http(base, 'GET', `/api/quarantine/${String(item.id)}`, undefined, admin.headers)).json as Json);
    expect(new Set(raws.map((r) => r.stream))).toEqual(new Set(['ocsf_in']));
    const back = raws.map((r) => r.raw as Json).sort((a, b) => String(a.time).localeCompare(String(b.time)));
    for (let i = 0; i < 3; i++) {
      expect(back[i]!.body).toEqual(events[i]);
      expect(back[i]!.time).toBe(new Date(events[i]!.time as number).toISOString());
      expect(back[i]!.attributes).toMatchObject({
        'ocsf.class_uid': 3002,
        'ocsf.category_uid': 3,
        'ocsf.metadata.uid': (events[i]!.metadata as Json).uid,
      });
      expect(back[i]!.resource).toMatchObject({ attributes: { 'service.name': 'weir-edge' } });
    }
    expect(back.map((e) => [e.severity_number, e.severity_text])).toEqual([
      [9, 'Informational'],
      [9, 'Informational'],
      [17, 'High'],
    ]);
  });

  it('sends protobuf with gzip, headers and secret headers; the JSON body option', async () => {
    received.length = 0;
    respond = (res) => res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
    const events = ocsfEvents(2);
    const s = sink(
      { url: receiverUrl, body: 'json', headers: { 'X-Team': 'soc' } },
      { secret_headers: { 'api-key': 'k-secret-1' } },
    );
    expect(await s.send(sinkBatch(events), AbortSignal.timeout(5000))).toEqual({});
    const { headers, request } = received[0]!;
    expect(headers).toMatchObject({
      'content-type': 'application/x-protobuf',
      'content-encoding': 'gzip',
      'x-team': 'soc',
      'api-key': 'k-secret-1',
    });
    const records = ((request.resourceLogs as Json[])[0]!.scopeLogs as Json[])[0]!.logRecords as Json[];
    expect(records.map((r) => JSON.parse(String((r.body as Json).stringValue)) as Json)).toEqual(events);
    expect(records[0]!.timeUnixNano).toBe(`${events[0]!.time as number}000000`);
  });

  it('dead-letters a batch the receiver partly refused, and maps error answers to retryable or not', async () => {
    const s = sink({ url: receiverUrl, gzip: false });
    const batch = sinkBatch(ocsfEvents(2));
    respond = (res) => {
      const body = ExportLogsServiceResponse.encode(
        ExportLogsServiceResponse.create({ partialSuccess: { rejectedLogRecords: 1, errorMessage: 'x'.repeat(150) } }),
      ).finish();
      res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end(body);
    };
    const partial = await s.send(batch, AbortSignal.timeout(5000));
    expect(partial.rejected?.map((r) => r.index)).toEqual([0, 1]);
    expect(partial.rejected?.[0]?.reason).toMatch(/^OTLP receiver refused 1 of 2 records of the request: x{100}/);

    const status = (code: number, message: string) =>
      Buffer.from(RpcStatus.encode(RpcStatus.create({ code, message })).finish());
    respond = (res) => res.writeHead(400, { 'content-type': 'application/x-protobuf' }).end(status(3, 'bad field'));
    const bad = await s.send(batch, AbortSignal.timeout(5000)).catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(DeliveryError);
    expect(bad).toMatchObject({ kind: 'http_4xx', retryable: false, message: 'OTLP 400: bad field' });

    respond = (res) =>
      res.writeHead(503, { 'content-type': 'application/x-protobuf', 'retry-after': '7' }).end(status(14, 'busy'));
    const busy = (await s.send(batch, AbortSignal.timeout(5000)).catch((e: unknown) => e)) as DeliveryError;
    expect(busy).toMatchObject({ kind: 'http_5xx', retryable: true, retryAfterMs: 7000 });

    respond = (res) => res.writeHead(401, { 'content-type': 'application/json' }).end('{"code":16,"message":"no"}');
    const test = await s.test(AbortSignal.timeout(5000));
    expect(test).toMatchObject({ ok: false, error_kind: 'auth' });
  });
});
