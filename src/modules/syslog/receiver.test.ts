// The syslog receiver against real senders: Debian's rsyslog forwarding over UDP, TCP
// (octet-counted and LF-ended frames), TLS and RELP, and util-linux logger over UDP and TCP.
// An integration of platform syslog declares the listeners; its messages become text events
// of the stream their route names, durably queued, then parsed by the stream's mapping.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/support/app.js';
import { createOrganization, createPrincipal, type Principal } from '../../../test/support/identity.js';
import { catchAll, outputs, publishMapping, runNormalize } from '../../../test/support/normalization.js';
import { freePort } from '../../../test/support/rsyslog.js';
import { startRsyslogSender, type RsyslogSender } from '../../../test/support/rsyslog-sender.js';
import { NORMALIZE_QUEUE, type IngestBatch } from '../../pipeline/envelope.js';

const run = promisify(execFile);
type Json = Record<string, unknown>;

let t: TestApp;
let org: number;
let admin: Principal;
let sender: RsyslogSender | { skip: string };
let integrationId: number;
let stop: (() => Promise<void>) | undefined;
const ports = { udp: 0, tcp: 0, tls: 0, relp: 0 };
const batches: IngestBatch[] = [];

interface Received {
  stream: string;
  message: string;
  peer_ip: string;
}

function received(): Received[] {
  return batches.flatMap((b) =>
    b.events.map((e) => ({ stream: b.stream, ...(JSON.parse(e as string) as { message: string; peer_ip: string }) })),
  );
}

async function waitForMarkers(markers: string[], timeoutMs = 15_000): Promise<Map<string, Received>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = new Map<string, Received>();
    for (const r of received()) for (const m of markers) if (r.message.includes(m)) found.set(m, r);
    if (found.size === markers.length) return found;
    if (Date.now() > deadline)
      throw new Error(
        `after ${timeoutMs} ms, received ${[...found.keys()].join(', ') || 'nothing'} of ${markers.join(', ')}`,
      );
    await new Promise((r) => setTimeout(r, 50));
  }
}

beforeAll(async () => {
  t = await createTestApp({
    env: {
      WEIR_TOKEN_RATE_LIMIT: '1000000',
      WEIR_SYSLOG_PORTS: '1024-65535',
      WEIR_SYSLOG_LINGER_MS: '5',
      WEIR_SYSLOG_REFRESH_MS: '100',
    },
  });
  org = await createOrganization(t, 'Syslog Org');
  admin = await createPrincipal(t, { role: 'admin', organizationId: org });
  ports.udp = await freePort('udp');
  ports.tcp = await freePort('tcp');
  ports.tls = await freePort('tcp');
  ports.relp = await freePort('tcp');
  sender = await startRsyslogSender({
    udp: ports.udp,
    tcp: ports.tcp,
    tcp_lf: ports.tcp,
    tls: ports.tls,
    relp: ports.relp,
  });
  t.container.queue.consume<IngestBatch>(NORMALIZE_QUEUE, async (job) => {
    batches.push(job.payload);
  });
}, 60_000);
afterAll(async () => {
  await stop?.();
  if (sender && !('skip' in sender)) await sender.stop();
  await t?.close();
});

