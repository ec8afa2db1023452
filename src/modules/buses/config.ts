// The message bus platforms: an integration of platform `rabbitmq` consumes one AMQP 0-9-1
// queue, one of platform `nats` one JetStream durable pull consumer; each message becomes one
// or more events of a Weir stream (docs/inputs-message-buses.md). Pure: from the integrations'
// configs (secrets opened) to the consumers to run.
import { createHash } from 'node:crypto';
import { STREAM_NAME_PATTERN } from '../../pipeline/sources/push.js';
import type { PlatformDefinition } from '../../connectors/platform-definition.js';

export const BUS_FORMATS = ['json', 'ndjson', 'text'] as const;
export type BusFormat = (typeof BUS_FORMATS)[number];
export const BUS_PLATFORMS = ['rabbitmq', 'nats'] as const;
export type BusPlatform = (typeof BUS_PLATFORMS)[number];

const FORMAT = {
  enum: [...BUS_FORMATS],
  description:
    'What one message holds: json (one JSON object, or an array of objects: one event each), ndjson (one object per line), ' +
    'text (the whole message is one text event {"message": "<body>"}, read by the mapping\'s parse steps). Default json',
} as const;
const WEIR_STREAM = {
  type: 'string',
  pattern: STREAM_NAME_PATTERN,
  description: 'The Weir stream of the events (default: the queue or JetStream stream name, made a valid stream name)',
} as const;
const BATCH_WAIT = {
  type: 'integer',
  minimum: 0,
  maximum: 5000,
  description: 'How long a batch that is not full waits for more messages before it is accepted, in ms (default 100)',
} as const;

export const RABBITMQ_PLATFORM: PlatformDefinition = {
  name: 'rabbitmq',
  display_name: 'RabbitMQ queue (AMQP 0-9-1)',
  kind: 'push',
  description:
    'Weir consumes a RabbitMQ (AMQP 0-9-1) queue with manual acknowledgements: a message is acknowledged only once its ' +
    'events are durably accepted; when they cannot be, it is requeued. A message that is not an event (invalid JSON) is ' +
    "rejected without requeue (the queue's dead-letter exchange receives it, if it has one) and counted with the reason. " +
    'Consumers run in the worker role (weir all, weir worker); several workers share the queue.',
  config_schema: {
    type: 'object',
    properties: {
      description: { type: 'string', maxLength: 1000, description: 'Free text about the source' },
      url: {
        type: 'string',
        maxLength: 2000,
        pattern: '^amqps?://([^:/@\\s]+@)?[^@\\s]+$',
        description:
          'amqp://host:5672/vhost or amqps://… (TLS); a user name may be in it, the password goes in `password`, never in the URL',
      },
      username: { type: 'string', minLength: 1, maxLength: 255, description: "User name (default: the URL's)" },
      password: {
        type: 'string',
        maxLength: 1000,
        writeOnly: true,
        description: 'Password; stored encrypted, never returned',
      },
      queue: { type: 'string', minLength: 1, maxLength: 255, description: 'The queue to consume' },
      declare: {
        type: 'boolean',
        description:
          'Declare the queue (durable) if it does not exist, with dead_letter_exchange as its x-dead-letter-exchange (default false: the queue must exist)',
      },
      dead_letter_exchange: {
        type: 'string',
        maxLength: 255,
        description: 'With declare: the exchange rejected messages go to (an existing queue keeps its own arguments)',
      },
      prefetch: {
        type: 'integer',
        minimum: 1,
        maximum: 10000,
        description: 'Messages delivered and not yet acknowledged at most (basic.qos; default 500)',
      },
      stream: WEIR_STREAM,
      format: FORMAT,
      batch_wait_ms: BATCH_WAIT,
    },
    required: ['url', 'queue'],
    additionalProperties: false,
  },
};

