// A private rsyslogd for the syslog sink's tests: its own config, work directory and free
// ports, no system logging. Inputs: plain TCP, TLS (anonymous clients), TLS requiring a client
// certificate signed by the test CA, and UDP. Every message received is written as rsyslog's
// own parse of it (%jsonmesg%: pri, protocol-version, structured-data, msg, rawmsg...) to a
// file the tests read. Certificates are made with the openssl CLI in the temp directory.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import dgram from 'node:dgram';
import { access, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface RsyslogMessage {
  inputname: 'tcp' | 'tls' | 'mtls' | 'udp';
  rawmsg: string;
  msg: string;
  pri: string;
  'protocol-version': string;
  timereported: string;
  hostname: string;
  'app-name': string;
  procid: string;
  msgid: string;
  'structured-data': string;
  syslogfacility: string;
  syslogseverity: string;
}

export interface Rsyslog {
  tcpPort: number;
  tlsPort: number;
  /** TLS input that requires a client certificate signed by the test CA. */
  mtlsPort: number;
  udpPort: number;
  /** PEM of the CA that signed the server and client certificates (server name: localhost, 127.0.0.1). */
  caPem: string;
  clientCertPem: string;
  clientKeyPem: string;
  /** Everything received so far (probe messages excluded). */
  messages(): Promise<RsyslogMessage[]>;
  /** Waits until `count` messages match `filter` (default all); throws after timeoutMs. */
  waitFor(count: number, filter?: (m: RsyslogMessage) => boolean, timeoutMs?: number): Promise<RsyslogMessage[]>;
  stop(): Promise<void>;
}

const PROBE_MSGID = 'weir-probe';

/** Where rsyslogd is, or null. */
export async function findRsyslogd(): Promise<string | null> {
  for (const p of ['/usr/sbin/rsyslogd', '/sbin/rsyslogd', '/usr/local/sbin/rsyslogd']) {
    try {
      await run(p, ['-v']);
      return p;
    } catch {
      // next
    }
  }
  return null;
}

/** Whether rsyslog's TLS driver is there (package rsyslog-gnutls on Debian). */
async function hasGtls(): Promise<boolean> {
  const dirs = ['/usr/lib/rsyslog', '/usr/lib64/rsyslog'];
  for (const e of await readdir('/usr/lib').catch(() => [] as string[])) dirs.push(`/usr/lib/${e}/rsyslog`);
  for (const d of dirs) {
    if (
      await access(path.join(d, 'lmnsd_gtls.so')).then(
        () => true,
        () => false,
      )
    )
      return true;
  }
  return false;
}

export async function freePort(kind: 'tcp' | 'udp'): Promise<number> {
  if (kind === 'udp') {
    const s = dgram.createSocket('udp4');
    await new Promise<void>((ok) => s.bind(0, '127.0.0.1', ok));
    const { port } = s.address();
    await new Promise<void>((ok) => s.close(() => ok()));
    return port;
  }
  const server = net.createServer();
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((ok) => server.close(() => ok()));
  return port;
}

/** Stops a private rsyslogd (SIGTERM, SIGKILL after 3 s) and removes its directory. */
export async function stopRsyslogd(child: ChildProcess, exited: Promise<void>, dir: string): Promise<void> {
  if (child.exitCode === null && child.signalCode === null) {
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
    await exited;
    clearTimeout(timer);
  }
  await rm(dir, { recursive: true, force: true });
}

export async function makeCertificates(dir: string): Promise<void> {
  const o = (args: string[]) => run('openssl', args, { cwd: dir });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];
  await o([
    'req',
    '-x509',
    ...ec,
    '-keyout',
    'ca-key.pem',
    '-out',
    'ca.pem',
    '-days',
    '2',
    '-subj',
    '/CN=Weir test CA',
  ]);
  await writeFile(
    path.join(dir, 'server.ext'),
    'subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n',
  );
  await writeFile(path.join(dir, 'client.ext'), 'extendedKeyUsage=clientAuth\n');
  for (const [name, cn] of [
    ['server', 'localhost'],
    ['client', 'weir-client'],
  ] as const) {
    await o(['req', ...ec, '-keyout', `${name}-key.pem`, '-out', `${name}.csr`, '-subj', `/CN=${cn}`]);
    await o([
      'x509',
      '-req',
      '-in',
      `${name}.csr`,
      '-CA',
      'ca.pem',
      '-CAkey',
      'ca-key.pem',
      '-CAcreateserial',
      '-days',
      '2',
      '-out',
      `${name}.pem`,
      '-extfile',
      `${name}.ext`,
    ]);
  }
}

