// A nats integration through the API, against the NATS JetStream of this machine: Weir creates
// the durable pull consumer (explicit ack) when missing; messages published to the stream
// arrive in Weir (the ingest status counts them, the workers processed every event), each is
// acknowledged (nothing pending or unacknowledged on the consumer), and a message that is not
// JSON is terminated, not redelivered, and reported with its reason.
import { randomUUID } from 'node:crypto';
import { AckPolicy, jetstream, jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBusApp, until, type BusApp } from '../../../test/support/bus.js';
import { injectAs } from '../../../test/support/identity.js';

const run = randomUUID().slice(0, 8);
const stream = `weir_test_in_${run}`;
const subject = `weir.test.${run}`;

let app: BusApp;
let nc: NatsConnection;
let jsm: JetStreamManager;

beforeAll(async () => {
  app = await startBusApp('NATS Org');
  nc = await connect({ servers: '127.0.0.1:4222' });
  jsm = await jetstreamManager(nc);
  await jsm.streams.add({ name: stream, subjects: [`${subject}.>`] });
}, 60_000);

afterAll(async () => {
  await app?.close();
  await jsm?.streams.delete(stream).catch(() => undefined);
  await nc?.close();
});

describe('nats input', () => {
  it('consumes the stream through a durable pull consumer: every event accepted and processed, each message acked; a non-JSON one terminated with its reason', async () => {
    const res = await injectAs(app.t, app.admin, 'POST', '/api/integrations/', {
      name: 'events stream',
      platform: 'nats',
      config: {
        servers: ['nats://127.0.0.1:4222'],
        stream,
        consumer: 'weir',
        subject: `${subject}.events`,
        format: 'ndjson',
        max_messages: 40,
      },
    });
    expect(res.statusCode, res.body).toBe(201);
    const id = res.json<{ id: number }>().id;
    const consuming = await until(
      () => app.status(id),
      (s) => s.bus?.consumers[0]?.state === 'consuming',
    );
    expect(consuming.bus?.consumers[0]?.state, JSON.stringify(consuming.bus)).toBe('consuming');
    const info = await jsm.consumers.info(stream, 'weir');
    expect(info.config.ack_policy).toBe(AckPolicy.Explicit);
    expect(info.config.durable_name).toBe('weir');

    const js = jetstream(nc);
    let events = 0;
    for (let i = 0; i < 50; i++) {
      const lines = i % 5 === 0 ? [{ seq: `${i}-a` }, { seq: `${i}-b` }, { seq: `${i}-c` }] : [{ seq: String(i) }];
      events += lines.length;
      await js.publish(`${subject}.events`, lines.map((l) => JSON.stringify(l)).join('\n'));
    }
    await js.publish(`${subject}.events`, '{"seq": 1}\nnot json');
    // Outside the consumer's filter subject: not Weir's.
    await js.publish(`${subject}.other`, '{"seq": "other"}');

    const s = await until(
      () => app.status(id),
      (v) => v.bus?.consumers[0]?.accepted === 50 && v.stats.events_in === events,
    );
    const c = s.bus!.consumers[0]!;
    expect(c).toMatchObject({ state: 'consuming', accepted: 50, rejected: 1, released: 0 });
    expect(c.last_rejection).toMatch(/^line 2: /);
    expect(s.stats.events_in).toBe(events);
    // The default Weir stream is the JetStream stream's name.
    expect(s.stats.streams.map((x) => x.stream)).toEqual([stream]);
    const after = await until(
      () => jsm.consumers.info(stream, 'weir'),
      (i) => i.num_ack_pending === 0,
    );
    expect(after.num_pending, JSON.stringify({ after, s })).toBe(0);
    expect(after.num_ack_pending, JSON.stringify({ after, c })).toBe(0);
    expect(after.num_redelivered).toBe(0);
    // The terminated message is not delivered again.
    await new Promise((r) => setTimeout(r, 300));
    expect((await app.status(id)).bus!.consumers[0]!.received).toBe(51);
  });

  it('reports a stream that does not exist as an error', async () => {
    const res = await injectAs(app.t, app.admin, 'POST', '/api/integrations/', {
      name: 'missing stream',
      platform: 'nats',
      config: { servers: ['127.0.0.1:4222'], stream: `${stream}_missing`, consumer: 'weir', token: 'not-a-real-token' },
    });
    expect(res.statusCode, res.body).toBe(201);
    const id = res.json<{ id: number }>().id;
    const s = await until(
      () => app.status(id),
      (v) => v.bus?.consumers[0]?.state === 'error',
    );
    expect(s.bus?.consumers[0]?.error).toMatch(/stream/i);
    expect(JSON.stringify(s)).not.toContain('not-a-real-token');
  });
});
