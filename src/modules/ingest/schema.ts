import { Type } from 'typebox';
import { PUSH_FORMAT_CHOICES, STREAM_NAME_PATTERN, STREAM_NAME_RULE } from '../../pipeline/sources/push.js';
import { Timestamp } from '../../platform/http/schemas.js';

const Id = () => Type.Integer({ minimum: 1, maximum: 2_147_483_647 });
const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()]);

export const IntegrationParams = Type.Object({ integration_id: Id() });

export const StreamParams = Type.Object({
  stream: Type.String({
    pattern: STREAM_NAME_PATTERN,
    errorMessage: STREAM_NAME_RULE,
    description: 'Stream name: letters, digits, `_`, `.`, `-`; up to 64 characters; not starting with `_`, `.` or `-`',
  }),
});

export const PushQuery = Type.Object(
  {
    format: Type.Optional(
      Type.Union(
        PUSH_FORMAT_CHOICES.map((f) => Type.Literal(f)),
        {
          description:
            'auto (default): one JSON document when the body is one, else NDJSON; json: the body must be one JSON document ' +
            '(object or array, 400 otherwise); ndjson: every non-blank line is one event, even when the body would read as one document',
        },
      ),
    ),
  },
  { description: 'Other parameters are ignored and named in ignored_parameters; a token in the URL is refused (422)' },
);

export const CreatedToken = Type.Object({
  token: Type.String({ description: 'The ingestion token (svcik_...). Shown only here: store it now' }),
  token_prefix: Type.String({ description: 'First characters of the token, to recognise it later' }),
  integration_id: Type.Integer(),
  created_at: Timestamp(),
  ingest_url: Type.String({ description: 'Where to push, relative to this server: replace {stream}' }),
});

const StreamStats = Type.Object({
  stream: Type.String(),
  events_in: Type.Integer(),
  bytes_in: Type.Integer(),
  last_event_at: Nullable(Timestamp()),
});

const SyslogListener = Type.Object({
  protocol: Type.String({ description: 'udp, tcp, tls or relp' }),
  port: Type.Integer(),
  process: Type.String({ description: 'The process running it (hostname:pid)' }),
  state: Type.String({
    description: 'listening; error (see error: a port not allowed or in use, a missing certificate...); stopped',
  }),
  error: Nullable(Type.String()),
  received: Type.Integer({ description: 'Messages received since the listener started' }),
  accepted: Type.Integer({ description: 'Messages durably accepted (queued for normalization)' }),
  dropped: Type.Integer({ description: 'UDP datagrams dropped because the pipeline was saturated (UDP cannot wait)' }),
  dropped_kernel: Type.Integer({
    description:
      'UDP datagrams the kernel dropped before Weir read them (the socket receive buffer was full; not in received). Raise WEIR_SYSLOG_UDP_RECEIVE_BUFFER and net.core.rmem_max',
  }),
  receive_buffer_bytes: Nullable(
    Type.Integer({ description: 'UDP: the socket receive buffer the kernel granted (null for TCP, TLS, RELP)' }),
  ),
  refused: Type.Integer({ description: 'Messages over 1 MiB and broken frames (their connection is closed)' }),
  connections: Type.Integer({ description: 'Open connections (TCP, TLS, RELP)' }),
  last_message_at: Nullable(Timestamp({ description: 'When the listener last received a message; null: none yet' })),
  started_at: Timestamp(),
  updated_at: Timestamp({ description: 'Written every few seconds by the process' }),
});

