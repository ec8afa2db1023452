// When events cannot be accepted (the pipeline refuses them: saturated, disk floor, queue
// down) the consumers give the messages back to the real brokers, which deliver them again;
// nothing is acknowledged before it is accepted. The accept path here fails its first calls
// on purpose (the one fault injected); the brokers are real. Also the decoding of a message
// in each format, and the batcher's settling of a partly accepted batch.
import { randomUUID } from 'node:crypto';
import amqp from 'amqplib';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { describe, expect, it } from 'vitest';
import { AppError } from '../../core/errors.js';
import { createNetPolicy } from '../../platform/net/ssrf.js';
import type { ProtocolEvent, ProtocolOutcome } from '../ingest/service.js';
import { createBatcher } from './batcher.js';
import { consumerSpec, type NatsSpec, type RabbitSpec } from './config.js';
import type { ConsumerDeps } from './consumer.js';
import { decodeMessage } from './decode.js';
import { startNatsConsumer } from './nats.js';
import { startRabbitConsumer } from './rabbitmq.js';

const run = randomUUID().slice(0, 8);

/** An accept path that refuses its first `failures` calls, then accepts; it records what it accepted. */
function flakyAccept(failures: number) {
  const accepted: string[] = [];
  let calls = 0;
  const deps: ConsumerDeps = {
    async acceptFor(target, events): Promise<ProtocolOutcome> {
      if (calls++ < failures) throw new AppError('dependency.unavailable', { detail: 'The pipeline is unavailable' });
      accepted.push(...events.map((e) => e.text));
      return {
        target: { ...target },
        accepted: events.map(() => true),
        accepted_count: events.length,
        batch_ids: ['b'],
      };
    },
    maxEvents: 1000,
    maxBytes: 1 << 20,
    maxDepth: 64,
    net: createNetPolicy({ allowCidrs: ['127.0.0.0/8'] }),
    onRejected: () => undefined,
  };
  return { deps, accepted, calls: () => calls };
}

async function until(done: () => boolean | Promise<boolean>, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await done()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
}

describe('messages whose events cannot be accepted', () => {
  it('RabbitMQ: are nacked with requeue, delivered again, and acknowledged once accepted', async () => {
    const queue = `weir-test-release-${run}`;
    const conn = await amqp.connect('amqp://guest:guest@127.0.0.1:5672');
    const ch = await conn.createChannel();
    try {
      await ch.assertQueue(queue, { durable: false });
      for (let i = 0; i < 10; i++) ch.sendToQueue(queue, Buffer.from(JSON.stringify({ seq: i })));
      const flaky = flakyAccept(2);
      const spec = consumerSpec({
        id: 1,
        organization_id: 1,
        platform: 'rabbitmq',
        config: { url: 'amqp://127.0.0.1:5672', username: 'guest', password: 'guest', queue, batch_wait_ms: 10 },
      }) as RabbitSpec;
      const consumer = await startRabbitConsumer(spec, flaky.deps);
      await until(() => consumer.counters.accepted === 10);
      expect(consumer.counters.accepted).toBe(10);
      expect(consumer.counters.released).toBeGreaterThan(0);
      expect(consumer.counters.received).toBe(10 + consumer.counters.released);
      expect(new Set(flaky.accepted).size).toBe(10);
      await consumer.close();
      expect((await ch.checkQueue(queue)).messageCount).toBe(0);
    } finally {
      await ch.deleteQueue(queue).catch(() => undefined);
      await conn.close();
    }
  });

  it('NATS: are nak’ed, delivered again, and acked once accepted', async () => {
    const stream = `weir_test_release_${run}`;
    const nc = await connect({ servers: '127.0.0.1:4222' });
    const jsm = await jetstreamManager(nc);
    try {
      await jsm.streams.add({ name: stream, subjects: [`weir.release.${run}`] });
      for (let i = 0; i < 10; i++) await jetstream(nc).publish(`weir.release.${run}`, JSON.stringify({ seq: i }));
      const flaky = flakyAccept(2);
      const spec = consumerSpec({
        id: 2,
        organization_id: 1,
        platform: 'nats',
        config: { servers: ['127.0.0.1:4222'], stream, consumer: 'weir', batch_wait_ms: 10 },
      }) as NatsSpec;
      const consumer = await startNatsConsumer(spec, flaky.deps);
      await until(() => consumer.counters.accepted === 10);
      expect(consumer.counters.accepted).toBe(10);
      expect(consumer.counters.released).toBeGreaterThan(0);
      expect(new Set(flaky.accepted).size).toBe(10);
      await consumer.close();
      const info = await jsm.consumers.info(stream, 'weir');
      expect(info.num_pending + info.num_ack_pending).toBe(0);
    } finally {
      await jsm.streams.delete(stream).catch(() => undefined);
      await nc.close();
    }
  });
});

describe('decodeMessage', () => {
  const decode = (body: string, format: 'json' | 'ndjson' | 'text') => decodeMessage(Buffer.from(body), format, 's', 8);

  it('reads an object, an array of objects, NDJSON lines and text', () => {
    expect(decode('{"a":1}', 'json')).toEqual({ events: [{ stream: 's', text: '{"a":1}', bytes: 7 }] });
    expect('events' in decode('[{"a":1},{"a":2}]', 'json') && decode('[{"a":1},{"a":2}]', 'json')).toMatchObject({
      events: [{ text: '{"a":1}' }, { text: '{"a":2}' }],
    });
    expect(decode('{"a":1}\n{"a":2}\n', 'ndjson')).toMatchObject({
      events: [{ text: '{"a":1}' }, { text: '{"a":2}' }],
    });
    expect(decode('<13>Mar  5 host app: hi\n', 'text')).toEqual({
      events: [{ stream: 's', text: JSON.stringify({ message: '<13>Mar  5 host app: hi' }), bytes: 23 }],
    });
  });

  it('refuses the whole message with the reason', () => {
    expect(decode('{"a":', 'json')).toEqual({ reason: 'not one JSON document (format json)' });
    expect(decode('{"a":1}\nnope', 'ndjson')).toEqual({ reason: 'line 2: invalid JSON' });
    expect(decode('', 'json')).toEqual({ reason: 'empty message' });
    expect(decode('\n', 'text')).toEqual({ reason: 'empty message' });
    expect(decode('[1]', 'json')).toHaveProperty('reason');
  });
});

describe('the batcher', () => {
  it('settles the accepted prefix of a batch and gives back the rest, in order', async () => {
    const settled: { messages: number[]; accepted: number }[] = [];
    const ev = (n: number): ProtocolEvent => ({ stream: 's', text: `{"n":${n}}`, bytes: 7 });
    const b = createBatcher<number>({
      // The accept path stops at its first failure: the third event (of message 2) is not accepted.
      accept: async (events) => ({
        target: { integrationId: 1, organizationId: 1, platform: 'x' },
        accepted: events.map((_, i) => i < 2),
        accepted_count: 2,
        batch_ids: [],
      }),
      settle: (messages, accepted) => settled.push({ messages, accepted }),
      maxEvents: 100,
      maxBytes: 1 << 20,
      waitMs: 5,
      window: 10,
    });
    b.add(1, [ev(1)]);
    b.add(2, [ev(2), ev(3)]);
    b.add(3, [ev(4)]);
    await b.close();
    expect(settled).toEqual([{ messages: [1, 2, 3], accepted: 1 }]);
  });
});
