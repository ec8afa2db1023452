// Destination type `rabbitmq`: each OCSF event is published (JSON, persistent, message id =
// the event id) to an exchange with a routing key over a confirm channel. An event counts as
// delivered only once the broker confirmed it (basic.ack); a nack, or a connection lost
// before the confirm, sends it again (duplicates possible, never a loss the sink saw).
// Messages are published mandatory: one no queue is bound for is returned by the broker and
// retried (delivered to nowhere is not delivered).
import amqp, { type ChannelModel, type ConfirmChannel, type Message } from 'amqplib';
import { Type } from 'typebox';
import { credentialString } from '../../../core/credentials.js';
import { sharedConnection } from '../connection.js';
import { timedTest } from '../http-common.js';
import { DeliveryError, urlTarget, type Sink, type SinkContext, type SinkResult, type SinkType } from '../types.js';

export const RabbitConfigSchema = Type.Object(
  {
    url: Type.String({
      maxLength: 2000,
      pattern: '^amqps?://([^:/@\\s]+@)?[^@\\s]+$',
      errorMessage: { pattern: 'must be amqp://host[:port][/vhost] or amqps://…, without a password (see credential)' },
      description:
        'amqp://host:5672/vhost or amqps://… (TLS); a user name may be in it, the password is the credential',
    }),
    username: Type.Optional(
      Type.String({ minLength: 1, maxLength: 255, description: "User name (default: the URL's)" }),
    ),
    exchange: Type.String({
      default: '',
      maxLength: 255,
      description: 'The exchange to publish to ("" is the default exchange: the routing key is then a queue name)',
    }),
    routing_key: Type.String({ maxLength: 255, description: 'The routing key of every message' }),
  },
  { additionalProperties: false },
);

export const RabbitCredentialSchema = Type.Object(
  { password: Type.Optional(Type.String({ minLength: 1, maxLength: 1000, description: 'Password of the user' })) },
  { additionalProperties: false },
);

interface Connection {
  conn: ChannelModel;
  ch: ConfirmChannel;
  /** Message ids the broker returned (unroutable) since the last send. */
  returned: Set<string>;
}

function connectionError(err: unknown, redact: (s: string) => string): DeliveryError {
  if (err instanceof DeliveryError) return err;
  const message = redact((err as Error)?.message ?? String(err));
  const code = (err as { code?: unknown }).code;
  const auth = /ACCESS_REFUSED|authentication/i.test(message);
  return new DeliveryError(
    auth ? 'auth' : code === 'ECONNREFUSED' || code === 'ECONNRESET' ? 'connection' : 'protocol',
    `RabbitMQ: ${message}`.slice(0, 500),
    { cause: err },
  );
}

export function createRabbitSink(ctx: SinkContext): Sink {
  const c = ctx.config;
  const exchange = typeof c.exchange === 'string' ? c.exchange : '';
  const routingKey = typeof c.routing_key === 'string' ? c.routing_key : '';
  async function open(forget: () => void): Promise<Connection> {
    if (typeof c.url !== 'string') throw new DeliveryError('config', 'url is required');
    const url = new URL(c.url);
    const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
    const { address } = await ctx.net.resolve(host);
    url.hostname = address.includes(':') ? `[${address}]` : address;
    if (typeof c.username === 'string') url.username = encodeURIComponent(c.username);
    const password = credentialString(ctx.credential, 'password');
    if (password) url.password = encodeURIComponent(password);
    const conn = await amqp.connect(url.toString(), {
      servername: host,
      clientProperties: { connection_name: `weir destination ${ctx.destinationId}` },
    });
    conn.on('error', forget);
    conn.on('close', forget);
    const ch = await conn.createConfirmChannel();
    const returned = new Set<string>();
    ch.on('return', (msg: Message) => {
      const id: unknown = msg.properties.messageId;
      if (typeof id === 'string') returned.add(id);
    });
    ch.on('error', forget);
    ch.on('close', forget);
    return { conn, ch, returned };
  }

  const shared = sharedConnection(
    open,
    (err) => connectionError(err, ctx.redact),
    ({ conn }) => conn.close(),
  );
  const connection = shared.get;

  return {
    async send(batch, signal) {
      if (signal.aborted) throw new DeliveryError('timeout', 'delivery aborted');
      const { ch, returned } = await connection();
      returned.clear();
      const confirms = batch.lines.map(
        (line, i) =>
          new Promise<string | undefined>((resolve) => {
            const ok = ch.publish(
              exchange,
              routingKey,
              Buffer.from(line),
              {
                persistent: true,
                mandatory: true,
                contentType: 'application/json',
                messageId: batch.ids[i],
                type: 'ocsf',
              },
              (err: unknown) => resolve(err ? 'the broker did not confirm the message (nack)' : undefined),
            );
            void ok; // the confirm, not the write buffer, says delivered
          }),
      );
      let outcomes: (string | undefined)[];
      try {
        outcomes = await Promise.all(confirms);
      } catch (err) {
        throw connectionError(err, ctx.redact);
      }
      const retry: NonNullable<SinkResult['retry']> = [];
      outcomes.forEach((reason, index) => {
        if (reason) retry.push({ index, reason });
        else if (returned.has(batch.ids[index]!))
          retry.push({ index, reason: `unroutable: no queue is bound to exchange "${exchange}" for "${routingKey}"` });
      });
      if (retry.length === batch.lines.length && outcomes.every((o) => o))
        throw new DeliveryError('connection', 'RabbitMQ: the connection closed before the broker confirmed');
      return retry.length > 0 ? { retry } : {};
    },
    test(signal) {
      return timedTest(
        async () => {
          const { conn, ch } = await connection();
          if (exchange !== '')
            await ch.checkExchange(exchange).catch((err: unknown) => {
              throw connectionError(err, ctx.redact);
            });
          const server = (conn.connection as unknown as { serverProperties?: { version?: unknown } }).serverProperties;
          return {
            ok: true,
            detail: `connected to RabbitMQ${typeof server?.version === 'string' ? ` ${server.version}` : ''}; ${exchange === '' ? 'the default exchange' : `exchange "${exchange}" exists`}`,
          };
        },
        signal,
        ctx.redact,
      );
    },
    close: shared.close,
  };
}

export const rabbitmqSink: SinkType = {
  type: 'rabbitmq',
  title: 'RabbitMQ (AMQP 0-9-1)',
  description:
    'Each OCSF event is published as a persistent JSON message (message id = the event id) to an exchange with a routing key, ' +
    'over a confirm channel: delivered once the broker confirmed it. A message no queue is bound for is returned by the broker and retried; ' +
    'a connection lost before the confirm sends the batch again (duplicates possible, recognizable by message id).',
  configSchema: RabbitConfigSchema,
  credentialSchema: RabbitCredentialSchema,
  credentialRequired: false,
  targets: (config) => urlTarget(config, 'url'),
  create: createRabbitSink,
};
