// Destination type `syslog`: RFC 5424 messages over TCP (RFC 6587), TLS (RFC 5425) or UDP
// (RFC 5426), one message per OCSF event. Syslog has no acknowledgement: over TCP/TLS a
// batch counts delivered once the kernel took every byte; an error before that resends it.
import { hostname as osHostname } from 'node:os';
import { Type } from 'typebox';
import { credentialString, credentialStrings } from '../../../core/credentials.js';
import { TlsConfigFields, timedTest } from '../http-common.js';
import { DeliveryError, hostTarget, type Sink, type SinkContext, type SinkType } from '../types.js';
import {
  encodeBatch,
  FACILITIES,
  facilityNumber,
  messageHeader,
  SD_ID_PATTERN,
  SD_ID_RULE,
  sdIdProblem,
  type Framing,
  type MessageHeader,
} from './format.js';
import { createDatagramTransport, createStreamTransport, type Transport } from './transport.js';

/** Largest UDP payload over IPv4 (65535 − IP and UDP headers). */
const UDP_MAX = 65_507;
const PRINTABLE = '^[!-~]+$';
const PRINTABLE_RULE = { pattern: 'may hold only printable ASCII characters, without spaces' };

export const SyslogConfigSchema = Type.Object(
  {
    host: Type.String({
      minLength: 1,
      maxLength: 255,
      pattern: '^[^\\s/]+$',
      errorMessage: { pattern: 'must be a host name or an IP address, without spaces or "/"' },
      description: 'Host name or IP address of the syslog receiver',
    }),
    port: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 65_535,
        description: 'Receiver port (default 514 for tcp and udp, 6514 for tls)',
      }),
    ),
    protocol: Type.Union([Type.Literal('tcp'), Type.Literal('tls'), Type.Literal('udp')], {
      default: 'tcp',
      description:
        'tcp: RFC 6587 stream; tls: RFC 5425 (TCP with TLS); udp: RFC 5426, one datagram per event, no delivery guarantee at all (a lost datagram is not noticed)',
    }),
    framing: Type.Union([Type.Literal('octet_counting'), Type.Literal('non_transparent')], {
      default: 'octet_counting',
      description:
        'Stream framing (tcp, tls): octet_counting = "<length> <message>" (RFC 6587 3.4.1, required by RFC 5425); non_transparent = one message per line ending in LF (older receivers). Ignored for udp.',
    }),
    facility: Type.Union(
      [Type.Integer({ minimum: 0, maximum: 23 }), Type.Union(Object.keys(FACILITIES).map((f) => Type.Literal(f)))],
      {
        default: 'local0',
        description:
          'Syslog facility, by name (local0…local7, auth, …) or number 0-23 (local0 = 16). PRI = facility × 8 + severity; severity comes from the OCSF severity_id: 1 Informational→6, 2 Low→5, 3 Medium→4, 4 High→3, 5 Critical→2, 6 Fatal→0, 0 Unknown / 99 Other / absent→6.',
      },
    ),
    app_name: Type.String({
      default: 'weir',
      minLength: 1,
      maxLength: 48,
      pattern: PRINTABLE,
      errorMessage: PRINTABLE_RULE,
      description: 'APP-NAME of every message (printable ASCII, no spaces)',
    }),
    hostname: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 255,
        pattern: PRINTABLE,
        errorMessage: PRINTABLE_RULE,
        description: 'HOSTNAME of every message (default: the name of the Weir host sending it)',
      }),
    ),
    msg_id: Type.String({
      default: 'ocsf',
      minLength: 1,
      maxLength: 32,
      pattern: PRINTABLE,
      errorMessage: PRINTABLE_RULE,
      description: 'MSGID of every message',
    }),
    structured_data_id: Type.Optional(
      Type.String({
        // The pattern bounds the length too (32): one message for every wrong id.
        pattern: SD_ID_PATTERN,
        errorMessage: { pattern: SD_ID_RULE },
        description:
          'SD-ID of the structured data element carrying event_id, org and class_uid: name@<your private enterprise number> (RFC 5424 section 6.3.2; IANA assigns enterprise numbers for free). Without it messages carry no structured data ("-") and the OCSF JSON in MSG is the whole content.',
      }),
    ),
    max_message_bytes: Type.Optional(
      Type.Integer({
        minimum: 480,
        maximum: 16 * 1_048_576,
        description:
          "Largest message sent, header included (default 65000 for udp, 1 MiB for tcp and tls; udp never above 65507). A longer event is dead-lettered, never truncated. Match the receiver's limits (rsyslog: global maxMessageSize, 8 KiB by default, and imtcp maxFrameSize, 200000 by default).",
      }),
    ),
    ...TlsConfigFields,
    servername: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 255,
        description:
          'tls: the name the server certificate must carry, also sent as SNI (default: host, when it is a name)',
      }),
    ),
  },
  { additionalProperties: false },
);

