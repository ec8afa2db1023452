// The OTLP/HTTP logs input with real clients: the OpenTelemetry JS SDK's protobuf and JSON log
// exporters pointed at a listening Weir, and the official OTLP/JSON example request
// (test/fixtures/otlp, its NOTICE). Events are read back through the API: the ingest status
// counters and the raw events (an integration of platform custom has no mapping, so its events
// wait in quarantine as received).
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import path from 'node:path';
import { SeverityNumber } from '@opentelemetry/api-logs';
import { OTLPLogExporter as ProtoExporter } from '@opentelemetry/exporter-logs-otlp-proto';
import { OTLPLogExporter as JsonExporter } from '@opentelemetry/exporter-logs-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  InMemoryLogRecordExporter,
  LoggerProvider,
  SimpleLogRecordProcessor,
  type LogRecordExporter,
  type ReadableLogRecord,
} from '@opentelemetry/sdk-logs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, startWorkerConsumers, type TestApp } from '../../../test/support/app.js';
import { waitFor } from '../../../test/support/delivery-api.js';
import { createOrganization, createPrincipal, type Principal } from '../../../test/support/identity.js';
import { http } from '../../../test/support/ingest.js';
import {
  ExportLogsServiceRequest,
  ExportLogsServiceResponse,
  RpcStatus,
} from '../../pipeline/sources/otlp/messages.js';
import type { Consumer } from '../../platform/queue/port.js';

type Json = Record<string, unknown>;
type ExportResult = Parameters<Parameters<LogRecordExporter['export']>[1]>[0];
/** @opentelemetry/core's ExportResultCode. */
const SUCCESS = 0;
const FAILED = 1;
const EXAMPLE = path.resolve(import.meta.dirname, '../../../test/fixtures/otlp/logs.json');

let t: TestApp;
let base: string;
let admin: Principal;
let org: number;
const consumers: Consumer[] = [];

async function integration(name: string): Promise<{ id: number; token: string }> {
  const created = await http(
    base,
    'POST',
    '/api/integrations/',
    { name, platform: 'custom', organization_id: org },
    admin.headers,
  );
  expect(created.status, JSON.stringify(created.json)).toBe(201);
  const id = Number(created.json.id);
  const token = await http(base, 'POST', `/api/ingest/integrations/${id}/token`, {}, admin.headers);
  return { id, token: String(token.json.token) };
}

/** Log records made by the SDK's own logger, as an application emits them. */
function emitted(emit: (logger: ReturnType<LoggerProvider['getLogger']>) => void): ReadableLogRecord[] {
  const memory = new InMemoryLogRecordExporter();
  const provider = new LoggerProvider({
    resource: resourceFromAttributes({ 'service.name': 'checkout api', 'deployment.environment': 'test' }),
    processors: [new SimpleLogRecordProcessor({ exporter: memory })],
  });
  emit(provider.getLogger('weir-otlp-test', '1.2.3'));
  return memory.getFinishedLogRecords();
}

function exported(exporter: LogRecordExporter, records: ReadableLogRecord[]): Promise<ExportResult> {
  return new Promise((resolve) => exporter.export(records, resolve));
}

/** The raw events of an integration as the quarantine API gives them back (status counters first). */
async function rawEvents(integrationId: number, count: number): Promise<{ stream: string; raw: Json }[]> {
  await waitFor(
    `${count} events processed`,
    async () => {
      const res = await http(base, 'GET', `/api/ingest/integrations/${integrationId}`, undefined, admin.headers);
      const n = Number((res.json.stats as Json).events_in);
      return n >= count ? n : undefined;
    },
    30_000,
  );
  const listed = await waitFor(
    `${count} events in quarantine`,
    async () => {
      const res = await http(
        base,
        'GET',
        `/api/quarantine?integration_id=${integrationId}&limit=100`,
        undefined,
        admin.headers,
      );
      const items = res.json.items as Json[];
      return items.length >= count ? items : undefined;
    },
    30_000,
  );
  expect(listed).toHaveLength(count);
  const out = [];
  for (const item of listed) {
    const one = await http(base, 'GET', `/api/quarantine/${String(item.id)}`, undefined, admin.headers);
    out.push({ stream: String(one.json.stream), raw: one.json.raw as Json });
  }
  return out;
}

async function post(url: string, body: Buffer | string, headers: Record<string, string>) {
  const res = await fetch(`${base}${url}`, { method: 'POST', headers, body });
  return {
    status: res.status,
    type: res.headers.get('content-type'),
    headers: res.headers,
    bytes: Buffer.from(await res.arrayBuffer()),
  };
}

beforeAll(async () => {
  t = await createTestApp({ env: { WEIR_TOKEN_RATE_LIMIT: '1000000' } });
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  org = await createOrganization(t, 'OTLP');
  admin = await createPrincipal(t, { role: 'admin', organizationId: org });
  consumers.push(...startWorkerConsumers(t));
});

