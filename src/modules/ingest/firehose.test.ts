// The Firehose HTTP endpoint input as Firehose sees it: AWS's example delivery request (plain
// and gzip), CloudWatch Logs subscription data (AWS's sample, and a control message), the
// access key refused, malformed requests, and the answer shape Firehose requires
// ({requestId, timestamp[, errorMessage]}). Fixtures: test/fixtures/firehose (README).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/support/app.js';
import { createOrganization, createPrincipal } from '../../../test/support/identity.js';
import { failEnqueue, ingestTarget } from '../../../test/support/ingest-target.js';
import { NORMALIZE_QUEUE, type IngestBatch } from '../../pipeline/envelope.js';

type Json = Record<string, unknown>;
const FIXTURES = path.resolve(import.meta.dirname, '../../../test/fixtures/firehose');
const REQUEST = readFileSync(path.join(FIXTURES, 'request.json'), 'utf8');
const CWL_DATA = readFileSync(path.join(FIXTURES, 'cloudwatch-logs-data.b64'), 'utf8').trim();
const REQUEST_ID = 'ed4acda5-034f-9f42-bba1-f29aea6d7d8f';

let t: TestApp;
let token: string;
const seen: IngestBatch[] = [];

beforeAll(async () => {
  t = await createTestApp({ env: { WEIR_TOKEN_RATE_LIMIT: '1000000' } });
  const org = await createOrganization(t, 'Org FH');
  const admin = await createPrincipal(t, { role: 'admin', organizationId: org });
  ({ token } = await ingestTarget(t, admin, org, { name: 'firehose' }));
  t.container.queue.consume<IngestBatch>(NORMALIZE_QUEUE, async (job) => {
    seen.push(job.payload);
  });
});
afterAll(async () => t?.close());

function deliver(body: string | Buffer, headers: Record<string, string> = {}, stream = 'vpc-flow') {
  return t.app.inject({
    method: 'POST',
    url: `/api/ingest/firehose/${stream}`,
    headers: {
      'content-type': 'application/json',
      'x-amz-firehose-protocol-version': '1.0',
      'x-amz-firehose-request-id': REQUEST_ID,
      'x-amz-firehose-source-arn': 'arn:aws:firehose:us-east-1:123456789:deliverystream/testStream',
      'x-amz-firehose-access-key': token,
      'x-amz-firehose-common-attributes': '{"commonAttributes":{"Param1":"val1"}}',
      ...headers,
    },
    payload: body,
  });
}

