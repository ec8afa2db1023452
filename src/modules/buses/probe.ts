// The connection test of a rabbitmq or nats integration (POST .../test-connection): a real
// connection with the integration's stored config and secrets, through the same outbound
// guard as the consumers, that reads without consuming. RabbitMQ: connect, check the queue
// (passive declare) and report its ready messages and consumers. NATS: connect, look up the
// JetStream stream and the durable consumer (or say Weir will create it) and report what is
// pending. Failures are results with a kind (auth, not_found, unreachable, blocked_address,
// config) and a message that never carries a secret.
import amqp, { type ChannelModel } from 'amqplib';
import { AckPolicy, jetstreamManager, JetStreamApiCodes } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { findNetError } from '../../platform/net/errors.js';
import type { NetPolicy } from '../../platform/net/policy.js';
import { consumerSpec, type BusIntegration, type NatsSpec, type RabbitSpec } from './config.js';
import { brokerError } from './consumer.js';
import { checkedServers } from './nats.js';
import { connectUrl } from './rabbitmq.js';

export type BrokerErrorKind = 'auth' | 'not_found' | 'unreachable' | 'blocked_address' | 'config';

/** What the test read from the broker; null where the platform has no such figure or it was not reached. */
export interface BrokerFacts {
  platform: 'rabbitmq' | 'nats';
  /** The RabbitMQ queue, or the JetStream stream/consumer. */
  source: string;
  /** RabbitMQ: messages ready in the queue. */
  queue_messages: number | null;
  /** RabbitMQ: consumers on the queue (Weir's workers included). */
  queue_consumers: number | null;
  /** NATS: messages held by the stream. */
  stream_messages: number | null;
  /** NATS: whether the durable consumer exists (Weir creates it when it starts consuming). */
  consumer_exists: boolean | null;
  /** NATS: messages of the stream not yet delivered to the consumer. */
  consumer_pending: number | null;
  /** NATS: messages delivered to the consumer and not yet acknowledged. */
  consumer_ack_pending: number | null;
}

export interface BrokerTestResult {
  ok: boolean;
  detail: string;
  errorKind: BrokerErrorKind | null;
  broker: BrokerFacts;
}

const CONNECT_TIMEOUT_MS = 5_000;

class ProbeError extends Error {
  constructor(
    readonly kind: BrokerErrorKind,
    message: string,
  ) {
    super(message);
  }
}

/** A failure to resolve or reach a host: the outbound guard's refusal, or the network's. */
function netFailure(err: unknown, where: string): ProbeError | undefined {
  const net = findNetError(err);
  if (!net) return undefined;
  // The guard's own message names the address, why, and the setting that allows it.
  return new ProbeError(net.kind === 'blocked_address' ? 'blocked_address' : 'unreachable', `${where}: ${net.message}`);
}