export const SyslogCredentialSchema = Type.Object(
  {
    client_cert: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 65_536,
        description: 'tls: PEM client certificate (chain) for mutual TLS, with client_key',
      }),
    ),
    client_key: Type.Optional(
      Type.String({ minLength: 1, maxLength: 65_536, description: 'tls: PEM private key of client_cert' }),
    ),
  },
  { additionalProperties: false },
);

interface Settings {
  protocol: 'tcp' | 'tls' | 'udp';
  framing: Framing | 'datagram';
  maxBytes: number;
  header: MessageHeader;
  transport: Transport;
}

function str(value: unknown, fallback: string): string {
  return typeof value === 'string' && value !== '' ? value : fallback;
}

function settingsOf(ctx: SinkContext): Settings {
  const c = ctx.config;
  if (typeof c.host !== 'string' || c.host === '') throw new DeliveryError('config', 'host is required');
  const protocol = c.protocol === 'tls' || c.protocol === 'udp' ? c.protocol : 'tcp';
  const port = typeof c.port === 'number' ? c.port : protocol === 'tls' ? 6514 : 514;
  const configured =
    typeof c.max_message_bytes === 'number' ? c.max_message_bytes : protocol === 'udp' ? 65_000 : 1_048_576;
  const cert = credentialString(ctx.credential, 'client_cert');
  const key = credentialString(ctx.credential, 'client_key');
  if (Boolean(cert) !== Boolean(key)) throw new DeliveryError('config', 'client_cert and client_key go together');
  const sdId = typeof c.structured_data_id === 'string' && c.structured_data_id ? c.structured_data_id : undefined;
  const sdProblem = sdId === undefined ? undefined : sdIdProblem(sdId);
  if (sdProblem) throw new DeliveryError('config', sdProblem);
  const endpoint = {
    host: c.host,
    port,
    protocol,
    tls: {
      ca: typeof c.tls_ca === 'string' && c.tls_ca ? c.tls_ca : undefined,
      rejectUnauthorized: c.tls_reject_unauthorized !== false,
      servername: typeof c.servername === 'string' && c.servername ? c.servername : undefined,
      cert,
      key,
    },
  } as const;
  return {
    protocol,
    framing: protocol === 'udp' ? 'datagram' : c.framing === 'non_transparent' ? 'non_transparent' : 'octet_counting',
    maxBytes: protocol === 'udp' ? Math.min(configured, UDP_MAX) : configured,
    header: messageHeader({
      facility: facilityNumber(c.facility),
      hostname: str(c.hostname, osHostname()),
      appName: str(c.app_name, 'weir'),
      procId: String(process.pid),
      msgId: str(c.msg_id, 'ocsf'),
      ...(sdId ? { sdId } : {}),
    }),
    transport:
      protocol === 'udp'
        ? createDatagramTransport(endpoint, ctx.net, ctx.redact)
        : createStreamTransport(endpoint, ctx.net, ctx.redact),
  };
}

export function createSyslogSink(ctx: SinkContext): Sink {
  // Built on first use so a bad config is a DeliveryError('config') on send/test, not a throw here.
  let settings: Settings | undefined;
  const get = () => (settings ??= settingsOf(ctx));

  return {
    async send(batch, signal) {
      const s = get();
      const { frames, rejected } = encodeBatch(batch, s.header, s.framing, s.maxBytes);
      if (frames.length > 0) await s.transport.write(frames, signal);
      return rejected.length > 0 ? { rejected } : {};
    },
    test(signal) {
      return timedTest(async () => ({ ok: true, detail: await get().transport.probe(signal) }), signal, ctx.redact);
    },
    async close() {
      await settings?.transport.close();
    },
  };
}

export const syslogSink: SinkType = {
  type: 'syslog',
  title: 'Syslog (RFC 5424)',
  description:
    'One RFC 5424 message per event (MSG = the OCSF JSON; with structured_data_id, a structured data element of that SD-ID with event_id, org and class_uid) over TCP, TLS or UDP. ' +
    'Syslog has no application acknowledgement: over TCP/TLS a batch counts delivered once every byte was handed to the network, and a connection error before that sends the batch again (duplicates possible, never a loss the sink saw); ' +
    'a receiver that dies after accepting the bytes can lose them. Over UDP nothing confirms delivery at all.',
  configSchema: SyslogConfigSchema,
  credentialSchema: SyslogCredentialSchema,
  credentialRequired: false,
  // The client certificate is public; its key is the secret.
  secretValues: (c) => credentialStrings(c, ['client_cert']),
  targets: (config) => hostTarget(config, 'host'),
  create: createSyslogSink,
};
