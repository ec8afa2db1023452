// The NATS JetStream input in the inputs benchmark: a fresh stream whose durable pull consumer
// Weir creates (500 messages unacknowledged at most), fed with messages of `batch` events (one
// JSON array each), each published once JetStream acknowledged it (PubAck). Needs the NATS
// server with JetStream of the machine (127.0.0.1:4222).
import { randomUUID } from 'node:crypto';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import type { InputBench } from './types.js';

const SERVER = process.env.WEIR_BENCH_NATS_SERVER ?? '127.0.0.1:4222';

export const natsInput: InputBench = {
  name: 'nats',
  async setup(ctx) {
    const run = randomUUID().slice(0, 8);
    const stream = `weir_bench_${run}`;
    const subject = `weir.bench.${run}`;
    const nc = await connect({ servers: SERVER });
    const jsm = await jetstreamManager(nc);
    await jsm.streams.add({ name: stream, subjects: [subject] });
    const js = jetstream(nc);
    const integrationId = await ctx.createIntegration({
      name: `bench ${stream}`,
      platform: 'nats',
      organization_id: ctx.organizationId,
      config: { servers: [SERVER], stream, consumer: 'weir', weir_stream: 'bench', format: 'json', max_messages: 500 },
    });
    return {
      integrationId,
      async send(events, batch) {
        const pending: Promise<unknown>[] = [];
        for (let i = 0; i < events.length; i += batch) {
          pending.push(js.publish(subject, JSON.stringify(events.slice(i, i + batch))));
          // A bounded window of PubAcks in flight.
          if (pending.length >= 64) await Promise.all(pending.splice(0));
        }
        await Promise.all(pending);
      },
      async close() {
        await jsm.streams.delete(stream).catch(() => undefined);
        await nc.close();
      },
    };
  },
};

export default natsInput;
