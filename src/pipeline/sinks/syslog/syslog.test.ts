// The syslog sink against a real rsyslogd (test/support/rsyslog.ts): what rsyslog parsed out of
// each message is compared with the events sent.
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRsyslog, type Rsyslog, type RsyslogMessage } from '../../../../test/support/rsyslog.js';
import { ocsfEvents, sinkBatch, sinkContext } from '../../../../test/support/sink-batch.js';
import { DeliveryError, type Sink } from '../types.js';
import { syslogSink } from './index.js';

const started = await startRsyslog();
const rsyslog = 'skip' in started ? null : started;
if (!rsyslog) console.warn(`syslog sink tests skipped: ${(started as { skip: string }).skip}`);

/** The operator's SD-ID (a private enterprise number of theirs in real life). */
const SD_ID = 'acme@41234';
/** RFC 5424 with exactly our SD element, or none ("-"); SD values may only hold escaped ", \ and ]. */
const RFC5424 =
  /^<(\d{1,3})>1 (\S+) (\S+) (\S+) (\S+) (\S+) (-|\[acme@41234(?: [a-z_]+="(?:[^"\\\]]|\\["\\\]])*")+\]) (.*)$/s;

const sinks: Sink[] = [];
function open(
  config: Record<string, unknown>,
  options: { credential?: Record<string, string>; allowCidrs?: string[] } = {},
): Sink {
  const sink = syslogSink.create(sinkContext({ config, type: syslogSink, ...options }));
  sinks.push(sink);
  return sink;
}
const signal = () => AbortSignal.timeout(5000);
const byTag = (tag: string) => (m: RsyslogMessage) => m.msg.includes(tag);

function tagged(n: number, tag: string): Record<string, unknown>[] {
  return ocsfEvents(n).map((e, i) => ({ ...e, message: `${tag} ${i}`, severity_id: (i % 6) + 1 }));
}

async function expectError(p: Promise<unknown>, kind: DeliveryError['kind']): Promise<DeliveryError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(DeliveryError);
  expect((err as DeliveryError).kind).toBe(kind);
  return err as DeliveryError;
}

async function freeTcpPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((ok) => server.close(() => ok()));
  return port;
}

afterAll(async () => {
  await Promise.all(sinks.map((s) => s.close()));
  await rsyslog?.stop();
});