describe('the syslog receiver', () => {
  it('takes an integration that declares its listeners, and keeps the TLS key secret', async (ctx) => {
    if ('skip' in sender) return ctx.skip(sender.skip);
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/integrations/',
      headers: admin.headers,
      payload: {
        name: 'edge syslog',
        platform: 'syslog',
        organization_id: org,
        config: {
          listeners: [
            { protocol: 'udp', port: ports.udp },
            { protocol: 'tcp', port: ports.tcp },
            { protocol: 'tls', port: ports.tls },
            { protocol: 'relp', port: ports.relp },
          ],
          routes: [{ stream: 'firewall', app_name: 'fw*' }],
          tls: { certificate: sender.serverCertPem, key: sender.serverKeyPem },
        },
      },
    });
    expect(res.statusCode, res.body).toBe(201);
    integrationId = res.json<Json>().id as number;
    expect(res.json<{ config: Json }>().config.tls).toEqual({
      certificate: sender.serverCertPem,
      key: { configured: true },
    });
    const noKey = await t.app.inject({
      method: 'POST',
      url: '/api/integrations/',
      headers: admin.headers,
      payload: {
        name: 'no key',
        platform: 'syslog',
        organization_id: org,
        config: { listeners: [{ protocol: 'tls', port: 6514 }] },
      },
    });
    expect(noKey.statusCode).toBe(422);

    const receiver = t.container.syslog.receiver();
    stop = receiver.start().stop;
    const deadline = Date.now() + 10_000;
    while (receiver.listeners().length < 4 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(
      receiver
        .listeners()
        .map((l) => l.spec.protocol)
        .sort(),
    ).toEqual(['relp', 'tcp', 'tls', 'udp']);
  });

  it('receives rsyslog over UDP, TCP (both framings), TLS and RELP, routed by app-name', async (ctx) => {
    if ('skip' in sender) return ctx.skip(sender.skip);
    const s = sender;
    for (const via of ['udp', 'tcp', 'tcp_lf', 'tls', 'relp'] as const) {
      await s.send(via, [
        `<13>Mar  5 14:22:31 host-a sshd[42]: from-rsyslog-${via} key=1`,
        `<134>Mar  5 14:22:31 edge fw-edge: marker=traffic-${via} srcip=10.0.0.7`,
      ]);
    }
    const found = await waitForMarkers(
      ['udp', 'tcp', 'tcp_lf', 'tls', 'relp'].flatMap((v) => [`from-rsyslog-${v} `, `traffic-${v} `]),
    );
    for (const [marker, r] of found) {
      expect(r.stream).toBe(marker.startsWith('traffic') ? 'firewall' : 'syslog');
      expect(r.peer_ip).toBe('127.0.0.1');
    }
    // The RFC 5424 forwarders keep the sender's header (rsyslog keeps the space before the
    // message and ends the frame with LF, which the receiver drops); the traditional one sends RFC 3164.
    expect(found.get('from-rsyslog-tcp ')!.message).toMatch(
      /^<13>1 \S+ host-a sshd 42 - - {1,2}from-rsyslog-tcp key=1$/,
    );
    expect(found.get('from-rsyslog-tcp_lf ')!.message).toMatch(
      /^<13>Mar {1,2}5 14:22:31 host-a sshd\[42\]: from-rsyslog-tcp_lf key=1$/,
    );
  });

  it('receives util-linux logger over UDP and TCP, RFC 5424 and RFC 3164', async (ctx) => {
    if ('skip' in sender) return ctx.skip(sender.skip);
    await run('logger', [
      '--udp',
      '-n',
      '127.0.0.1',
      '-P',
      String(ports.udp),
      '--rfc5424',
      '-t',
      'app',
      'logger-udp-5424',
    ]);
    await run('logger', [
      '--tcp',
      '-n',
      '127.0.0.1',
      '-P',
      String(ports.tcp),
      '--rfc5424',
      '--octet-count',
      '-t',
      'fw-core',
      'logger-tcp-5424',
    ]);
    await run('logger', [
      '--tcp',
      '-n',
      '127.0.0.1',
      '-P',
      String(ports.tcp),
      '--rfc3164',
      '-t',
      'app',
      'logger-tcp-3164',
    ]);
    const found = await waitForMarkers(['logger-udp-5424', 'logger-tcp-5424', 'logger-tcp-3164']);
    expect(found.get('logger-tcp-5424')!.stream).toBe('firewall');
    expect(found.get('logger-udp-5424')!.message).toMatch(
      /^<13>1 \S+ \S+ app - - \[timeQuality[^\]]*\] logger-udp-5424$/,
    );
    expect(found.get('logger-tcp-3164')!.message).toMatch(
      /^<13>[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \S+ app: logger-tcp-3164$/,
    );
  });

  it('shows each listener and its counters in the ingest status, and why one cannot listen', async (ctx) => {
    if ('skip' in sender) return ctx.skip(sender.skip);
    const listeners2 = [
      { protocol: 'tcp', port: ports.tcp },
      { protocol: 'udp', port: 80 },
    ];
    // The API refuses both ports (listener-status.test.ts); a deployment whose WEIR_SYSLOG_PORTS
    // narrowed later, or two creations that raced, still reach the receiver: stored directly here.
    const other = await t.app.inject({
      method: 'POST',
      url: '/api/integrations/',
      headers: admin.headers,
      payload: { name: 'second', platform: 'syslog', organization_id: org, config: { listeners: listeners2 } },
    });
    expect(other.statusCode, other.body).toBe(422);
    const otherId = (
      await t.container.database.db
        .insertInto('integrations')
        .values({
          organization_id: org,
          name: 'second',
          platform: 'syslog',
          config: JSON.stringify({ listeners: listeners2 }),
        })
        .returning('id')
        .executeTakeFirstOrThrow()
    ).id;
    await new Promise((r) => setTimeout(r, 400)); // a few refresh rounds (100 ms) write the states
    const status = await t.app.inject({
      method: 'GET',
      url: `/api/ingest/integrations/${integrationId}`,
      headers: admin.headers,
    });
    expect(status.statusCode, status.body).toBe(200);
    const listeners = status.json<{ syslog: { listeners: Json[] } }>().syslog.listeners;
    expect(listeners.map((l) => [l.protocol, l.state])).toEqual([
      ['relp', 'listening'],
      ['tcp', 'listening'],
      ['tls', 'listening'],
      ['udp', 'listening'],
    ]);
    const tcp = listeners.find((l) => l.protocol === 'tcp')!;
    expect(tcp.received).toBeGreaterThanOrEqual(6);
    expect(tcp.accepted).toBe(tcp.received);
    expect(listeners.find((l) => l.protocol === 'udp')).toMatchObject({ dropped: 0 });
    const second = (
      await t.app.inject({ method: 'GET', url: `/api/ingest/integrations/${otherId}`, headers: admin.headers })
    ).json<{ syslog: { listeners: Json[] } }>();
    expect(second.syslog.listeners).toMatchObject([
      {
        protocol: 'tcp',
        state: 'error',
        error: `port ${ports.tcp}/tcp is already the tcp listener of integration ${integrationId}`,
      },
      { protocol: 'udp', port: 80, state: 'error', error: 'port 80 is not allowed by WEIR_SYSLOG_PORTS' },
    ]);
    // A push integration has no syslog section.
    expect(status.json<Json>().platform).toBe('syslog');
  });

  it("reaches the outbox through the stream's mapping, which parses the header", async (ctx) => {
    if ('skip' in sender) return ctx.skip(sender.skip);
    await publishMapping(t, org, 'syslog', 'firewall', {
      product: { name: 'Edge', vendor_name: 'Example Corp' },
      parse: [{ parser: 'syslog' }, { parser: 'kv', into: 'kv', on_error: 'skip' }],
      rules: [
        {
          name: 'traffic',
          class_uid: 4001,
          activity_id: 6,
          set: [
            { target: 'src_endpoint.ip', from: 'kv.srcip', cast: 'ip' },
            { target: 'dst_endpoint.ip', from: 'peer_ip', cast: 'ip' },
            { target: 'metadata.log_name', from: 'app_name' },
          ],
        },
      ],
    });
    await catchAll(t, org);
    const b = batches.find(
      (x) => x.stream === 'firewall' && x.events.some((e) => (e as string).includes('traffic-relp')),
    )!;
    await runNormalize(t, b);
    const out = (await outputs(t, b.id)).map((o) => o.ocsf);
    expect(out.length).toBe(b.events.length);
    expect(out[0]).toMatchObject({
      class_uid: 4001,
      src_endpoint: { ip: '10.0.0.7' },
      dst_endpoint: { ip: '127.0.0.1' },
      metadata: { log_name: 'fw-edge' },
    });
  });
});
