// The nats destination against the NATS JetStream of this machine: a batch of OCSF events is
// published to a subject a stream captures, each acknowledged by a PubAck, and read back by a
// separate consumer; the Nats-Msg-Id header is the event id, so the same batch sent twice is
// stored once; the connection test names the stream, or says none captures the subject.
import { randomUUID } from 'node:crypto';
import { jetstream, jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ocsfEvents, sinkBatch, sinkContext } from '../../../../test/support/sink-batch.js';
import { natsSink } from './index.js';

const run = randomUUID().slice(0, 8);
const stream = `weir_test_out_${run}`;
const subject = `weir.out.${run}`;
const signal = new AbortController().signal;

let nc: NatsConnection;
let jsm: JetStreamManager;

beforeAll(async () => {
  nc = await connect({ servers: '127.0.0.1:4222' });
  jsm = await jetstreamManager(nc);
  await jsm.streams.add({ name: stream, subjects: [`${subject}.>`] });
});

afterAll(async () => {
  await jsm.streams.delete(stream).catch(() => undefined);
  await nc.close();
});

const sink = (config: Record<string, unknown>) =>
  natsSink.create(sinkContext({ config: { servers: ['nats://127.0.0.1:4222'], timeout_ms: 5000, ...config } }));

describe('nats destination', () => {
  it('publishes each event and waits for its PubAck; a separate consumer reads them back; a resent batch is stored once', async () => {
    const s = sink({ subject: `${subject}.events` });
    const events = ocsfEvents(20);
    const batch = sinkBatch(events);
    expect(await s.send(batch, signal)).toEqual({});
    // Sent again (as after a lost answer): JetStream's duplicate window recognizes the ids.
    expect(await s.send(batch, signal)).toEqual({});
    await s.close();

    const info = await jsm.streams.info(stream);
    expect(info.state.messages).toBe(20);
    const consumer = await jetstream(nc).consumers.get(stream);
    const read: { event: unknown; id: string | undefined }[] = [];
    const messages = await consumer.fetch({ max_messages: 20, expires: 2000 });
    for await (const m of messages) {
      read.push({ event: m.json(), id: m.headers?.get('Nats-Msg-Id') });
      if (read.length === 20) break;
    }
    expect(read.map((r) => r.event)).toEqual(events);
    expect(read.map((r) => r.id)).toEqual(batch.ids);
  });

  it('tests the connection and the stream capturing the subject', async () => {
    const ok = sink({ subject: `${subject}.events` });
    const good = await ok.test(signal);
    expect(good.ok, good.detail).toBe(true);
    expect(good.detail).toContain(stream);
    await ok.close();
    const none = sink({ subject: `nobody.${run}` });
    const bad = await none.test(signal);
    expect(bad.ok).toBe(false);
    expect(bad.detail).toContain('no JetStream stream');
    await none.close();
  });

  it('an event to a subject no stream captures is not delivered', async () => {
    const s = sink({ subject: `nobody.${run}`, timeout_ms: 500 });
    const err = await s.send(sinkBatch(ocsfEvents(2)), signal).catch((e: unknown) => e as Error);
    expect(err).toBeInstanceOf(Error);
    await s.close();
  });
});
