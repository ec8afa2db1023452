// The splunk_hec sink with indexer acknowledgement (use_ack). Splunk itself cannot be installed
// here, so the receivers are the two closest to it: Weir's own HEC input (a real HEC server,
// src/modules/hec, whose acknowledgements follow its pipeline), and a small server in this file
// that follows Splunk's documented acknowledgement semantics ("About HTTP Event Collector
// Indexer Acknowledgment": ackId per channel, acks answered false until indexed) and
// misbehaves on purpose: it acknowledges late and loses one request.
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, startWorkerConsumers, type TestApp } from '../../../../test/support/app.js';
import { createOrganization, createPrincipal } from '../../../../test/support/identity.js';
import { ocsfEvents, sinkBatch, sinkContext, failure } from '../../../../test/support/sink-batch.js';
import type { Consumer } from '../../../platform/queue/port.js';
import type { Sink } from '../types.js';
import { splunkHecSink } from './index.js';

const sinks: Sink[] = [];
function sink(url: string, token: string, config: Record<string, unknown> = {}): Sink {
  const s = splunkHecSink.create(
    sinkContext({
      config: { url, sourcetype: 'ocsf', use_ack: true, ack_timeout_seconds: 2, ...config },
      credential: { token },
      type: splunkHecSink,
    }),
  );
  sinks.push(s);
  return s;
}

afterAll(async () => {
  await Promise.all(sinks.map((s) => s.close()));
});

describe("splunk_hec sink with use_ack, against Weir's HEC input", () => {
  let t: TestApp;
  let base: string;
  let token: string;
  let integrationId: number;
  let headers: Record<string, string>;
  const consumers: Consumer[] = [];

  beforeAll(async () => {
    t = await createTestApp();
    const org = await createOrganization(t, 'HEC receiver');
    headers = (await createPrincipal(t, { role: 'admin', organizationId: org })).headers;
    const row = await t.container.database.db
      .insertInto('integrations')
      .values({ organization_id: org, name: 'upstream weir', platform: 'custom', config: '{}' })
      .returning('id')
      .executeTakeFirstOrThrow();
    integrationId = row.id;
    const res = await t.app.inject({ method: 'POST', url: `/api/ingest/integrations/${row.id}/token`, headers });
    token = String(res.json<{ token: string }>().token);
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => {
    await Promise.all(consumers.map((c) => c.close()));
    await t?.close();
  });

  async function eventsIn(): Promise<number> {
    const res = await t.app.inject({ method: 'GET', url: `/api/ingest/integrations/${integrationId}`, headers });
    return res.json<{ stats: { events_in: number } }>().stats.events_in;
  }

  it('fails retryably while the receiver has not processed the batch, and delivers once it has', async () => {
    const s = sink(base, token, { ack_timeout_seconds: 1 });
    // No worker runs on the receiver: accepted there, never acknowledged.
    const err = await failure(s.send(sinkBatch(ocsfEvents(2)), AbortSignal.timeout(10_000)));
    expect(err.kind).toBe('timeout');
    expect(err.retryable).toBe(true);
    expect(err.message).toMatch(/did not acknowledge ackId 0 .* may index it twice/);

    consumers.push(...startWorkerConsumers(t));
    const ok = sink(base, token, { ack_timeout_seconds: 20 });
    expect(await ok.send(sinkBatch(ocsfEvents(3)), AbortSignal.timeout(30_000))).toEqual({});
    // Delivered means processed by the receiver: its counters already hold the events (2 + 3).
    expect(await eventsIn()).toBe(5);
  });
});

/** Splunk's acknowledgement as documented, acknowledging each ackId after `late` polls and never `lost`. */
async function startAckingHec(options: { token: string; late: number; lost?: number; noAck?: boolean }) {
  const next = new Map<string, number>();
  const polls = new Map<string, number>();
  const read = async (req: IncomingMessage) => {
    let body = '';
    for await (const c of req) body += String(c);
    return body;
  };
  const server: Server = createServer((req, res) => {
    void (async () => {
      const body = await read(req);
      const reply = (status: number, value: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(value));
      };
      if (req.headers.authorization !== `Splunk ${options.token}`)
        return reply(403, { text: 'Invalid token', code: 4 });
      const channel = String(req.headers['x-splunk-request-channel'] ?? '');
      if (!channel) return reply(400, { text: 'Data channel is missing', code: 10 });
      if (req.url === '/services/collector/event') {
        if (options.noAck) return reply(200, { text: 'Success', code: 0 });
        const id = next.get(channel) ?? 0;
        next.set(channel, id + 1);
        return reply(200, { text: 'Success', code: 0, ackId: id });
      }
      if (req.url === '/services/collector/ack') {
        const acks: Record<string, boolean> = {};
        for (const id of (JSON.parse(body) as { acks: number[] }).acks) {
          const key = `${channel}/${id}`;
          const n = (polls.get(key) ?? 0) + 1;
          polls.set(key, n);
          acks[String(id)] = id !== options.lost && n > options.late;
        }
        return reply(200, { acks });
      }
      reply(404, { text: 'not found', code: 404 });
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, polls, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

describe('splunk_hec sink with use_ack, against a receiver that acknowledges late or never', () => {
  it('waits for a late acknowledgement, and fails retryably on a lost one', async () => {
    const token = randomUUID();
    const hec = await startAckingHec({ token, late: 2, lost: 1 });
    try {
      const s = sink(hec.url, token, { ack_timeout_seconds: 2 });
      expect(await s.send(sinkBatch(ocsfEvents(1)), AbortSignal.timeout(10_000))).toEqual({});
      expect([...hec.polls.values()]).toEqual([3]);
      const lost = await failure(s.send(sinkBatch(ocsfEvents(1)), AbortSignal.timeout(10_000)));
      expect([lost.kind, lost.retryable]).toEqual(['timeout', true]);
      expect(lost.message).toMatch(/ackId 1/);
      // The batch goes again under a new ackId, which is acknowledged.
      expect(await s.send(sinkBatch(ocsfEvents(1)), AbortSignal.timeout(10_000))).toEqual({});
    } finally {
      await hec.close();
    }
  });

  it('refuses to count a batch delivered when the token does not acknowledge', async () => {
    const token = randomUUID();
    const hec = await startAckingHec({ token, late: 0, noAck: true });
    try {
      const err = await failure(sink(hec.url, token).send(sinkBatch(ocsfEvents(1)), AbortSignal.timeout(5000)));
      expect([err.kind, err.retryable]).toEqual(['config', false]);
      expect(err.message).toMatch(/without an ackId/);
    } finally {
      await hec.close();
    }
  });
});
