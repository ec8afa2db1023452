// The RabbitMQ input in the inputs benchmark: a fresh durable queue that Weir declares and
// consumes (prefetch 1000), fed through a confirm channel with messages of `batch` events
// (one JSON array each). Needs the RabbitMQ of the machine (127.0.0.1:5672, guest/guest).
import { randomUUID } from 'node:crypto';
import amqp from 'amqplib';
import type { InputBench } from './types.js';

const AMQP = process.env.WEIR_BENCH_AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672';

export const rabbitmqInput: InputBench = {
  name: 'rabbitmq',
  async setup(ctx) {
    const queue = `weir-bench-${randomUUID().slice(0, 8)}`;
    const conn = await amqp.connect(AMQP);
    const ch = await conn.createConfirmChannel();
    await ch.assertQueue(queue, { durable: true });
    const url = new URL(AMQP);
    const integrationId = await ctx.createIntegration({
      name: `bench ${queue}`,
      platform: 'rabbitmq',
      organization_id: ctx.organizationId,
      config: {
        url: `amqp://${url.host}${url.pathname}`,
        username: decodeURIComponent(url.username),
        password: decodeURIComponent(url.password),
        queue,
        prefetch: 1000,
        stream: 'bench',
        format: 'json',
      },
    });
    return {
      integrationId,
      async send(events, batch) {
        for (let i = 0; i < events.length; i += batch) {
          ch.sendToQueue(queue, Buffer.from(JSON.stringify(events.slice(i, i + batch))), { persistent: true });
        }
        await ch.waitForConfirms();
      },
      async close() {
        await ch.deleteQueue(queue).catch(() => undefined);
        await conn.close();
      },
    };
  },
};

export default rabbitmqInput;
