// End-to-end: `weir all` consumes a RabbitMQ queue and a NATS JetStream durable consumer and
// is killed with SIGKILL while messages are being published to both. A message is
// acknowledged to the broker only once its event is durably accepted, so what Weir held
// unacknowledged at the kill is redelivered by the broker after the restart: once the queue
// is empty and the consumer has nothing pending or unacknowledged (every message was
// acknowledged), every published message reached the webhook destination a route sends
// everything to. Duplicates (accepted, not yet acknowledged at the kill) are allowed and
// counted. Embedded deployment only (PGlite, the database queue); a few hundred messages.
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import amqp from 'amqplib';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { afterAll, describe, expect, it } from 'vitest';
import { createDestination, createRoute, seqOf, waitFor } from '../support/delivery-api.js';
import { http, setUpIngestion } from '../support/ingest.js';
import { createFleet } from '../support/process.js';
import { startWebhookReceiver } from '../support/webhook-receiver.js';

const distributed = Boolean(process.env.DATABASE_URL && process.env.REDIS_URL);
const MESSAGES = 300;
const run = randomUUID().slice(0, 8);
const queue = `weir-kill-${run}`;
const jsStream = `weir_kill_${run}`;
const subject = `weir.kill.${run}`;

const fleet = createFleet({ WEIR_OUTBOUND_ALLOW_CIDRS: '127.0.0.0/8', WEIR_DISPATCH_POLL_MS: '100' });
afterAll(() => fleet.cleanup());

const mapping = {
  product: { name: 'Bus test events', vendor_name: 'Weir tests' },
  rules: [
    {
      name: 'bus event',
      class_uid: 4001,
      activity_id: 6,
      set: [{ target: 'src_endpoint.ip', from: 'src', cast: 'ip' }],
    },
  ],
  tests: [
    {
      name: 'an event',
      input: { src: '10.0.0.7', weir_test_seq: 'x' },
      expect: { 'src_endpoint.ip': '10.0.0.7', 'unmapped.weir_test_seq': 'x' },
    },
  ],
};

const event = (seq: string) => JSON.stringify({ src: '10.0.0.7', weir_test_seq: seq });

