// A NATS JetStream durable pull consumer with explicit acknowledgements (created when missing;
// one that exists must have explicit ack). Messages are held until their batch is accepted,
// then each accepted one is acked and those not accepted are nak'ed (redelivered after a
// second). A message that cannot be an event is terminated (term, with the reason) and
// counted. Pulling stops while the window of held messages is full. A connection lost with
// messages held: JetStream redelivers them after ack_wait (duplicates, never a loss).
import { AckPolicy, jetstream, jetstreamManager, JetStreamApiCodes, type JsMsg } from '@nats-io/jetstream';
import { nanos } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import type { NatsSpec } from './config.js';
import { brokerError, consumerBatcher, newCounters, type ConsumerDeps, type RunningConsumer } from './consumer.js';
import { decodeMessage } from './decode.js';

const NAK_DELAY_MS = 1000;

/** `+TERM <reason>` is understood from nats-server 2.10.4; an older server leaves such a message unacknowledged. */
export function termTakesReason(version: string | undefined): boolean {
  const [major = 0, minor = 0, patch = 0] = (version ?? '').split('.').map((p) => parseInt(p, 10) || 0);
  return major > 2 || (major === 2 && (minor > 10 || (minor === 10 && patch >= 4)));
}
const ACK_WAIT_S = 30;

/** Each server as host:port with its host checked by the SSRF guard (names resolved to an allowed address). */
export async function checkedServers(spec: NatsSpec, deps: Pick<ConsumerDeps, 'net'>): Promise<string[]> {
  const out: string[] = [];
  for (const server of spec.servers) {
    const scheme = /^(nats|tls):\/\//.exec(server)?.[0] ?? '';
    const rest = server.slice(scheme.length);
    const m = /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(rest);
    if (!m) throw new Error(`"${server}" is not host:port`);
    const host = m[1]!.startsWith('[') ? m[1]!.slice(1, -1) : m[1]!;
    const { address } = await deps.net.resolve(host);
    // TLS keeps the name (the certificate is checked against it); the address was checked above.
    const at = scheme === 'tls://' ? m[1]! : address.includes(':') ? `[${address}]` : address;
    out.push(`${scheme}${at}:${m[2] ?? '4222'}`);
  }
  return out;
}

export async function startNatsConsumer(spec: NatsSpec, deps: ConsumerDeps): Promise<RunningConsumer> {
  const counters = newCounters();
  const target = { integrationId: spec.integrationId, organizationId: spec.organizationId, platform: 'nats' };
  const servers = await checkedServers(spec, deps);
  let failure: string | undefined;
  const nc = await connect({
    servers,
    name: `weir integration ${spec.integrationId}`,
    ...(spec.user ? { user: spec.user, pass: spec.password ?? '' } : {}),
    ...(spec.token ? { token: spec.token } : {}),
    maxReconnectAttempts: -1,
  }).catch((err: unknown) => {
    throw new Error(`cannot connect to ${spec.servers.join(', ')}: ${brokerError(err)}`);
  });
  let closing = false;
  void nc.closed().then((err) => {
    if (!closing) failure ??= err ? `connection closed: ${brokerError(err)}` : 'the connection to NATS closed';
  });
  let consumer;
  try {
    const jsm = await jetstreamManager(nc);
    let info = await jsm.consumers.info(spec.jsStream, spec.consumer).catch((err: unknown) => {
      if ((err as { code?: number }).code === JetStreamApiCodes.ConsumerNotFound) return undefined;
      throw err;
    });
    info ??= await jsm.consumers.add(spec.jsStream, {
      durable_name: spec.consumer,
      ack_policy: AckPolicy.Explicit,
      ack_wait: nanos(ACK_WAIT_S * 1000),
      max_ack_pending: spec.window,
      ...(spec.subject ? { filter_subject: spec.subject } : {}),
    });
    if (info.config.ack_policy !== AckPolicy.Explicit)
      throw new Error(`consumer "${spec.consumer}" has ack policy ${info.config.ack_policy}; Weir needs explicit`);
    if (info.config.deliver_subject)
      throw new Error(`consumer "${spec.consumer}" is a push consumer; Weir needs a pull consumer`);
    consumer = await jetstream(nc).consumers.get(spec.jsStream, spec.consumer);
  } catch (err) {
    await nc.close().catch(() => undefined);
    throw new Error(`stream "${spec.jsStream}", consumer "${spec.consumer}": ${brokerError(err)}`);
  }
  const withReason = termTakesReason(nc.info?.version);
  const batcher = consumerBatcher<JsMsg>(deps, target, spec, counters, (messages, accepted) => {
    for (let i = 0; i < messages.length; i++) {
      if (i < accepted) messages[i]!.ack();
      else messages[i]!.nak(NAK_DELAY_MS);
    }
  });
  const messages = await consumer.consume({ max_messages: spec.window, abort_on_missing_resource: true });
  const loop = (async () => {
    for await (const m of messages) {
      counters.received++;
      counters.last_message_ms = Date.now();
      const decoded = decodeMessage(Buffer.from(m.data), spec.format, spec.stream, deps.maxDepth);
      if ('reason' in decoded) {
        m.term(withReason ? decoded.reason : undefined);
        counters.rejected++;
        counters.last_rejection = decoded.reason;
        deps.onRejected(decoded.reason);
      } else batcher.add(m, decoded.events);
      await batcher.room();
    }
  })().catch((err: unknown) => {
    failure ??= `consumer stopped: ${brokerError(err)}`;
  });
  void loop.then(() => {
    if (!closing) failure ??= 'the consumer stopped (its stream or consumer was deleted?)';
  });
  return {
    counters,
    failure: () => failure,
    async close() {
      closing = true;
      await messages.close().catch(() => undefined);
      await loop;
      await batcher.close();
      // The acks are sent before the connection closes.
      await nc.flush().catch(() => undefined);
      await nc.close().catch(() => undefined);
    },
  };
}