afterAll(async () => {
  await Promise.all(consumers.map((c) => c.close()));
  await t?.close();
});

describe('OTLP/HTTP logs input', () => {
  it('takes the SDK protobuf exporter (gzip) at /v1/logs: every AnyValue kind, severity, ids, resource and scope intact', async () => {
    const { id, token } = await integration('otel sdk protobuf');
    const records = emitted((logger) => {
      logger.emit({
        severityNumber: SeverityNumber.WARN,
        severityText: 'WARN',
        body: 'user alice failed to log in',
        attributes: {
          'user.name': 'alice',
          'login.success': false,
          'login.attempts': 3,
          'risk.score': 0.75,
          'net.peers': ['10.0.0.1', '10.0.0.2'],
          'raw.bytes': new Uint8Array([0xde, 0xad, 0xbe, 0xef]),
        },
      });
      logger.emit({
        severityNumber: SeverityNumber.ERROR,
        body: { action: 'deny', rule: { id: 42, tags: ['fw', 'edge'] } },
        attributes: { 'weir.stream': 'firewall' },
      });
    });
    const exporter = new ProtoExporter({
      url: `${base}/v1/logs`,
      headers: { authorization: `Bearer ${token}` },
      compression: 'gzip' as never,
    });
    const result = await exported(exporter, records);
    expect(result.code, String(result.error)).toBe(SUCCESS);
    await exporter.shutdown();

    const events = await rawEvents(id, 2);
    const login = events.find((e) => e.stream === 'checkout_api')!.raw;
    expect(login).toMatchObject({
      severity_number: 13,
      severity_text: 'WARN',
      body: 'user alice failed to log in',
      attributes: {
        'user.name': 'alice',
        'login.success': false,
        'login.attempts': 3,
        'risk.score': 0.75,
        'net.peers': ['10.0.0.1', '10.0.0.2'],
        'raw.bytes': '3q2+7w==',
      },
      resource: { attributes: { 'service.name': 'checkout api', 'deployment.environment': 'test' } },
      scope: { name: 'weir-otlp-test', version: '1.2.3' },
    });
    expect(login.time_unix_nano).toMatch(/^\d{19}$/);
    expect(Date.parse(String(login.time))).toBeGreaterThan(Date.now() - 300_000);
    const fw = events.find((e) => e.stream === 'firewall')!.raw;
    expect(fw).toMatchObject({ severity_number: 17, body: { action: 'deny', rule: { id: 42, tags: ['fw', 'edge'] } } });
  });

  it('takes the SDK JSON exporter at /api/ingest/otlp/v1/logs and the official OTLP/JSON example', async () => {
    const { id, token } = await integration('otel sdk json');
    const exporter = new JsonExporter({ url: `${base}/api/ingest/otlp/v1/logs`, headers: { 'x-ingest-token': token } });
    const records = emitted((logger) =>
      logger.emit({ severityNumber: SeverityNumber.INFO, body: 'hello', attributes: { n: 1 } }),
    );
    const result = await exported(exporter, records);
    expect(result.code, String(result.error)).toBe(SUCCESS);
    await exporter.shutdown();

    // The example of the opentelemetry-proto repository, gzipped, as a collector would send it.
    const res = await post('/v1/logs', gzipSync(readFileSync(EXAMPLE)), {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      'content-encoding': 'gzip',
    });
    expect(res.status).toBe(200);
    expect(res.type).toBe('application/json');
    expect(JSON.parse(res.bytes.toString())).toEqual({});

    const events = await rawEvents(id, 2);
    expect(events.find((e) => e.stream === 'checkout_api')!.raw).toMatchObject({
      severity_number: 9,
      body: 'hello',
      attributes: { n: 1 },
    });
    expect(events.find((e) => e.stream === 'my.service')!.raw).toEqual({
      time: '2018-12-13T14:51:00.300Z',
      time_unix_nano: '1544712660300000000',
      observed_time_unix_nano: '1544712660300000000',
      severity_number: 10,
      severity_text: 'Information',
      body: 'Example log record',
      attributes: {
        'string.attribute': 'some string',
        'boolean.attribute': true,
        'int.attribute': 10,
        'double.attribute': 637.704,
        'array.attribute': ['many', 'values'],
        'map.attribute': { 'some.map.key': 'some value' },
      },
      trace_id: '5b8efff798038103d269b633813fc60c',
      span_id: 'eee19b7ec3c1b174',
      resource: { attributes: { 'service.name': 'my.service' } },
      scope: { name: 'my.library', version: '1.0.0', attributes: { 'my.scope.attribute': 'some scope attribute' } },
    });
  });

  it('counts log records, not line breaks: a protobuf body full of 0x0a bytes is one record', async () => {
    const { id, token } = await integration('newlines');
    // 0x0a is also the tag byte of many protobuf fields: a body is never read as lines.
    const body = '\n'.repeat(60_000);
    const bytes = ExportLogsServiceRequest.encode(
      ExportLogsServiceRequest.fromObject({
        resourceLogs: [{ scopeLogs: [{ logRecords: [{ body: { stringValue: body } }] }] }],
      }),
    ).finish();
    const res = await post('/v1/logs', Buffer.from(bytes), {
      authorization: `Bearer ${token}`,
      'content-type': 'application/x-protobuf',
    });
    expect(res.status).toBe(200);
    const [event] = await rawEvents(id, 1);
    expect((event!.raw as { body: string }).body).toHaveLength(60_000);
  });

  it('answers partial_success for records it refuses, in the encoding of the request', async () => {
    const { id, token } = await integration('partial');
    const request = (traceId: Uint8Array | string) => ({
      resourceLogs: [
        {
          scopeLogs: [
            { logRecords: [{ body: { stringValue: 'good' } }, { body: { stringValue: 'bad id' }, traceId }] },
          ],
        },
      ],
    });
    const bytes = ExportLogsServiceRequest.encode(
      ExportLogsServiceRequest.fromObject(request(new Uint8Array(5))),
    ).finish();
    const proto = await post('/v1/logs', Buffer.from(bytes), {
      authorization: `Bearer ${token}`,
      'content-type': 'application/x-protobuf',
    });
    expect(proto.status).toBe(200);
    expect(proto.type).toBe('application/x-protobuf');
    const answer = ExportLogsServiceResponse.toObject(ExportLogsServiceResponse.decode(proto.bytes), { longs: Number });
    expect(answer).toEqual({
      partialSuccess: {
        rejectedLogRecords: 1,
        errorMessage:
          '1 log record was refused (first: resourceLogs[0].scopeLogs[0].logRecords[1]: trace_id has 5 bytes, not 16)',
      },
    });

    const json = await post('/v1/logs', JSON.stringify(request('abc')), {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
    });
    expect(json.status).toBe(200);
    expect(JSON.parse(json.bytes.toString())).toMatchObject({ partialSuccess: { rejectedLogRecords: '1' } });

    const events = await rawEvents(id, 2);
    expect(events.map((e) => [e.stream, e.raw.body])).toEqual([
      ['otlp', 'good'],
      ['otlp', 'good'],
    ]);
  });

  it('refuses bad bodies with 400 and a google.rpc.Status, never a 5xx; 401, 403 and 415 the same way', async () => {
    const { token } = await integration('refusals');
    const auth = { authorization: `Bearer ${token}` };
    const garbage = await post('/v1/logs', Buffer.from([0x0a, 0xff, 0xff, 0xff, 0x0f, 0x01]), {
      ...auth,
      'content-type': 'application/x-protobuf',
    });
    expect(garbage.status).toBe(400);
    expect(garbage.type).toBe('application/x-protobuf');
    const status = RpcStatus.toObject(RpcStatus.decode(garbage.bytes)) as Json;
    expect(status.code).toBe(3);
    expect(String(status.message)).toMatch(/^The body is not a valid protobuf ExportLogsServiceRequest: /);

    const badJson = await post('/v1/logs', '{"resourceLogs": [', { ...auth, 'content-type': 'application/json' });
    expect(badJson.status).toBe(400);
    expect(JSON.parse(badJson.bytes.toString())).toMatchObject({
      code: 3,
      message: expect.stringContaining('not valid JSON'),
    });
    const wrongShape = await post('/v1/logs', '{"resourceLogs": {}}', { ...auth, 'content-type': 'application/json' });
    expect(wrongShape.status).toBe(400);
    expect(JSON.parse(wrongShape.bytes.toString()).message).toBe(
      'The body is not a valid OTLP/JSON ExportLogsServiceRequest: resourceLogs must be an array',
    );

    const plain = await post('/v1/logs', 'hello', { ...auth, 'content-type': 'text/plain' });
    expect(plain.status).toBe(415);

    const anonymous = await post('/v1/logs', '{}', { 'content-type': 'application/json' });
    expect(anonymous.status).toBe(401);
    expect(JSON.parse(anonymous.bytes.toString())).toMatchObject({ code: 16 });
    // The SDK exporter reports the refusal as a failed export (not retried: 401 is not retryable).
    const exporter = new ProtoExporter({ url: `${base}/v1/logs`, headers: { authorization: 'Bearer svcik_wrong' } });
    const result = await exported(
      exporter,
      emitted((l) => l.emit({ body: 'x' })),
    );
    expect(result.code).toBe(FAILED);
    await exporter.shutdown();

    // (A fresh token: a verified one is cached for a few seconds.)
    const off = await integration('inactive');
    expect((await http(base, 'PUT', `/api/integrations/${off.id}`, { is_active: false }, admin.headers)).status).toBe(
      200,
    );
    const inactive = await post('/v1/logs', '{}', {
      authorization: `Bearer ${off.token}`,
      'content-type': 'application/json',
    });
    expect(inactive.status).toBe(403);
    expect(JSON.parse(inactive.bytes.toString())).toMatchObject({ code: 7 });
  });
});