describe.skipIf(!rsyslog)('syslog sink (real rsyslogd)', () => {
  const r = rsyslog as Rsyslog;
  let base: Record<string, unknown>;
  beforeAll(() => {
    base = { host: '127.0.0.1', app_name: 'weir', msg_id: 'ocsf', facility: 'local0', hostname: 'weir-test' };
  });

  it('TCP with octet counting: one RFC 5424 message per event, as rsyslog parses it', async () => {
    const events = tagged(6, 'tcp-octet');
    events[0]!.message = 'tcp-octet quote " backslash \\ bracket ] unicode é ✓';
    const batch = sinkBatch(events, {
      ids: events.map((_, i) => `evt-${i}"]`),
      meta: { organization_id: 7, integration_id: 3, stream: 's' },
    });
    const sink = open({ ...base, port: r.tcpPort, protocol: 'tcp', structured_data_id: SD_ID });
    expect(await sink.send(batch, signal())).toEqual({});
    const got = await r.waitFor(6, byTag('tcp-octet'));
    expect(got.every((m) => m.inputname === 'tcp' && m['protocol-version'] === '1')).toBe(true);
    got.sort((a, b) => a.msg.localeCompare(b.msg));
    for (const m of got) {
      const i = batch.lines.indexOf(m.msg);
      expect(i).toBeGreaterThanOrEqual(0);
      const event = events[i]!;
      const severity = [6, 5, 4, 3, 2, 0][(event.severity_id as number) - 1]!;
      expect(m.pri).toBe(String(16 * 8 + severity));
      expect(m.syslogfacility).toBe('16');
      expect(m.syslogseverity).toBe(String(severity));
      expect(m.timereported).toBe(new Date(event.time as number).toISOString());
      expect([m.hostname, m['app-name'], m.procid, m.msgid]).toEqual([
        'weir-test',
        'weir',
        String(process.pid),
        'ocsf',
      ]);
      expect(m['structured-data']).toBe(`[${SD_ID} event_id="evt-${i}\\"\\]" org="7" class_uid="3002"]`);
      const parts = RFC5424.exec(m.rawmsg);
      expect(parts, m.rawmsg).not.toBeNull();
      expect(JSON.parse(parts![8]!)).toEqual(event);
    }
  });

  it('TCP with LF framing (non-transparent) keeps messages apart; without an SD-ID there is no structured data', async () => {
    const sink = open({ ...base, port: r.tcpPort, framing: 'non_transparent' });
    const batch = sinkBatch(tagged(3, 'tcp-lf'));
    await sink.send(batch, signal());
    const got = await r.waitFor(3, byTag('tcp-lf'));
    expect(got.map((m) => m.msg).sort()).toEqual([...batch.lines].sort());
    for (const m of got) {
      expect(m['structured-data']).toBe('-');
      expect(RFC5424.exec(m.rawmsg)?.[7], m.rawmsg).toBe('-');
    }
  });

  it('refuses an event above max_message_bytes and delivers the rest of the batch', async () => {
    const sink = open({ ...base, port: r.tcpPort, max_message_bytes: 4096 });
    const events = tagged(3, 'tcp-big');
    events[1]!.blob = 'x'.repeat(5000);
    const result = await sink.send(sinkBatch(events), signal());
    expect(result.rejected).toHaveLength(1);
    expect(result.rejected![0]!.index).toBe(1);
    expect(result.rejected![0]!.reason).toMatch(/above max_message_bytes \(4096\)/);
    const got = await r.waitFor(2, byTag('tcp-big'));
    expect(got.map((m) => m.msg).some((t) => t.includes('xxxx'))).toBe(false);
  });

  it('carries a 1 MiB-class event whole over TCP', async () => {
    const sink = open({ ...base, port: r.tcpPort });
    const events = tagged(1, 'tcp-large');
    events[0]!.blob = 'y'.repeat(900_000);
    await sink.send(sinkBatch(events), signal());
    const [m] = await r.waitFor(1, byTag('tcp-large'));
    expect(JSON.parse(m!.msg)).toEqual(events[0]);
  });

  it('TLS: verifies the server against tls_ca and delivers; test() reports the handshake', async () => {
    const sink = open({ ...base, host: 'localhost', port: r.tlsPort, protocol: 'tls', tls_ca: r.caPem });
    const t = await sink.test(signal());
    expect(t).toMatchObject({ ok: true });
    expect(t.detail).toMatch(/TLS handshake .* \(certificate verified\)/);
    await sink.send(sinkBatch(tagged(4, 'tls-ok')), signal());
    const got = await r.waitFor(4, byTag('tls-ok'));
    expect(got.every((m) => m.inputname === 'tls' && m['protocol-version'] === '1')).toBe(true);
  });

  it('TLS: an unknown certificate authority is a tls error, in send and in test()', async () => {
    const sink = open({ ...base, port: r.tlsPort, protocol: 'tls' });
    await expectError(sink.send(sinkBatch(tagged(1, 'tls-bad')), signal()), 'tls');
    expect(await sink.test(signal())).toMatchObject({ ok: false, error_kind: 'tls' });
    const wrongName = open({
      ...base,
      host: '127.0.0.1',
      servername: 'other.example',
      port: r.tlsPort,
      protocol: 'tls',
      tls_ca: r.caPem,
    });
    await expectError(wrongName.send(sinkBatch(tagged(1, 'tls-bad')), signal()), 'tls');
  });

  it('mutual TLS with the client certificate from the credential', async () => {
    const credential = { client_cert: r.clientCertPem, client_key: r.clientKeyPem };
    const sink = open(
      { ...base, host: 'localhost', port: r.mtlsPort, protocol: 'tls', tls_ca: r.caPem },
      { credential },
    );
    await sink.send(sinkBatch(tagged(2, 'mtls-ok')), signal());
    const got = await r.waitFor(2, byTag('mtls-ok'));
    expect(got.every((m) => m.inputname === 'mtls')).toBe(true);
    const half = open(
      { ...base, host: 'localhost', port: r.mtlsPort, protocol: 'tls', tls_ca: r.caPem },
      { credential: { client_cert: r.clientCertPem } },
    );
    const err = await expectError(half.send(sinkBatch(tagged(1, 'mtls-half')), signal()), 'config');
    expect(err.message).not.toContain('PRIVATE KEY');
  });

  it('UDP: one datagram per event; above 65000 bytes is refused', async () => {
    const sink = open({ ...base, port: r.udpPort, protocol: 'udp' });
    const events = tagged(5, 'udp-ok');
    events[2]!.blob = 'z'.repeat(70_000);
    const result = await sink.send(sinkBatch(events), signal());
    expect(result.rejected?.map((x) => x.index)).toEqual([2]);
    expect(result.rejected![0]!.reason).toMatch(/65000/);
    const got = await r.waitFor(4, byTag('udp-ok'));
    expect(got.every((m) => m.inputname === 'udp' && RFC5424.test(m.rawmsg))).toBe(true);
    expect(await sink.test(signal())).toMatchObject({ ok: true });
  });
});