const BusConsumer = Type.Object({
  process: Type.String({ description: 'hostname:pid of the worker running the consumer' }),
  platform: Type.String({ description: 'rabbitmq or nats' }),
  source: Type.String({ description: 'The RabbitMQ queue, or the JetStream stream/consumer' }),
  state: Type.Union([Type.Literal('consuming'), Type.Literal('error'), Type.Literal('stopped')]),
  error: Nullable(Type.String({ description: 'Why it cannot consume (connection refused, queue not found…)' })),
  received: Type.Integer({
    description: 'Messages delivered by the broker since the process started (redeliveries included)',
  }),
  accepted: Type.Integer({ description: 'Messages whose events were durably accepted, then acknowledged' }),
  rejected: Type.Integer({
    description:
      'Messages that are not events (invalid JSON…): RabbitMQ rejects them without requeue (to the dead-letter exchange, if any), NATS terminates them',
  }),
  released: Type.Integer({
    description: 'Messages given back to the broker to redeliver: their events could not be accepted',
  }),
  last_rejection: Nullable(
    Type.String({ description: 'Why the last rejected message was rejected (never its content)' }),
  ),
  last_message_at: Nullable(Timestamp({ description: 'When the consumer last received a message; null: none yet' })),
  started_at: Timestamp(),
  updated_at: Timestamp({ description: 'Written every few seconds by the process' }),
});

export const IngestStatus = Type.Object({
  integration_id: Type.Integer(),
  organization_id: Type.Integer(),
  platform: Type.String(),
  is_active: Type.Boolean({ description: 'Pushes to an inactive integration get 403' }),
  token: Type.Object({
    configured: Type.Boolean(),
    token_prefix: Nullable(Type.String()),
    created_at: Nullable(Timestamp()),
    last_used_at: Nullable(
      Timestamp({ description: 'Written in batches: may lag real use by up to 30 s in other processes' }),
    ),
  }),
  ingest_url: Type.String(),
  stats: Type.Object(
    {
      days: Type.Integer({ description: 'Length of the window in UTC days, today included' }),
      since: Type.String({ format: 'date', description: 'First UTC day of the window' }),
      events_in: Type.Integer(),
      bytes_in: Type.Integer(),
      last_event_at: Nullable(Timestamp()),
      streams: Type.Array(StreamStats, { description: 'The same counters per stream, by name' }),
    },
    { description: 'Events received and processed by the pipeline (counted by the workers), summed over the window' },
  ),
  syslog: Type.Optional(
    Type.Object(
      {
        listeners: Type.Array(SyslogListener, {
          description: 'One per listener and process, as reported in the last 5 minutes',
        }),
      },
      { description: 'Integrations of the syslog platform only: the listeners their config declares' },
    ),
  ),
  bus: Type.Optional(
    Type.Object(
      {
        consumers: Type.Array(BusConsumer, {
          description: 'One per worker process consuming, as reported in the last 5 minutes',
        }),
      },
      { description: 'Integrations of the rabbitmq and nats platforms only: their consumers' },
    ),
  ),
});

const LineError = Type.Object({
  line: Type.Integer({
    description: 'NDJSON: the 1-based line; JSON array: the 1-based element index; single object: 1',
  }),
  reason: Type.String({ description: 'Why the event was not accepted (never echoes the content)' }),
});

const ErrorsFields = {
  errors: Type.Array(LineError, { description: 'At most 100 entries, in line order' }),
  errors_omitted: Type.Integer({ description: 'Rejected lines not listed in errors' }),
};

export const PushResult = Type.Object({
  accepted: Type.Integer({ description: 'Events durably accepted (enqueued for normalization)' }),
  rejected: Type.Integer(),
  ...ErrorsFields,
  batch_ids: Type.Array(Type.String(), { description: 'Ids of the queue batches holding the accepted events' }),
  ignored_parameters: Type.Optional(
    Type.Array(Type.String(), {
      description: 'Query parameters of the push that mean nothing here and were ignored (absent when none)',
    }),
  ),
});

export const PushBody = Type.Unknown({
  description:
    'Events as one JSON object, a JSON array of objects, or NDJSON (one object per line). The format is decided from the ' +
    'content, not from Content-Type: a body that is one JSON document (indented or not) is read as such, anything else as ' +
    'NDJSON (the format query parameter can insist on one). Content-Encoding: gzip is accepted.',
});