export const NATS_PLATFORM: PlatformDefinition = {
  name: 'nats',
  display_name: 'NATS JetStream consumer',
  kind: 'push',
  description:
    'Weir reads a NATS JetStream stream through a durable pull consumer with explicit acknowledgements (created when ' +
    'missing): a message is acknowledged only once its events are durably accepted, and redelivered when they cannot ' +
    'be. A message that is not an event is terminated (term) with the reason, which is counted. Consumers run in the ' +
    'worker role (weir all, weir worker); several workers share the durable consumer.',
  config_schema: {
    type: 'object',
    properties: {
      description: { type: 'string', maxLength: 1000, description: 'Free text about the source' },
      servers: {
        type: 'array',
        minItems: 1,
        maxItems: 16,
        items: {
          type: 'string',
          maxLength: 500,
          pattern: '^((nats|tls)://)?[^\\s@/]+$',
          description: 'host:port, nats://host:port or tls://host:port (no credentials: see user, password, token)',
        },
      },
      stream: {
        type: 'string',
        minLength: 1,
        maxLength: 255,
        pattern: '^[^\\s.*>]+$',
        description: 'The JetStream stream',
      },
      consumer: {
        type: 'string',
        minLength: 1,
        maxLength: 255,
        pattern: '^[^\\s.*>]+$',
        description: 'The durable consumer name (created as a pull consumer with explicit ack when missing)',
      },
      subject: {
        type: 'string',
        maxLength: 255,
        description: "Filter subject of a consumer Weir creates (default: all of the stream's subjects)",
      },
      user: { type: 'string', maxLength: 255, description: 'User name, with password' },
      password: { type: 'string', maxLength: 1000, writeOnly: true, description: 'Stored encrypted, never returned' },
      token: {
        type: 'string',
        maxLength: 1000,
        writeOnly: true,
        description: 'Authentication token; stored encrypted',
      },
      weir_stream: WEIR_STREAM,
      format: FORMAT,
      max_messages: {
        type: 'integer',
        minimum: 1,
        maximum: 10000,
        description: 'Messages pulled and not yet acknowledged at most (default 500)',
      },
      batch_wait_ms: BATCH_WAIT,
    },
    required: ['servers', 'stream', 'consumer'],
    additionalProperties: false,
  },
};

/** A name made a valid Weir stream name: other characters become `_`, cut to 64. */
export function streamNameOf(name: string, fallback: string): string {
  const s = name.replace(/[^A-Za-z0-9_.-]/g, '_').replace(/^[^A-Za-z0-9]+/, '');
  return s === '' ? fallback : s.slice(0, 64);
}

interface Common {
  integrationId: number;
  organizationId: number;
  /** The Weir stream. */
  stream: string;
  format: BusFormat;
  /** Messages held unacknowledged at most. */
  window: number;
  batchWaitMs: number;
  /** What the consumer reads, as the state shows it (queue, or stream/consumer). */
  source: string;
  /** Changes when anything the consumer runs with changes (it is then restarted). */
  fingerprint: string;
}

export interface RabbitSpec extends Common {
  platform: 'rabbitmq';
  url: string;
  username?: string;
  password?: string;
  queue: string;
  declare: boolean;
  deadLetterExchange?: string;
}

export interface NatsSpec extends Common {
  platform: 'nats';
  servers: string[];
  jsStream: string;
  consumer: string;
  subject?: string;
  user?: string;
  password?: string;
  token?: string;
}

export type ConsumerSpec = RabbitSpec | NatsSpec;

export interface BusIntegration {
  id: number;
  organization_id: number;
  platform: string;
  /** The config with its secrets opened. */
  config: Record<string, unknown>;
}

const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);
const int = (v: unknown, fallback: number): number => (typeof v === 'number' ? v : fallback);

/** The consumer an integration runs, or undefined when its platform is not a bus. */
export function consumerSpec(i: BusIntegration): ConsumerSpec | undefined {
  const c = i.config;
  const format: BusFormat = BUS_FORMATS.includes(c.format as BusFormat) ? (c.format as BusFormat) : 'json';
  const common = {
    integrationId: i.id,
    organizationId: i.organization_id,
    format,
    window: 0,
    batchWaitMs: int(c.batch_wait_ms, 100),
  };
  const fingerprint = createHash('sha256')
    .update(JSON.stringify([i.organization_id, c]))
    .digest('hex');
  if (i.platform === 'rabbitmq') {
    const queue = String(c.queue);
    return {
      ...common,
      platform: 'rabbitmq',
      stream: str(c.stream) ?? streamNameOf(queue, 'rabbitmq'),
      window: int(c.prefetch, 500),
      source: queue,
      fingerprint,
      url: String(c.url),
      ...(str(c.username) ? { username: str(c.username) } : {}),
      ...(str(c.password) ? { password: str(c.password) } : {}),
      queue,
      declare: c.declare === true,
      ...(str(c.dead_letter_exchange) ? { deadLetterExchange: str(c.dead_letter_exchange) } : {}),
    };
  }
  if (i.platform === 'nats') {
    const jsStream = String(c.stream);
    const consumer = String(c.consumer);
    return {
      ...common,
      platform: 'nats',
      stream: str(c.weir_stream) ?? streamNameOf(jsStream, 'nats'),
      window: int(c.max_messages, 500),
      source: `${jsStream}/${consumer}`,
      fingerprint,
      servers: Array.isArray(c.servers) ? c.servers.map(String) : [],
      jsStream,
      consumer,
      ...(str(c.subject) ? { subject: str(c.subject) } : {}),
      ...(str(c.user) ? { user: str(c.user) } : {}),
      ...(str(c.password) ? { password: str(c.password) } : {}),
      ...(str(c.token) ? { token: str(c.token) } : {}),
    };
  }
  return undefined;
}