/** The events of the batches enqueued after `from`, waiting a moment for the consumer. */
async function eventsFrom(from: number, count: number): Promise<{ stream: string; event: Json }[]> {
  const deadline = Date.now() + 10_000;
  const collect = () =>
    seen
      .slice(from)
      .flatMap((b) => b.events.map((e) => ({ stream: b.stream, event: JSON.parse(e as string) as Json })));
  while (collect().length < count && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  return collect();
}

describe('Firehose HTTP endpoint delivery', () => {
  it("accepts AWS's example request, plain and gzip, answering its requestId and a timestamp", async () => {
    for (const [body, headers] of [
      [REQUEST, {}],
      [gzipSync(REQUEST), { 'content-encoding': 'gzip' }],
    ] as const) {
      const from = seen.length;
      const res = await deliver(body, headers);
      expect(res.statusCode, res.body).toBe(200);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      const answer = res.json<{ requestId: string; timestamp: number }>();
      expect(Object.keys(answer).sort()).toEqual(['requestId', 'timestamp']);
      expect(answer.requestId).toBe(REQUEST_ID);
      expect(Math.abs(answer.timestamp - Date.now())).toBeLessThan(60_000);
      const events = await eventsFrom(from, 2);
      expect(events).toEqual([
        { stream: 'vpc-flow', event: { message: 'hello' } },
        { stream: 'vpc-flow', event: { message: 'hello world' } },
      ]);
    }
  });

  it('unpacks CloudWatch Logs subscription data to one event per log event, and ignores control messages', async () => {
    const control = gzipSync(
      JSON.stringify({
        messageType: 'CONTROL_MESSAGE',
        owner: 'CloudwatchLogs',
        logGroup: '',
        logStream: '',
        subscriptionFilters: [],
        logEvents: [
          {
            id: '',
            timestamp: 1432826855000,
            message: 'CWL CONTROL MESSAGE: Checking health of destination Firehose.',
          },
        ],
      }),
    ).toString('base64');
    const body = JSON.stringify({
      requestId: REQUEST_ID,
      timestamp: 1578090901599,
      records: [{ data: CWL_DATA }, { data: control }],
    });
    const from = seen.length;
    const res = await deliver(body, {}, 'cloudwatch');
    expect(res.statusCode, res.body).toBe(200);
    const events = await eventsFrom(from, 2);
    expect(events.map((e) => e.event)).toEqual([
      {
        message: '[ERROR] First test message',
        timestamp: 1440442987000,
        id: 'eventId1',
        log_group: 'testLogGroup',
        log_stream: 'testLogStream',
        owner: '123456789123',
      },
      {
        message: '[ERROR] Second test message',
        timestamp: 1440442987001,
        id: 'eventId2',
        log_group: 'testLogGroup',
        log_stream: 'testLogStream',
        owner: '123456789123',
      },
    ]);
  });

  it('takes a record of NDJSON as one event per object', async () => {
    const data = Buffer.from('{"a":1}\n{"a":2}\nplain line\n').toString('base64');
    const from = seen.length;
    const res = await deliver(JSON.stringify({ requestId: 'r-2', timestamp: 1, records: [{ data }] }), {
      'x-amz-firehose-request-id': 'r-2',
    });
    expect(res.statusCode).toBe(200);
    expect((await eventsFrom(from, 3)).map((e) => e.event)).toEqual([{ a: 1 }, { a: 2 }, { message: 'plain line' }]);
  });
});

describe('refusals, in the answer shape Firehose reads', () => {
  it('answers 401 with requestId, timestamp and errorMessage for a missing or wrong access key', async () => {
    for (const key of [undefined, 'svcik_wrong-key']) {
      const headers: Record<string, string> = {};
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/ingest/firehose/vpc-flow',
        headers: {
          'content-type': 'application/json',
          'x-amz-firehose-request-id': REQUEST_ID,
          ...(key ? { 'x-amz-firehose-access-key': key } : headers),
        },
        payload: REQUEST,
      });
      expect(res.statusCode).toBe(401);
      const answer = res.json<{ requestId: string; timestamp: number; errorMessage: string }>();
      expect(answer.requestId).toBe(REQUEST_ID);
      expect(typeof answer.timestamp).toBe('number');
      expect(answer.errorMessage).toMatch(/token/i);
      expect(res.body).not.toContain('svcik_wrong-key');
    }
  });

  it('answers 400 for a body that is not a delivery request, a record that is not base64, a bad stream name', async () => {
    const cases: [string, string][] = [
      ['not json', 'vpc-flow'],
      ['{"requestId":"x"}', 'vpc-flow'],
      ['{"requestId":"x","records":[{"data":"%%%"}]}', 'vpc-flow'],
      [REQUEST, '-bad'],
    ];
    for (const [body, stream] of cases) {
      const res = await deliver(body, {}, stream);
      expect(res.statusCode, body).toBe(400);
      expect(res.json<{ errorMessage: string }>().errorMessage.length).toBeGreaterThan(0);
    }
  });

  it('answers 503 with Retry-After when the pipeline cannot take the records (Firehose resends the request)', async () => {
    const queue = failEnqueue(t);
    try {
      const res = await deliver(REQUEST);
      expect(res.statusCode).toBe(503);
      expect(res.headers['retry-after']).toBe('5');
      expect(res.json()).toMatchObject({ requestId: REQUEST_ID });
    } finally {
      queue.restore();
    }
  });
});
