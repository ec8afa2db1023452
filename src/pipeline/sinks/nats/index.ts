// Destination type `nats`: each OCSF event is published (JSON) to a JetStream subject and
// counts as delivered only once JetStream answered with its PubAck (the event is stored in a
// stream). The Nats-Msg-Id header is the event id, so a batch sent again after a lost answer
// is recognized by JetStream's de-duplication window instead of stored twice.
import { jetstream, jetstreamManager, type JetStreamClient } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { Type } from 'typebox';
import { credentialString } from '../../../core/credentials.js';
import { sharedConnection } from '../connection.js';
import { timedTest } from '../http-common.js';
import {
  DeliveryError,
  type Sink,
  type SinkContext,
  type SinkResult,
  type SinkTarget,
  type SinkType,
} from '../types.js';

const SERVER = '^((nats|tls)://)?(\\[[^\\]\\s]+\\]|[^\\s@/:\\[\\]]+)(:\\d{1,5})?$';

export const NatsConfigSchema = Type.Object(
  {
    servers: Type.Array(
      Type.String({
        maxLength: 500,
        pattern: SERVER,
        errorMessage: { pattern: 'must be host:port, nats://host:port or tls://host:port, without credentials' },
      }),
      { minItems: 1, maxItems: 16, description: 'NATS servers (the client picks one, and reconnects to another)' },
    ),
    subject: Type.String({
      minLength: 1,
      maxLength: 255,
      pattern: '^[^\\s*>]+$',
      errorMessage: { pattern: 'must be a subject without spaces or wildcards' },
      description: 'The subject every event is published to; a JetStream stream must capture it',
    }),
    user: Type.Optional(Type.String({ minLength: 1, maxLength: 255, description: 'User name, with the password' })),
    timeout_ms: Type.Integer({
      default: 5000,
      minimum: 100,
      maximum: 60_000,
      description: 'How long to wait for each PubAck',
    }),
  },
  { additionalProperties: false },
);

export const NatsCredentialSchema = Type.Object(
  {
    password: Type.Optional(Type.String({ minLength: 1, maxLength: 1000, description: 'Password of user' })),
    token: Type.Optional(Type.String({ minLength: 1, maxLength: 1000, description: 'Authentication token' })),
  },
  { additionalProperties: false },
);

function hostOf(server: string): { scheme: string; host: string; port: string } | undefined {
  const m = new RegExp(SERVER).exec(server);
  if (!m) return undefined;
  const raw = m[3]!;
  return {
    scheme: m[1] ?? '',
    host: raw.startsWith('[') ? raw.slice(1, -1) : raw,
    port: m[4]?.slice(1) ?? '4222',
  };
}

function natsTargets(config: Record<string, unknown>): SinkTarget[] {
  const servers = Array.isArray(config.servers) ? config.servers : [];
  return servers.flatMap((s) => {
    const h = typeof s === 'string' ? hostOf(s) : undefined;
    return h ? [{ host: h.host, field: 'servers' }] : [];
  });
}

function natsError(err: unknown, redact: (s: string) => string): DeliveryError {
  if (err instanceof DeliveryError) return err;
  const message = redact((err as Error)?.message ?? String(err)).slice(0, 400);
  const auth = /authori[sz]ation|authentication/i.test(message);
  return new DeliveryError(auth ? 'auth' : /timeout/i.test(message) ? 'timeout' : 'connection', `NATS: ${message}`, {
    cause: err,
  });
}

export function createNatsSink(ctx: SinkContext): Sink {
  const c = ctx.config;
  const subject = typeof c.subject === 'string' ? c.subject : '';
  const timeout = typeof c.timeout_ms === 'number' ? c.timeout_ms : 5000;
  async function open(forget: () => void): Promise<{ nc: NatsConnection; js: JetStreamClient }> {
    const servers: string[] = [];
    for (const s of Array.isArray(c.servers) ? c.servers : []) {
      const h = typeof s === 'string' ? hostOf(s) : undefined;
      if (!h) throw new DeliveryError('config', `server "${String(s)}" is not host:port`);
      const { address } = await ctx.net.resolve(h.host);
      const at = h.scheme === 'tls://' ? h.host : address.includes(':') ? `[${address}]` : address;
      servers.push(`${h.scheme}${at}:${h.port}`);
    }
    if (servers.length === 0) throw new DeliveryError('config', 'servers is required');
    const password = credentialString(ctx.credential, 'password');
    const token = credentialString(ctx.credential, 'token');
    const nc = await connect({
      servers,
      name: `weir destination ${ctx.destinationId}`,
      ...(typeof c.user === 'string' ? { user: c.user, pass: password ?? '' } : {}),
      ...(token ? { token } : {}),
    });
    void nc.closed().then(forget);
    return { nc, js: jetstream(nc, { timeout }) };
  }

  const shared = sharedConnection(
    open,
    (err) => natsError(err, ctx.redact),
    ({ nc }) => nc.close(),
  );
  const connection = shared.get;

  return {
    async send(batch, signal) {
      if (signal.aborted) throw new DeliveryError('timeout', 'delivery aborted');
      const { js } = await connection();
      const outcomes = await Promise.allSettled(
        batch.lines.map((line, i) => js.publish(subject, line, { msgID: batch.ids[i]!, timeout })),
      );
      const retry: NonNullable<SinkResult['retry']> = [];
      outcomes.forEach((o, index) => {
        if (o.status === 'rejected') retry.push({ index, reason: natsError(o.reason, ctx.redact).message });
      });
      if (retry.length > 0 && retry.length === batch.lines.length) {
        const first = outcomes[0] as PromiseRejectedResult;
        throw natsError(first.reason, ctx.redact);
      }
      return retry.length > 0 ? { retry } : {};
    },
    test(signal) {
      return timedTest(
        async () => {
          const { nc } = await connection();
          const jsm = await jetstreamManager(nc, { timeout });
          const stream = await jsm.streams.find(subject).catch(() => undefined);
          if (!stream)
            return {
              ok: false,
              detail: `connected to NATS ${nc.info?.version ?? ''}; no JetStream stream captures subject "${subject}"`,
              error_kind: 'config' as const,
            };
          return {
            ok: true,
            detail: `connected to NATS ${nc.info?.version ?? ''}; subject "${subject}" is captured by stream "${stream}"`,
          };
        },
        signal,
        ctx.redact,
      );
    },
    close: shared.close,
  };
}

export const natsSink: SinkType = {
  type: 'nats',
  title: 'NATS JetStream',
  description:
    'Each OCSF event is published as JSON to a JetStream subject: delivered once JetStream acknowledged storing it (PubAck). ' +
    "The Nats-Msg-Id header is the event id, so a resent event is dropped by the stream's duplicate window rather than stored twice.",
  configSchema: NatsConfigSchema,
  credentialSchema: NatsCredentialSchema,
  credentialRequired: false,
  targets: natsTargets,
  create: createNatsSink,
};