describe('syslog sink failures', () => {
  it('connection refused is a retryable connection error; test() says so', async () => {
    const port = await freeTcpPort();
    const sink = open({ host: '127.0.0.1', port });
    const err = await expectError(sink.send(sinkBatch(ocsfEvents(1)), signal()), 'connection');
    expect(err.retryable).toBe(true);
    expect(err.message).toMatch(/ECONNREFUSED/);
    expect(await sink.test(signal())).toMatchObject({ ok: false, error_kind: 'connection' });
  });

  it('the SSRF guard refuses loopback unless allowed (tcp and udp)', async () => {
    for (const protocol of ['tcp', 'tls', 'udp']) {
      const sink = open({ host: '127.0.0.1', port: 9, protocol }, { allowCidrs: [] });
      const err = await expectError(sink.send(sinkBatch(ocsfEvents(1)), signal()), 'blocked_address');
      expect(err.retryable).toBe(false);
      expect(await sink.test(signal())).toMatchObject({ ok: false, error_kind: 'blocked_address' });
    }
  });

  it('a receiver that stops reading makes the batch time out on abort', async () => {
    const held: net.Socket[] = [];
    const server = net.createServer({ pauseOnConnect: true }, (s) => held.push(s));
    await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
    try {
      const sink = open({
        host: '127.0.0.1',
        port: (server.address() as net.AddressInfo).port,
        max_message_bytes: 4 * 1_048_576,
      });
      const events = ocsfEvents(16).map((e) => ({ ...e, blob: 'b'.repeat(2_000_000) }));
      const started = Date.now();
      await expectError(sink.send(sinkBatch(events), AbortSignal.timeout(300)), 'timeout');
      expect(Date.now() - started).toBeLessThan(3000);
    } finally {
      held.forEach((s) => s.destroy());
      await new Promise<void>((ok) => server.close(() => ok()));
    }
  });

  it('keeps one connection across batches', async () => {
    let connections = 0;
    let bytes = '';
    const server = net.createServer((s) => {
      connections++;
      s.on('data', (d) => (bytes += d.toString()));
    });
    await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
    try {
      const sink = open({ host: '127.0.0.1', port: (server.address() as net.AddressInfo).port });
      await Promise.all([0, 1, 2].map(() => sink.send(sinkBatch(ocsfEvents(2)), signal())));
      await sink.send(sinkBatch(ocsfEvents(2)), signal());
      await expect.poll(() => bytes.match(/<134>1 /g)?.length ?? 0).toBe(8);
      expect(connections).toBe(1);
      await sink.close();
    } finally {
      await new Promise<void>((ok) => server.close(() => ok()));
    }
  });

  it('reconnects after the receiver closed the connection', async () => {
    const received: string[] = [];
    let connections = 0;
    const server = net.createServer((s) => {
      connections++;
      s.on('data', (d) => {
        received.push(d.toString());
        s.end(); // the receiver hangs up after the first batch
      });
    });
    await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
    try {
      const sink = open({ host: '127.0.0.1', port: (server.address() as net.AddressInfo).port });
      await sink.send(sinkBatch(ocsfEvents(1)), signal());
      await expect.poll(() => received.length).toBe(1);
      await new Promise((r) => setTimeout(r, 100));
      await sink.send(sinkBatch(ocsfEvents(1)), signal());
      await expect.poll(() => received.length).toBe(2);
      expect(connections).toBe(2);
      expect(received[1]).toMatch(/^\d+ <134>1 /);
      await sink.close();
    } finally {
      await new Promise<void>((ok) => server.close(() => ok()));
    }
  });

  it('a missing host or a bad facility is a config error, never a throw from create', async () => {
    const sink = open({ port: 514 });
    await expectError(sink.send(sinkBatch(ocsfEvents(1)), signal()), 'config');
    expect(await sink.test(signal())).toMatchObject({ ok: false, error_kind: 'config' });
    await expectError(open({ host: '127.0.0.1', facility: 'nope' }).send(sinkBatch(ocsfEvents(1)), signal()), 'config');
  });
});
