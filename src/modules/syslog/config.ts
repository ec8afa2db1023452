// The syslog platform: an integration of platform `syslog` declares the listeners Weir opens
// for it (protocol and port), the stream its messages go to, and routing rules that send
// some to other streams by sender host or app-name (the BSD tag's program). Pure: from the
// integrations' configs (secrets opened) to the listeners to run, and problems to show.
import { createHash } from 'node:crypto';
import { RE2JS } from 're2js';
import { parseSyslog } from '../../pipeline/parse/syslog.js';
import { STREAM_NAME_PATTERN } from '../../pipeline/sources/push.js';
import type { PlatformDefinition } from '../../connectors/platform-definition.js';

export const SYSLOG_PROTOCOLS = ['udp', 'tcp', 'tls', 'relp'] as const;
export type SyslogProtocol = (typeof SYSLOG_PROTOCOLS)[number];
export const DEFAULT_SYSLOG_STREAM = 'syslog';

const GLOB = {
  type: 'string',
  minLength: 1,
  maxLength: 255,
  description: 'A pattern: * any characters, ? one; case-insensitive',
} as const;

export const SYSLOG_PLATFORM: PlatformDefinition = {
  name: 'syslog',
  display_name: 'Syslog receiver',
  kind: 'push',
  description:
    'Syslog senders (firewalls, IDS sensors, hosts, rsyslog and syslog-ng relays) send RFC 5424 or RFC 3164 messages to the ' +
    'listeners this integration declares: UDP, TCP (octet-counted or LF-ended frames), TLS, or RELP (rsyslog omrelp, ' +
    'acknowledged once durably queued). Each message is one text event {"message", "peer_ip"} of the stream its route ' +
    'names (default "syslog"), read by the stream mapping\'s parse steps. Ports must be allowed by WEIR_SYSLOG_PORTS.',
  config_schema: {
    type: 'object',
    properties: {
      description: { type: 'string', maxLength: 1000, description: 'Free text about the source' },
      listeners: {
        type: 'array',
        minItems: 1,
        maxItems: 8,
        description: 'The listeners opened for this integration (in the syslog role, or weir all)',
        items: {
          type: 'object',
          properties: {
            protocol: {
              enum: [...SYSLOG_PROTOCOLS],
              description: 'udp, tcp, tls (needs tls.certificate and tls.key) or relp',
            },
            port: { type: 'integer', minimum: 1, maximum: 65535 },
          },
          required: ['protocol', 'port'],
          additionalProperties: false,
        },
      },
      stream: {
        type: 'string',
        pattern: STREAM_NAME_PATTERN,
        description: `The stream of messages no route names (default "${DEFAULT_SYSLOG_STREAM}")`,
      },
      routes: {
        type: 'array',
        maxItems: 100,
        description: 'The first route whose patterns all match a message names its stream',
        items: {
          type: 'object',
          properties: {
            stream: { type: 'string', pattern: STREAM_NAME_PATTERN },
            host: { ...GLOB, description: "The sender's HOSTNAME in the header (else its address)" },
            app_name: { ...GLOB, description: "RFC 5424 APP-NAME, or the RFC 3164 tag's program" },
          },
          required: ['stream'],
          additionalProperties: false,
        },
      },
      tls: {
        type: 'object',
        properties: {
          certificate: { type: 'string', maxLength: 65536, description: 'PEM server certificate (chain)' },
          key: {
            type: 'string',
            maxLength: 65536,
            writeOnly: true,
            description: 'PEM private key; stored encrypted, never returned',
          },
          client_ca: {
            type: 'string',
            maxLength: 65536,
            description: 'PEM CA: when set, senders must present a certificate it signed',
          },
        },
        additionalProperties: false,
      },
    },
    required: ['listeners'],
    additionalProperties: false,
    allOf: [
      {
        if: {
          properties: {
            listeners: { contains: { properties: { protocol: { const: 'tls' } }, required: ['protocol'] } },
          },
          required: ['listeners'],
        },
        then: { required: ['tls'], properties: { tls: { required: ['certificate', 'key'] } } },
      },
    ],
  },
};

export interface ListenerSpec {
  /** `protocol:port`: one listener per key in a process. */
  key: string;
  integrationId: number;
  organizationId: number;
  protocol: SyslogProtocol;
  port: number;
  tls?: { cert: string; key: string; ca?: string };
  /** The stream a message goes to. */
  route: (message: string, peerIp: string) => string;
  /** Changes when anything the listener runs with changes (it is then restarted). */
  fingerprint: string;
}

export interface ListenerProblem {
  integrationId: number;
  protocol: string;
  port: number;
  error: string;
}

export interface SyslogIntegration {
  id: number;
  organization_id: number;
  /** The config with its secrets opened. */
  config: Record<string, unknown>;
}

