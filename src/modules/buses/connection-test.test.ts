// "Test connection" (POST /api/integrations/{id}/test-connection, the console's button) of
// rabbitmq and nats integrations, against the RabbitMQ and NATS JetStream of this machine: a
// real connection with the stored config and secrets that reports the queue's ready messages
// and consumers, or the JetStream stream and durable consumer (created later when missing)
// and what is pending; failures say why (auth, not_found, unreachable, blocked_address,
// config) and never repeat a secret, neither in the answer nor in the recorded history.
import { randomUUID } from 'node:crypto';
import amqp, { type Channel, type ChannelModel } from 'amqplib';
import { AckPolicy, jetstream, jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/support/app.js';
import { createOrganization, createPrincipal, injectAs, type Principal } from '../../../test/support/identity.js';

const run = randomUUID().slice(0, 8);
const queue = `weir-test-check-${run}`;
const stream = `weir_test_check_${run}`;
const subject = `weir.check.${run}`;
const WRONG = `wrong-secret-${run}`;

interface Result {
  ok: boolean;
  kind: string;
  detail: string;
  error_kind: string | null;
  broker?: Record<string, number | boolean | string | null>;
}

let t: TestApp;
let admin: Principal;
let conn: ChannelModel;
let ch: Channel;
let nc: NatsConnection;
let jsm: JetStreamManager;

async function integration(platform: string, config: Record<string, unknown>): Promise<number> {
  const res = await injectAs(t, admin, 'POST', '/api/integrations/', {
    name: `${platform} ${randomUUID().slice(0, 6)}`,
    platform,
    config,
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json<{ id: number }>().id;
}

async function check(id: number): Promise<Result> {
  const res = await injectAs(t, admin, 'POST', `/api/integrations/${id}/test-connection`);
  expect(res.statusCode, res.body).toBe(200);
  return res.json<Result>();
}

const rabbit = (config: Record<string, unknown>) =>
  integration('rabbitmq', { url: 'amqp://127.0.0.1:5672/', username: 'guest', password: 'guest', queue, ...config });
const nats = (config: Record<string, unknown>) =>
  integration('nats', { servers: ['127.0.0.1:4222'], stream, consumer: `weir-${run}`, ...config });

beforeAll(async () => {
  t = await createTestApp();
  const org = await createOrganization(t, 'Bus Check Org');
  admin = await createPrincipal(t, { role: 'admin', organizationId: org });
  conn = await amqp.connect('amqp://guest:guest@127.0.0.1:5672');
  ch = await conn.createChannel();
  await ch.assertQueue(queue, { durable: false });
  nc = await connect({ servers: '127.0.0.1:4222' });
  jsm = await jetstreamManager(nc);
  await jsm.streams.add({ name: stream, subjects: [`${subject}.>`] });
}, 60_000);

afterAll(async () => {
  await ch?.deleteQueue(queue).catch(() => undefined);
  await conn?.close().catch(() => undefined);
  await jsm?.streams.delete(stream).catch(() => undefined);
  await nc?.close();
  await t?.close();
});

describe('test connection of a rabbitmq integration', () => {
  it('connects with the stored password and reports the queue: ready messages and consumers', async () => {
    for (let i = 0; i < 3; i++) ch.sendToQueue(queue, Buffer.from(`{"n":${i}}`));
    // A consumer of our own that holds one message unacknowledged: 2 ready, 1 consumer.
    const other = await conn.createChannel();
    await other.prefetch(1);
    await other.consume(queue, () => undefined, { noAck: false });
    const id = await rabbit({});
    let r = await check(id);
    for (let i = 0; r.broker?.queue_messages !== 2 && i < 20; i++) r = await check(id);
    expect(r, r.detail).toMatchObject({ ok: true, kind: 'broker', error_kind: null });
    expect(r.broker).toMatchObject({ platform: 'rabbitmq', source: queue, queue_messages: 2, queue_consumers: 1 });
    expect(r.detail).toContain(`queue "${queue}" has 2 messages ready and 1 consumer`);
    await other.close();

    const health = await injectAs(t, admin, 'GET', `/api/integrations/${id}/health`);
    expect(health.json()).toMatchObject({ check_kind: 'broker', last_check: { ok: true } });
  });

  it('a refused login is auth, and the password is in neither the answer nor the history', async () => {
    const id = await rabbit({ password: WRONG });
    const r = await check(id);
    expect(r).toMatchObject({ ok: false, kind: 'broker', error_kind: 'auth' });
    expect(r.detail).toContain('user "guest" was refused');
    const health = await injectAs(t, admin, 'GET', `/api/integrations/${id}/health`);
    expect(health.body).toContain('was refused');
    for (const body of [JSON.stringify(r), health.body]) expect(body).not.toContain(WRONG);
  });

  it('a missing queue is not_found; with declare it is fine (Weir declares it)', async () => {
    const missing = await check(await rabbit({ queue: `${queue}-missing` }));
    expect(missing).toMatchObject({ ok: false, error_kind: 'not_found' });
    expect(missing.detail).toContain(`queue "${queue}-missing" does not exist`);
    const declared = await check(await rabbit({ queue: `${queue}-missing`, declare: true }));
    expect(declared, declared.detail).toMatchObject({ ok: true, error_kind: null });
    expect(declared.detail).toContain('Weir declares it');
  });

  it('a closed port is unreachable; an address the outbound guard refuses is blocked_address', async () => {
    const closed = await check(await rabbit({ url: 'amqp://127.0.0.1:5699/' }));
    expect(closed).toMatchObject({ ok: false, error_kind: 'unreachable' });
    expect(closed.detail).toContain('ECONNREFUSED');
    const blocked = await check(await rabbit({ url: 'amqp://169.254.169.254:5672/' }));
    expect(blocked).toMatchObject({ ok: false, error_kind: 'blocked_address' });
    expect(blocked.detail).toContain('WEIR_OUTBOUND_ALLOW_CIDRS');
  });
});

describe('test connection of a nats integration', () => {
  it('a durable consumer not yet created: the stream is reported, the consumer will be created', async () => {
    const js = jetstream(nc);
    for (let i = 0; i < 4; i++) await js.publish(`${subject}.a`, `{"n":${i}}`);
    const r = await check(await nats({ password: WRONG, user: 'weir' }));
    expect(r, r.detail).toMatchObject({ ok: true, kind: 'broker', error_kind: null });
    expect(r.broker).toMatchObject({ platform: 'nats', stream_messages: 4, consumer_exists: false });
    expect(r.detail).toContain('does not exist yet: Weir creates it');
    expect(JSON.stringify(r)).not.toContain(WRONG);
    // The test only reads: the consumer is still not there.
    await expect(jsm.consumers.info(stream, `weir-${run}`)).rejects.toThrow();
  });

  it('an existing durable consumer: what is pending on it', async () => {
    await jsm.consumers.add(stream, { durable_name: `weir-${run}`, ack_policy: AckPolicy.Explicit });
    const r = await check(await nats({}));
    expect(r, r.detail).toMatchObject({ ok: true, error_kind: null });
    expect(r.broker).toMatchObject({ consumer_exists: true, consumer_pending: 4, consumer_ack_pending: 0 });
    expect(r.detail).toContain(`consumer "weir-${run}": 4 pending`);
  });

  it('a consumer Weir cannot use is config; a missing stream is not_found; a closed port is unreachable', async () => {
    await jsm.consumers.add(stream, { durable_name: `none-${run}`, ack_policy: AckPolicy.None });
    const none = await check(await nats({ consumer: `none-${run}` }));
    expect(none).toMatchObject({ ok: false, error_kind: 'config' });
    expect(none.detail).toContain('Weir needs explicit');
    const missing = await check(await nats({ stream: `${stream}_missing` }));
    expect(missing).toMatchObject({ ok: false, error_kind: 'not_found' });
    expect(missing.detail).toContain(`stream "${stream}_missing" does not exist`);
    const closed = await check(await nats({ servers: ['127.0.0.1:4299'] }));
    expect(closed).toMatchObject({ ok: false, error_kind: 'unreachable' });
  });
});
