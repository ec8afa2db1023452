// The rabbitmq destination against the RabbitMQ of this machine: a batch of OCSF events is
// published to an exchange and read back from a queue bound to it by a separate consumer
// (persistent JSON messages, message id = event id); events no queue is bound for come back
// as retries, not as delivered; the connection test names the exchange, or says it is
// missing; a wrong password is an auth error that never shows the password.
import { randomUUID } from 'node:crypto';
import amqp, { type Channel, type ChannelModel, type GetMessage } from 'amqplib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ocsfEvents, sinkBatch, sinkContext } from '../../../../test/support/sink-batch.js';
import { rabbitmqSink } from './index.js';

const run = randomUUID().slice(0, 8);
const exchange = `weir-test-out-${run}`;
const queue = `weir-test-out-${run}`;
const URL_ = 'amqp://127.0.0.1:5672';
const signal = new AbortController().signal;

let conn: ChannelModel;
let ch: Channel;

beforeAll(async () => {
  conn = await amqp.connect('amqp://guest:guest@127.0.0.1:5672');
  ch = await conn.createChannel();
  await ch.assertExchange(exchange, 'direct', { durable: false });
  await ch.assertQueue(queue, { durable: false });
  await ch.bindQueue(queue, exchange, 'ocsf');
});

afterAll(async () => {
  await ch.deleteQueue(queue).catch(() => undefined);
  await ch.deleteExchange(exchange).catch(() => undefined);
  await conn.close();
});

const sink = (config: Record<string, unknown>, password = 'guest') =>
  rabbitmqSink.create(
    sinkContext({ config: { url: URL_, username: 'guest', ...config }, credential: { password }, type: rabbitmqSink }),
  );

async function drain(n: number): Promise<GetMessage[]> {
  const out: GetMessage[] = [];
  const deadline = Date.now() + 5000;
  while (out.length < n && Date.now() < deadline) {
    const m = await ch.get(queue, { noAck: true });
    if (m) out.push(m);
    else await new Promise((r) => setTimeout(r, 20));
  }
  return out;
}

describe('rabbitmq destination', () => {
  it('publishes each event with confirms; a separate consumer reads them back in order', async () => {
    const s = sink({ exchange, routing_key: 'ocsf' });
    const events = ocsfEvents(25);
    const batch = sinkBatch(events);
    expect(await s.send(batch, signal)).toEqual({});
    const got = await drain(25);
    expect(got.map((m) => JSON.parse(m.content.toString()) as unknown)).toEqual(events);
    expect(got.map((m) => m.properties.messageId as string)).toEqual(batch.ids);
    expect(got[0]!.properties.deliveryMode).toBe(2);
    expect(got[0]!.properties.contentType).toBe('application/json');
    await s.close();
  });

  it('returns events no queue is bound for as retries, not delivered', async () => {
    const s = sink({ exchange, routing_key: 'nobody-listens' });
    const result = await s.send(sinkBatch(ocsfEvents(3)), signal);
    expect(result.retry?.map((r) => r.index)).toEqual([0, 1, 2]);
    expect(result.retry?.[0]?.reason).toContain('unroutable');
    await s.close();
  });

  it('tests the connection and the exchange', async () => {
    const ok = sink({ exchange, routing_key: 'ocsf' });
    const good = await ok.test(signal);
    expect(good.ok, good.detail).toBe(true);
    expect(good.detail).toContain(exchange);
    await ok.close();
    const missing = sink({ exchange: `${exchange}-missing`, routing_key: 'ocsf' });
    const bad = await missing.test(signal);
    expect(bad.ok).toBe(false);
    expect(bad.detail).toMatch(/NOT_FOUND/);
    await missing.close();
  });

  it('a wrong password is an auth failure that does not show the password', async () => {
    const s = sink({ exchange, routing_key: 'ocsf' }, 'wrong-secret-value');
    const err = await s.send(sinkBatch(ocsfEvents(1)), signal).catch((e: unknown) => e as Error & { kind: string });
    expect(err).toBeInstanceOf(Error);
    expect((err as { kind: string }).kind).toBe('auth');
    expect((err as Error).message).not.toContain('wrong-secret-value');
    await s.close();
  });
});