function facts(platform: 'rabbitmq' | 'nats', source: string): BrokerFacts {
  return {
    platform,
    source,
    queue_messages: null,
    queue_consumers: null,
    stream_messages: null,
    consumer_exists: null,
    consumer_pending: null,
    consumer_ack_pending: null,
  };
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

async function testRabbit(spec: RabbitSpec, net: NetPolicy, out: BrokerFacts): Promise<string> {
  const shown = spec.url.replace(/\/\/[^@/]*@/, '//');
  const where = `RabbitMQ ${shown}`;
  const target = await connectUrl(spec, { net }).catch((err: unknown) => {
    throw netFailure(err, where) ?? new ProbeError('config', `${where}: ${brokerError(err)}`);
  });
  let conn: ChannelModel;
  try {
    conn = await amqp.connect(target.url, {
      servername: target.servername,
      timeout: CONNECT_TIMEOUT_MS,
      clientProperties: { connection_name: `weir connection test ${spec.integrationId}` },
    });
  } catch (err) {
    const text = brokerError(err);
    const user = spec.username ?? (decodeURIComponent(new URL(spec.url).username) || 'guest');
    if (/ACCESS.REFUSED|\b403\b/.test(text))
      throw new ProbeError('auth', `${where}: the login of user "${user}" was refused (user name or password)`);
    if (/NOT.ALLOWED|\b530\b|ConnectionOpenOk/.test(text))
      throw new ProbeError(
        'auth',
        `${where}: the virtual host was refused: it does not exist, or user "${user}" may not use it`,
      );
    throw new ProbeError('unreachable', `${where}: cannot connect: ${text}`);
  }
  try {
    const ch = await conn.createChannel();
    ch.on('error', () => undefined);
    try {
      const q = await ch.checkQueue(spec.queue);
      out.queue_messages = q.messageCount;
      out.queue_consumers = q.consumerCount;
      return `${where}: connected; queue "${spec.queue}" has ${plural(q.messageCount, 'message')} ready and ${plural(q.consumerCount, 'consumer')}`;
    } catch (err) {
      const code = (err as { code?: unknown }).code;
      if (code === 404 && spec.declare)
        return `${where}: connected; queue "${spec.queue}" does not exist yet: Weir declares it (durable) when it starts consuming`;
      if (code === 404)
        throw new ProbeError(
          'not_found',
          `${where}: queue "${spec.queue}" does not exist (create it, or set declare: true)`,
        );
      if (code === 403) throw new ProbeError('auth', `${where}: the user may not access queue "${spec.queue}"`);
      throw new ProbeError('unreachable', `${where}: queue "${spec.queue}": ${brokerError(err)}`);
    }
  } finally {
    await conn.close().catch(() => undefined);
  }
}

async function testNats(spec: NatsSpec, net: NetPolicy, out: BrokerFacts): Promise<string> {
  const where = `NATS ${spec.servers.join(', ')}`;
  const servers = await checkedServers(spec, { net }).catch((err: unknown) => {
    throw netFailure(err, where) ?? new ProbeError('config', `${where}: ${brokerError(err)}`);
  });
  let nc: NatsConnection;
  try {
    nc = await connect({
      servers,
      name: `weir connection test ${spec.integrationId}`,
      timeout: CONNECT_TIMEOUT_MS,
      reconnect: false,
      ...(spec.user ? { user: spec.user, pass: spec.password ?? '' } : {}),
      ...(spec.token ? { token: spec.token } : {}),
    });
  } catch (err) {
    const name = (err as { name?: unknown }).name;
    if (name === 'AuthorizationError' || name === 'UserAuthenticationExpiredError')
      throw new ProbeError('auth', `${where}: the server refused the credentials (${brokerError(err)})`);
    throw new ProbeError('unreachable', `${where}: cannot connect: ${brokerError(err)}`);
  }
  const stream = `stream "${spec.jsStream}"`;
  try {
    const jsm = await jetstreamManager(nc).catch((err: unknown) => {
      throw (err as { name?: unknown }).name === 'JetStreamNotEnabled'
        ? new ProbeError('not_found', `${where}: JetStream is not enabled on the server (or for this account)`)
        : err;
    });
    const si = await jsm.streams.info(spec.jsStream).catch((err: unknown) => {
      throw (err as { code?: unknown }).code === JetStreamApiCodes.StreamNotFound
        ? new ProbeError('not_found', `${where}: ${stream} does not exist`)
        : err;
    });
    out.stream_messages = si.state.messages;
    const ci = await jsm.consumers.info(spec.jsStream, spec.consumer).catch((err: unknown) => {
      if ((err as { code?: unknown }).code === JetStreamApiCodes.ConsumerNotFound) return undefined;
      throw err;
    });
    out.consumer_exists = ci !== undefined;
    const held = `${stream} holds ${plural(si.state.messages, 'message')}`;
    if (!ci)
      return `${where}: connected; ${held}; durable consumer "${spec.consumer}" does not exist yet: Weir creates it (pull, explicit ack${spec.subject ? `, subject ${spec.subject}` : ''}) when it starts consuming`;
    if (ci.config.ack_policy !== AckPolicy.Explicit)
      throw new ProbeError(
        'config',
        `${where}: consumer "${spec.consumer}" has ack policy ${ci.config.ack_policy}; Weir needs explicit`,
      );
    if (ci.config.deliver_subject)
      throw new ProbeError(
        'config',
        `${where}: consumer "${spec.consumer}" is a push consumer; Weir needs a pull consumer`,
      );
    out.consumer_pending = ci.num_pending;
    out.consumer_ack_pending = ci.num_ack_pending;
    return `${where}: connected; ${held}; consumer "${spec.consumer}": ${ci.num_pending} pending, ${ci.num_ack_pending} delivered and not yet acknowledged`;
  } catch (err) {
    if (err instanceof ProbeError) throw err;
    const name = (err as { name?: unknown }).name;
    if (name === 'PermissionViolationError')
      throw new ProbeError('auth', `${where}: permission denied for the JetStream API (${brokerError(err)})`);
    throw new ProbeError('unreachable', `${where}: ${stream}: ${brokerError(err)}`);
  } finally {
    await nc.close().catch(() => undefined);
  }
}

/** Every secret value replaced, in case a broker's message repeats one. */
function hide(text: string, secrets: (string | undefined)[]): string {
  let out = text;
  for (const s of secrets) if (s && s.length >= 3) out = out.split(s).join('***');
  return out;
}

export async function testBroker(
  integration: BusIntegration & { is_active: boolean },
  net: NetPolicy,
): Promise<BrokerTestResult> {
  const spec = consumerSpec(integration);
  if (!spec) throw new Error(`platform ${integration.platform} is not a message bus`);
  const out = facts(spec.platform, spec.source);
  const secrets = spec.platform === 'rabbitmq' ? [spec.password] : [spec.password, spec.token];
  try {
    const detail = spec.platform === 'rabbitmq' ? await testRabbit(spec, net, out) : await testNats(spec, net, out);
    const note = integration.is_active ? '' : '; the integration is inactive: nothing is consumed';
    return { ok: true, detail: hide(detail + note, secrets), errorKind: null, broker: out };
  } catch (err) {
    const e = err instanceof ProbeError ? err : new ProbeError('unreachable', brokerError(err));
    return { ok: false, detail: hide(`${e.kind}: ${e.message}`, secrets), errorKind: e.kind, broker: out };
  }
}