describe('message bus inputs under SIGKILL', () => {
  it.skipIf(distributed)(
    'every message RabbitMQ and NATS published while weir all was killed and restarted is delivered once both brokers saw it acknowledged',
    async () => {
      const amqpConn = await amqp.connect('amqp://guest:guest@127.0.0.1:5672');
      const ch = await amqpConn.createConfirmChannel();
      const nc = await connect({ servers: '127.0.0.1:4222' });
      const jsm = await jetstreamManager(nc);
      await jsm.streams.add({ name: jsStream, subjects: [`${subject}.>`] });
      fleet.onCleanup(async () => {
        await ch.deleteQueue(queue).catch(() => undefined);
        await amqpConn.close().catch(() => undefined);
        await jsm.streams.delete(jsStream).catch(() => undefined);
        await nc.close();
      });
      const env = {
        WEIR_QUEUE_LEASE_MS: '3000',
        WEIR_BUS_REFRESH_MS: '200',
        WEIR_MAPPING_REFRESH_MS: '200',
        WEIR_DATA_DIR: fleet.keepDir(mkdtempSync(path.join(tmpdir(), 'weir-bus-kill-'))),
      };
      let current = await fleet.startApi('all', env);
      const setup = await setUpIngestion(current.url, []);
      const headers = { cookie: setup.cookie };
      const integration = async (platform: string, config: Record<string, unknown>) => {
        const res = await http(
          current.url,
          'POST',
          '/api/integrations/',
          { name: platform, platform, organization_id: setup.organizationId, config },
          headers,
        );
        expect(res.status, JSON.stringify(res.json)).toBe(201);
        return Number(res.json.id);
      };
      const rabbitId = await integration('rabbitmq', {
        url: 'amqp://127.0.0.1:5672',
        username: 'guest',
        password: 'guest',
        queue,
        declare: true,
        prefetch: 100,
        stream: 'bus',
      });
      const natsId = await integration('nats', {
        servers: ['127.0.0.1:4222'],
        stream: jsStream,
        consumer: 'weir',
        weir_stream: 'bus',
        max_messages: 100,
      });
      const consuming = async (url: string) => {
        for (const id of [rabbitId, natsId]) {
          const s = await http(url, 'GET', `/api/ingest/integrations/${id}`, undefined, headers);
          const consumers = (s.json.bus as { consumers: { state: string }[] } | undefined)?.consumers ?? [];
          if (!consumers.some((c) => c.state === 'consuming')) return undefined;
        }
        return true;
      };
      await waitFor('both consumers', () => consuming(current.url), 30_000, 100);

      // A first message of each makes the stream's definition; its mapping is then published.
      ch.sendToQueue(queue, Buffer.from(event('probe')), { persistent: true });
      await ch.waitForConfirms();
      const js = jetstream(nc);
      await js.publish(`${subject}.events`, event('probe'));
      for (const platform of ['rabbitmq', 'nats']) {
        const definition = await waitFor(
          `the ${platform} stream's definition`,
          async () => {
            const d = await http(
              current.url,
              'GET',
              `/api/mappings?platform=${platform}&stream=bus`,
              undefined,
              headers,
            );
            return (d.json.items as { id: string }[] | undefined)?.[0];
          },
          30_000,
          100,
        );
        const published = await http(
          current.url,
          'POST',
          `/api/mappings/${definition.id}/versions`,
          { document: mapping },
          headers,
        );
        expect(published.status, JSON.stringify(published.json)).toBe(201);
      }
      const receiver = await startWebhookReceiver({ keyOf: (e) => seqOf(e) });
      fleet.onCleanup(() => receiver.close());
      const destination = await createDestination(current.url, headers, {
        name: 'receiver',
        type: 'http',
        organization_id: setup.organizationId,
        config: { url: receiver.url },
        delivery: { max_wait_ms: 50, timeout_ms: 2000 },
      });
      await createRoute(current.url, headers, {
        name: 'everything',
        organization_id: setup.organizationId,
        destination_ids: [destination],
      });
      await new Promise((r) => setTimeout(r, 600)); // the mapping and the route are live within a refresh

      // Publishing goes on while weir is killed and restarted; each message counts as
      // published once the broker confirmed it (RabbitMQ publisher confirm, JetStream PubAck).
      const rabbitSeqs = Array.from({ length: MESSAGES }, (_, i) => `rabbit-${i}`);
      const natsSeqs = Array.from({ length: MESSAGES }, (_, i) => `nats-${i}`);
      const publisher = (async () => {
        for (let i = 0; i < MESSAGES; i += 5) {
          for (const seq of rabbitSeqs.slice(i, i + 5))
            ch.sendToQueue(queue, Buffer.from(event(seq)), { persistent: true });
          await ch.waitForConfirms();
          await Promise.all(natsSeqs.slice(i, i + 5).map((seq) => js.publish(`${subject}.events`, event(seq))));
          await new Promise((r) => setTimeout(r, 15));
        }
      })();
      const delivered = (seqs: string[]) => seqs.filter((s) => receiver.received.has(s)).length;
      await waitFor(
        'part of both delivered',
        async () => (delivered(rabbitSeqs) >= 30 && delivered(natsSeqs) >= 30 ? true : undefined),
        60_000,
        10,
      );
      current.p.kill('SIGKILL');
      await current.p.exited;
      const atKill = { rabbit: delivered(rabbitSeqs), nats: delivered(natsSeqs) };
      expect(atKill.rabbit + atKill.nats).toBeLessThan(2 * MESSAGES);
      current = await fleet.startApi('all', env);
      await publisher;

      await waitFor(
        'every published message delivered',
        async () => (delivered(rabbitSeqs) === MESSAGES && delivered(natsSeqs) === MESSAGES ? true : undefined),
        120_000,
        200,
      );
      // Every message was acknowledged to its broker: nothing left in the queue, nothing
      // pending or unacknowledged on the durable consumer.
      await waitFor(
        'both brokers settled',
        async () => {
          const q = await ch.checkQueue(queue);
          const c = await jsm.consumers.info(jsStream, 'weir');
          return q.messageCount === 0 && c.num_pending === 0 && c.num_ack_pending === 0 ? true : undefined;
        },
        60_000,
        200,
      );
      console.log(
        `bus inputs under SIGKILL: ${MESSAGES} messages each to RabbitMQ and NATS; delivered at the kill: ${atKill.rabbit} and ${atKill.nats}; ` +
          `after the restart all ${2 * MESSAGES} delivered, ${receiver.stats().duplicates} duplicates (accepted, not yet acknowledged at the kill)`,
      );
      current.p.kill('SIGTERM');
      expect(await current.p.exited).toBe(0);
    },
    240_000,
  );
});
