// A private rsyslogd that SENDS to Weir's syslog receiver, as a relay or appliance would:
// each of its plain-TCP inputs (where a test writes LF-ended lines) feeds one forwarding
// action: omfwd over UDP, TCP (octet-counted RFC 5424, or traditional LF-ended RFC 3164), TLS
// (gtls, RFC 5424), or omrelp (RELP). TLS and RELP forward as a relay that must not give up
// does: from an in-memory queue, retrying every second while Weir is away and reconnecting
// by itself. Certificates come from the openssl CLI (rsyslog.ts). Skipped without rsyslogd
// (an error under CI, which installs rsyslog, rsyslog-gnutls and rsyslog-relp).
import { spawn, type ChildProcess } from 'node:child_process';
import { access, mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { findRsyslogd, freePort, makeCertificates, stopRsyslogd } from './rsyslog.js';

export type Forward = 'udp' | 'tcp' | 'tcp_lf' | 'tls' | 'relp';

export interface RsyslogSender {
  /** PEM of the server certificate and key Weir's TLS listener is to use, and the CA rsyslog trusts. */
  serverCertPem: string;
  serverKeyPem: string;
  /** Writes lines to the input that forwards with `via`. */
  send(via: Forward, lines: string[]): Promise<void>;
  /** One connection to the input that forwards with `via`, for a steady stream: write() resolves once rsyslog's kernel has the lines. */
  open(via: Forward): Promise<{ write(lines: string[]): Promise<void>; end(): Promise<void> }>;
  stop(): Promise<void>;
}

async function hasModule(name: string): Promise<boolean> {
  const dirs = ['/usr/lib/rsyslog', '/usr/lib64/rsyslog'];
  for (const e of await readdir('/usr/lib').catch(() => [] as string[])) dirs.push(`/usr/lib/${e}/rsyslog`);
  for (const d of dirs)
    if (
      await access(path.join(d, name)).then(
        () => true,
        () => false,
      )
    )
      return true;
  return false;
}

/** An action that keeps what it could not send in memory and retries every second, forever. */
const RETRY = 'queue.type="LinkedList" queue.size="200000" action.resumeRetryCount="-1" action.resumeInterval="1"';

export async function startRsyslogSender(
  targets: Partial<Record<Forward, number>>,
): Promise<RsyslogSender | { skip: string }> {
  const bin = await findRsyslogd();
  const missing = !bin
    ? 'rsyslogd is not installed'
    : !(await hasModule('lmnsd_gtls.so'))
      ? 'rsyslog-gnutls is not installed'
      : !(await hasModule('omrelp.so'))
        ? 'rsyslog-relp is not installed'
        : null;
  if (missing) {
    if (process.env.CI === 'true') throw new Error(`syslog receiver tests need a real rsyslogd: ${missing}`);
    return { skip: missing };
  }
  const dir = await mkdtemp(path.join(tmpdir(), 'weir-rsyslog-sender-'));
  await makeCertificates(dir);
  const f = (name: string) => path.join(dir, name);
  const inputs: Partial<Record<Forward, number>> = {};
  const actions: string[] = [];
  for (const [via, port] of Object.entries(targets) as [Forward, number][]) {
    inputs[via] = await freePort('tcp');
    const action =
      via === 'udp'
        ? `type="omfwd" protocol="udp" template="RSYSLOG_SyslogProtocol23Format"`
        : via === 'tcp'
          ? `type="omfwd" protocol="tcp" TCP_Framing="octet-counted" template="RSYSLOG_SyslogProtocol23Format"`
          : via === 'tcp_lf'
            ? `type="omfwd" protocol="tcp" TCP_Framing="traditional" template="RSYSLOG_TraditionalForwardFormat"`
            : via === 'tls'
              ? `type="omfwd" protocol="tcp" TCP_Framing="octet-counted" StreamDriver="gtls" StreamDriverMode="1" StreamDriverAuthMode="anon" template="RSYSLOG_SyslogProtocol23Format" ${RETRY}`
              : `type="omrelp" template="RSYSLOG_SyslogProtocol23Format" ${RETRY}`;
    actions.push(`ruleset(name="${via}") { action(${action} target="127.0.0.1" port="${port}") }`);
    actions.push(`input(type="imtcp" port="${inputs[via]}" address="127.0.0.1" ruleset="${via}")`);
  }
  await writeFile(
    f('rsyslog.conf'),
    `global(workDirectory="${dir}" maxMessageSize="2m" defaultNetstreamDriverCAFile="${f('ca.pem')}")
module(load="imtcp" maxSessions="50")
module(load="omrelp")
${actions.join('\n')}
`,
  );
  const child: ChildProcess = spawn(bin as string, ['-n', '-f', f('rsyslog.conf'), '-i', f('rsyslogd.pid')], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<void>((ok) => child.once('exit', () => ok()));
  const stop = () => stopRsyslogd(child, exited, dir);
  const connect = (port: number) =>
    new Promise<net.Socket | undefined>((ok) => {
      const s = net.connect(port, '127.0.0.1', () => ok(s));
      s.on('error', () => ok(undefined));
    });
  const deadline = Date.now() + 10_000;
  for (const port of Object.values(inputs)) {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`rsyslogd exited: ${output}`);
      const s = await connect(port);
      if (s) {
        s.destroy();
        break;
      }
      if (Date.now() > deadline) {
        await stop();
        throw new Error(`rsyslogd did not become ready: ${output}`);
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  const input = async (via: Forward) => {
    const port = inputs[via];
    if (port === undefined) throw new Error(`no ${via} input`);
    const s = await connect(port);
    if (!s) throw new Error(`rsyslogd's ${via} input is not there: ${output}`);
    return s;
  };
  return {
    serverCertPem: await readFile(f('server.pem'), 'utf8'),
    serverKeyPem: await readFile(f('server-key.pem'), 'utf8'),
    async send(via, lines) {
      const s = await input(via);
      await new Promise<void>((ok, fail) => s.end(`${lines.join('\n')}\n`, () => ok()).on('error', fail));
    },
    async open(via) {
      const s = await input(via);
      return {
        write: (lines) =>
          new Promise<void>((ok, fail) => s.write(`${lines.join('\n')}\n`, (err) => (err ? fail(err) : ok()))),
        end: () => new Promise<void>((ok) => s.end(() => ok())),
      };
    },
    stop,
  };
}