function config(dir: string, ports: { tcp: number; tls: number; mtls: number; udp: number }): string {
  const f = (name: string) => path.join(dir, name);
  return `global(workDirectory="${dir}" maxMessageSize="2m"
  defaultNetstreamDriverCAFile="${f('ca.pem')}"
  defaultNetstreamDriverCertFile="${f('server.pem')}"
  defaultNetstreamDriverKeyFile="${f('server-key.pem')}")
module(load="imtcp" maxSessions="200" maxFrameSize="4000000")
module(load="imudp")
template(name="json" type="string" string="%jsonmesg%\\n")
ruleset(name="net") { action(type="omfile" file="${f('received.ndjson')}" template="json") }
input(type="imtcp" port="${ports.tcp}" address="127.0.0.1" name="tcp" ruleset="net")
input(type="imtcp" port="${ports.tls}" address="127.0.0.1" name="tls" ruleset="net" streamDriver.name="gtls" streamDriver.mode="1" streamDriver.authMode="anon")
input(type="imtcp" port="${ports.mtls}" address="127.0.0.1" name="mtls" ruleset="net" streamDriver.name="gtls" streamDriver.mode="1" streamDriver.authMode="x509/certvalid")
input(type="imudp" port="${ports.udp}" address="127.0.0.1" name="udp" ruleset="net")
`;
}

/**
 * Starts rsyslogd; {skip: reason} when rsyslogd or its TLS driver is missing. Under
 * CI=true a missing rsyslogd is an error: CI installs it (.ci/run).
 */
export async function startRsyslog(): Promise<Rsyslog | { skip: string }> {
  const bin = await findRsyslogd();
  const missing = !bin
    ? 'rsyslogd is not installed (apt-get install rsyslog rsyslog-gnutls)'
    : !(await hasGtls())
      ? 'rsyslog TLS driver missing (apt-get install rsyslog-gnutls)'
      : null;
  if (missing) {
    if (process.env.CI === 'true') throw new Error(`syslog sink tests need a real rsyslogd: ${missing}`);
    return { skip: missing };
  }
  const dir = await mkdtemp(path.join(tmpdir(), 'weir-rsyslog-'));
  await makeCertificates(dir);
  const ports = {
    tcp: await freePort('tcp'),
    tls: await freePort('tcp'),
    mtls: await freePort('tcp'),
    udp: await freePort('udp'),
  };
  await writeFile(path.join(dir, 'rsyslog.conf'), config(dir, ports));
  const child: ChildProcess = spawn(
    bin as string,
    ['-n', '-f', path.join(dir, 'rsyslog.conf'), '-i', path.join(dir, 'rsyslogd.pid')],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<void>((ok) => child.once('exit', () => ok()));
  const file = path.join(dir, 'received.ndjson');

  async function all(): Promise<RsyslogMessage[]> {
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch {
      return [];
    }
    // The last line may be half written.
    return text.split('\n').flatMap((l) => {
      try {
        return [JSON.parse(l) as RsyslogMessage];
      } catch {
        return [];
      }
    });
  }

  const stop = () => stopRsyslogd(child, exited, dir);

  // Ready when TCP accepts and a UDP probe came through (imudp has no other sign of life).
  const udp = dgram.createSocket('udp4');
  try {
    const deadline = Date.now() + 10_000;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`rsyslogd exited: ${output}`);
      if (Date.now() > deadline) throw new Error(`rsyslogd did not become ready: ${output}`);
      const tcpUp = await new Promise<boolean>((ok) => {
        const s = net.connect(ports.tcp, '127.0.0.1', () => {
          s.destroy();
          ok(true);
        });
        s.on('error', () => ok(false));
      });
      if (tcpUp) {
        await new Promise<void>((ok) =>
          udp.send(`<14>1 - - - - ${PROBE_MSGID} - probe`, ports.udp, '127.0.0.1', () => ok()),
        );
        if ((await all()).some((m) => m.msgid === PROBE_MSGID)) break;
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  } catch (err) {
    await stop();
    throw err;
  } finally {
    udp.close();
  }

  const messages = async () => (await all()).filter((m) => m.msgid !== PROBE_MSGID);
  return {
    tcpPort: ports.tcp,
    tlsPort: ports.tls,
    mtlsPort: ports.mtls,
    udpPort: ports.udp,
    caPem: await readFile(path.join(dir, 'ca.pem'), 'utf8'),
    clientCertPem: await readFile(path.join(dir, 'client.pem'), 'utf8'),
    clientKeyPem: await readFile(path.join(dir, 'client-key.pem'), 'utf8'),
    messages,
    async waitFor(count, filter = () => true, timeoutMs = 5000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = (await messages()).filter(filter);
        if (found.length >= count) return found;
        if (Date.now() > deadline) throw new Error(`rsyslog received ${found.length} of ${count} expected messages`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    stop,
  };
}
