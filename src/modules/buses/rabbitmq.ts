// A RabbitMQ (AMQP 0-9-1) queue consumer with manual acknowledgements and basic.qos prefetch.
// Messages are held until their batch is accepted; then the accepted ones are acknowledged
// with one multiple ack (up to the last accepted delivery tag), and those not accepted are
// nacked with requeue. A message that cannot be an event is nacked without requeue at once
// (the queue's dead-letter exchange receives it, if it has one) and counted with its reason.
// A connection lost with messages held: the broker redelivers them (duplicates, never a loss).
import amqp, { type Channel, type ChannelModel, type ConsumeMessage } from 'amqplib';
import type { RabbitSpec } from './config.js';
import { brokerError, consumerBatcher, newCounters, type ConsumerDeps, type RunningConsumer } from './consumer.js';
import { decodeMessage } from './decode.js';

/** The URL amqplib connects to: the configured one with the credentials and the checked address. */
export async function connectUrl(
  spec: RabbitSpec,
  deps: Pick<ConsumerDeps, 'net'>,
): Promise<{ url: string; servername: string }> {
  const url = new URL(spec.url);
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  const { address } = await deps.net.resolve(host);
  url.hostname = address.includes(':') ? `[${address}]` : address;
  if (spec.username) url.username = encodeURIComponent(spec.username);
  if (spec.password !== undefined) url.password = encodeURIComponent(spec.password);
  return { url: url.toString(), servername: host };
}

export async function startRabbitConsumer(spec: RabbitSpec, deps: ConsumerDeps): Promise<RunningConsumer> {
  const counters = newCounters();
  const target = { integrationId: spec.integrationId, organizationId: spec.organizationId, platform: 'rabbitmq' };
  const { url, servername } = await connectUrl(spec, deps);
  let conn: ChannelModel;
  try {
    conn = await amqp.connect(url, {
      servername,
      clientProperties: { connection_name: `weir integration ${spec.integrationId}` },
    });
  } catch (err) {
    throw new Error(`cannot connect to ${spec.url.replace(/\/\/[^@/]*@/, '//')}: ${brokerError(err)}`);
  }
  let failure: string | undefined;
  let closing = false;
  conn.on('error', (err: unknown) => (failure ??= `connection error: ${brokerError(err)}`));
  conn.on('close', () => {
    if (!closing) failure ??= 'the connection to RabbitMQ closed';
  });
  let ch: Channel;
  try {
    ch = await conn.createChannel();
    ch.on('error', (err: unknown) => (failure ??= `channel error: ${brokerError(err)}`));
    if (spec.declare)
      await ch.assertQueue(spec.queue, {
        durable: true,
        ...(spec.deadLetterExchange ? { deadLetterExchange: spec.deadLetterExchange } : {}),
      });
    else await ch.checkQueue(spec.queue);
    await ch.prefetch(spec.window);
  } catch (err) {
    await conn.close().catch(() => undefined);
    throw new Error(`queue "${spec.queue}": ${brokerError(err)}`);
  }
  // Acks on a channel that is gone throw; the broker then redelivers what they were for.
  const settleSafely = (f: () => void) => {
    try {
      f();
    } catch {
      failure ??= 'the channel closed while acknowledging';
    }
  };
  const batcher = consumerBatcher<ConsumeMessage>(deps, target, spec, counters, (messages, accepted) => {
    if (accepted > 0) settleSafely(() => ch.ack(messages[accepted - 1]!, true));
    if (accepted < messages.length) settleSafely(() => ch.nack(messages[messages.length - 1]!, true, true));
  });
  const onMessage = (msg: ConsumeMessage | null) => {
    if (!msg) {
      failure ??= 'RabbitMQ cancelled the consumer (the queue was deleted?)';
      return;
    }
    counters.received++;
    counters.last_message_ms = Date.now();
    const decoded = decodeMessage(msg.content, spec.format, spec.stream, deps.maxDepth);
    if ('reason' in decoded) {
      settleSafely(() => ch.nack(msg, false, false));
      counters.rejected++;
      counters.last_rejection = decoded.reason;
      deps.onRejected(decoded.reason);
      return;
    }
    batcher.add(msg, decoded.events);
  };
  let consumerTag: string;
  try {
    consumerTag = (await ch.consume(spec.queue, onMessage, { noAck: false })).consumerTag;
  } catch (err) {
    await conn.close().catch(() => undefined);
    throw new Error(`queue "${spec.queue}": ${brokerError(err)}`);
  }
  return {
    counters,
    failure: () => failure,
    async close() {
      closing = true;
      await ch.cancel(consumerTag).catch(() => undefined);
      await batcher.close();
      await ch.close().catch(() => undefined);
      await conn.close().catch(() => undefined);
    },
  };
}