function glob(pattern: string): RE2JS {
  const re = pattern
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.');
  return RE2JS.compile(`^${re}$`, RE2JS.CASE_INSENSITIVE);
}

interface Route {
  stream: string;
  host?: RE2JS;
  app?: RE2JS;
}

function router(config: Record<string, unknown>): (message: string, peerIp: string) => string {
  const fallback = typeof config.stream === 'string' ? config.stream : DEFAULT_SYSLOG_STREAM;
  const routes: Route[] = (Array.isArray(config.routes) ? (config.routes as Record<string, unknown>[]) : []).map(
    (r) => ({
      stream: String(r.stream),
      ...(typeof r.host === 'string' ? { host: glob(r.host) } : {}),
      ...(typeof r.app_name === 'string' ? { app: glob(r.app_name) } : {}),
    }),
  );
  if (routes.length === 0) return () => fallback;
  return (message, peerIp) => {
    let host = peerIp;
    let app = '';
    try {
      const h = parseSyslog(message);
      host = h.hostname ?? peerIp;
      app = h.app_name ?? '';
    } catch {
      // A header that does not parse routes by the sender's address alone.
    }
    for (const r of routes) {
      if (r.host && !r.host.matches(host)) continue;
      if (r.app && !r.app.matches(app)) continue;
      return r.stream;
    }
    return fallback;
  };
}

/** Parses `514,5140-5199` (WEIR_SYSLOG_PORTS) into a membership test. */
export function portRanges(text: string): (port: number) => boolean {
  const ranges = text
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p !== '')
    .map((p) => {
      const m = /^(\d{1,5})(?:-(\d{1,5}))?$/.exec(p);
      if (!m) throw new Error(`"${p}" is not a port or a range of ports`);
      const lo = Number(m[1]);
      const hi = Number(m[2] ?? m[1]);
      if (lo < 1 || hi > 65535 || lo > hi) throw new Error(`"${p}" is not a range of ports from 1 to 65535`);
      return [lo, hi] as const;
    });
  return (port) => ranges.some(([lo, hi]) => port >= lo && port <= hi);
}

/**
 * The listeners to run. A port claimed by two integrations goes to the lower id (the other is
 * a problem to show); a port WEIR_SYSLOG_PORTS does not allow is a problem too.
 */
export function listenerSpecs(
  integrations: readonly SyslogIntegration[],
  allowed: (port: number) => boolean,
): { specs: ListenerSpec[]; problems: ListenerProblem[] } {
  const specs = new Map<string, ListenerSpec>();
  const problems: ListenerProblem[] = [];
  for (const i of [...integrations].sort((a, b) => a.id - b.id)) {
    const listeners = Array.isArray(i.config.listeners)
      ? (i.config.listeners as { protocol: SyslogProtocol; port: number }[])
      : [];
    let route: ListenerSpec['route'];
    try {
      route = router(i.config);
    } catch (err) {
      for (const l of listeners)
        problems.push({
          integrationId: i.id,
          protocol: l.protocol,
          port: l.port,
          error: `invalid route pattern: ${(err as Error).message}`,
        });
      continue;
    }
    const tlsConfig = (i.config.tls ?? {}) as { certificate?: string; key?: string; client_ca?: string };
    for (const l of listeners) {
      // UDP and the stream protocols are separate port spaces; TCP, TLS and RELP share one.
      const key = `${l.protocol === 'udp' ? 'udp' : 'tcp'}:${l.port}`;
      const problem = (error: string) =>
        problems.push({ integrationId: i.id, protocol: l.protocol, port: l.port, error });
      if (!allowed(l.port)) {
        problem(`port ${l.port} is not allowed by WEIR_SYSLOG_PORTS`);
        continue;
      }
      const taken = specs.get(key);
      if (taken) {
        problem(
          `port ${l.port}/${key.slice(0, 3)} is already the ${taken.protocol} listener of integration ${taken.integrationId}`,
        );
        continue;
      }
      let tls: ListenerSpec['tls'];
      if (l.protocol === 'tls') {
        if (typeof tlsConfig.certificate !== 'string' || typeof tlsConfig.key !== 'string') {
          problem('a tls listener needs tls.certificate and tls.key');
          continue;
        }
        tls = {
          cert: tlsConfig.certificate,
          key: tlsConfig.key,
          ...(tlsConfig.client_ca ? { ca: tlsConfig.client_ca } : {}),
        };
      }
      const fingerprint = createHash('sha256')
        .update(JSON.stringify([i.organization_id, l, i.config.stream, i.config.routes, tls]))
        .digest('hex');
      specs.set(key, {
        key,
        integrationId: i.id,
        organizationId: i.organization_id,
        protocol: l.protocol,
        port: l.port,
        ...(tls ? { tls } : {}),
        route,
        fingerprint,
      });
    }
  }
  return { specs: [...specs.values()], problems };
}
