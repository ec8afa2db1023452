// A rabbitmq integration through the API, against the RabbitMQ of this machine: its password
// is never returned; messages published to its queue arrive in Weir (the ingest status counts
// them, and the workers processed every event), the queue is left empty (each one
// acknowledged), a message that is not JSON is rejected to the queue's dead-letter exchange
// and reported with its reason; a deactivated integration stops consuming; a queue that does
// not exist is an error in the status.
import { randomUUID } from 'node:crypto';
import amqp, { type Channel, type ChannelModel } from 'amqplib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBusApp, until, type BusApp } from '../../../test/support/bus.js';
import { injectAs } from '../../../test/support/identity.js';

const AMQP = 'amqp://guest:guest@127.0.0.1:5672';
const run = randomUUID().slice(0, 8);
const queue = `weir-test-in-${run}`;
const dlx = `weir-test-dlx-${run}`;
const dead = `weir-test-dead-${run}`;

let app: BusApp;
let conn: ChannelModel;
let ch: Channel;

beforeAll(async () => {
  app = await startBusApp('Bus Org');
  conn = await amqp.connect(AMQP);
  ch = await conn.createChannel();
  await ch.assertExchange(dlx, 'fanout', { durable: false, autoDelete: false });
  await ch.assertQueue(dead, { durable: false });
  await ch.bindQueue(dead, dlx, '');
}, 60_000);

afterAll(async () => {
  await app?.close();
  for (const q of [queue, dead]) await ch?.deleteQueue(q).catch(() => undefined);
  await ch?.deleteExchange(dlx).catch(() => undefined);
  await conn?.close().catch(() => undefined);
});

describe('rabbitmq input', () => {
  let id: number;

  it('creates the integration; the password is stored, never returned', async () => {
    const res = await injectAs(app.t, app.admin, 'POST', '/api/integrations/', {
      name: 'events queue',
      platform: 'rabbitmq',
      config: {
        url: 'amqp://127.0.0.1:5672/',
        username: 'guest',
        password: 'guest',
        queue,
        declare: true,
        dead_letter_exchange: dlx,
        prefetch: 50,
        stream: 'app',
      },
    });
    expect(res.statusCode, res.body).toBe(201);
    id = res.json<{ id: number }>().id;
    const got = await injectAs(app.t, app.admin, 'GET', `/api/integrations/${id}`);
    expect(got.json<{ config: Record<string, unknown> }>().config.password).toEqual({ configured: true });
    expect(got.body).not.toContain('"guest"}');
  });

  it('refuses a password in the URL', async () => {
    const res = await injectAs(app.t, app.admin, 'POST', '/api/integrations/', {
      name: 'leaky',
      platform: 'rabbitmq',
      config: { url: 'amqp://guest:guest@127.0.0.1:5672/', queue },
    });
    expect(res.statusCode, res.body).toBe(422);
    expect(
      res.json<{ error: { details: { errors: { location: string }[] } } }>().error.details.errors[0]!.location,
    ).toBe('body/config/url');
  });

  it('consumes the queue: every event accepted and processed, each message acknowledged; a non-JSON one dead-lettered with its reason', async () => {
    const consuming = await until(
      () => app.status(id),
      (s) => s.bus?.consumers[0]?.state === 'consuming',
    );
    expect(consuming.bus?.consumers[0]?.state, JSON.stringify(consuming.bus)).toBe('consuming');
    let events = 0;
    for (let i = 0; i < 60; i++) {
      // Some messages carry an array of events: one message, several events.
      const body = i % 10 === 0 ? [{ seq: `${i}-a` }, { seq: `${i}-b` }] : { seq: String(i), user: 'alice' };
      events += Array.isArray(body) ? body.length : 1;
      ch.sendToQueue(queue, Buffer.from(JSON.stringify(body)), { persistent: true });
    }
    ch.sendToQueue(queue, Buffer.from('{"seq": "broken"'), { persistent: true });
    const s = await until(
      () => app.status(id),
      (v) => v.bus?.consumers[0]?.accepted === 60 && v.stats.events_in === events,
    );
    const c = s.bus!.consumers[0]!;
    expect(c).toMatchObject({ state: 'consuming', accepted: 60, rejected: 1, released: 0, received: 61 });
    expect(c.last_rejection).toMatch(/JSON/);
    expect(s.stats.events_in).toBe(events);
    expect(s.stats.streams.map((x) => x.stream)).toEqual(['app']);
    // Nothing left unacknowledged; the broken message went to the dead-letter exchange.
    expect((await ch.checkQueue(queue)).messageCount).toBe(0);
    const deadLettered = await until(
      () => ch.get(dead, { noAck: true }),
      (m) => m !== false,
    );
    expect(deadLettered && deadLettered.content.toString()).toBe('{"seq": "broken"');
  });

  it('stops consuming when the integration is deactivated', async () => {
    const res = await injectAs(app.t, app.admin, 'PUT', `/api/integrations/${id}`, { is_active: false });
    expect(res.statusCode, res.body).toBe(200);
    const s = await until(
      () => app.status(id),
      (v) => v.bus?.consumers[0]?.state === 'stopped',
    );
    expect(s.bus?.consumers[0]?.state).toBe('stopped');
    ch.sendToQueue(queue, Buffer.from('{"seq":"later"}'), { persistent: true });
    await new Promise((r) => setTimeout(r, 500));
    expect((await ch.checkQueue(queue)).messageCount).toBe(1);
  });

  it('reports a queue that does not exist as an error', async () => {
    const res = await injectAs(app.t, app.admin, 'POST', '/api/integrations/', {
      name: 'missing queue',
      platform: 'rabbitmq',
      config: { url: 'amqp://127.0.0.1:5672', username: 'guest', password: 'guest', queue: `${queue}-missing` },
    });
    expect(res.statusCode, res.body).toBe(201);
    const missing = res.json<{ id: number }>().id;
    const s = await until(
      () => app.status(missing),
      (v) => v.bus?.consumers[0]?.state === 'error',
    );
    expect(s.bus?.consumers[0]?.error).toMatch(/NOT_FOUND/);
    expect(s.bus?.consumers[0]?.error).not.toContain('guest');
  });
});
