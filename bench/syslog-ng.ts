// syslog-ng doing the job of Weir's firewall case, for comparison with
// `npm run bench:pipeline -- --events firewall`: the same generated firewall traffic events
// (bench/fixtures/firewall.ts, ~715 B of JSON each) sent as JSON lines over TCP, parsed
// (json-parser), the same 15 fields mapped into the OCSF Network Activity shape
// (format-json), written as NDJSON to a file behind a reliable disk buffer
// (bench/syslog-ng/weir-compare.conf).
//
// Each run: a fresh temporary directory (the configuration, persist file, disk buffer,
// control socket, pid file and output in it), `syslog-ng -F` on it (foreground, no system
// paths), --events events sent over --connections TCP connections as fast as the sockets take
// them, and the run ends when the output file has one line per event. Reported per run and
// as medians of --runs:
//   events/s          events / time from the first byte sent until the last line is in the file
//   send events/s     events / time until the last byte was handed to the socket (with flow
//                     control this is what syslog-ng read, the nearest thing to Weir's accept)
//   CPU s             syslog-ng's utime + stime (/proc/<pid>/stat, every thread) in that time
//   events per CPU s, input MB/s per core (bytes sent, 10^6 bytes, / those CPU seconds)
//   RSS               idle (VmRSS after start), sampled (largest VmRSS every 100 ms during the
//                     run) and VmHWM (the kernel's high-water mark, read at the end of the run)
// Checks: exactly one line per event; the first 2,000 output lines are valid OCSF (the
// project's validator, zero issues) and equal, field for field, to the plain-Node reference
// map of their input event (firewallReferenceMap: what Weir's mapping produces minus
// observables and `unmapped`).
//
//   npm run bench:syslog-ng -- [--events 500000] [--runs 3] [--connections 1]
//   (needs syslog-ng on the PATH: Debian's syslog-ng-core, `apt-get install -y syslog-ng-core`)
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { isDeepStrictEqual } from 'node:util';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { createValidator, ocsfCatalog } from '../src/ocsf/index.js';
import { FIREWALL_EPOCH_MS, firewallEvent, firewallLines, firewallReferenceMap } from './fixtures/firewall.js';
import { cpuOf, statusKb } from './proc.js';

const { values } = parseArgs({
  options: {
    events: { type: 'string', default: '500000' },
    runs: { type: 'string', default: '3' },
    connections: { type: 'string', default: '1' },
  },
});
const events = Number(values.events);
const runs = Number(values.runs);
const connections = Number(values.connections);
const CONF = path.resolve(import.meta.dirname, 'syslog-ng/weir-compare.conf');
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
const mib = (kb: number) => (kb / 1024).toFixed(1);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A free TCP port on the loopback (bound and released: syslog-ng binds it right after). */
async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
  });
}

/** The input, once: chunks of whole lines (~1 MB each), every line ending in a newline. */
function input(): { chunks: Buffer[]; bytes: number } {
  const chunks: Buffer[] = [];
  let bytes = 0;
  for (let start = 0; start < events; start += 1400) {
    const n = Math.min(1400, events - start);
    const chunk = Buffer.from(`${firewallLines(start, n).join('\n')}\n`);
    chunks.push(chunk);
    bytes += chunk.length;
  }
  return { chunks, bytes };
}

/** Lines in a file, read from where the last call stopped. */
class Lines {
  private offset = 0;
  private lines = 0;
  private readonly buf = Buffer.allocUnsafe(1 << 22);
  constructor(private readonly file: string) {}
  async count(): Promise<number> {
    let h;
    try {
      h = await open(this.file, 'r');
    } catch {
      return 0;
    }
    try {
      for (;;) {
        const { bytesRead } = await h.read(this.buf, 0, this.buf.length, this.offset);
        if (bytesRead === 0) break;
        for (let i = this.buf.indexOf(10); i !== -1 && i < bytesRead; i = this.buf.indexOf(10, i + 1)) this.lines++;
        this.offset += bytesRead;
      }
    } finally {
      await h.close();
    }
    return this.lines;
  }
  get bytes(): number {
    return this.offset;
  }
}

async function connect(port: number, deadlineMs: number): Promise<net.Socket> {
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    try {
      return await new Promise<net.Socket>((resolve, reject) => {
        const s = net.connect(port, '127.0.0.1');
        s.once('connect', () => resolve(s));
        s.once('error', reject);
      });
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await sleep(50);
    }
  }
}

/** Writes the chunks to the sockets (chunk i to socket i % n), each waiting for 'drain' when the socket is full. */
async function send(sockets: net.Socket[], chunks: Buffer[]): Promise<void> {
  await Promise.all(
    sockets.map(async (s, k) => {
      for (let i = k; i < chunks.length; i += sockets.length) {
        if (!s.write(chunks[i]!)) await new Promise<void>((r) => s.once('drain', r));
      }
      await new Promise<void>((r) => s.end(r));
    }),
  );
}

/** Sorted-key copy, so that two objects compare by content only. */
const canonical = (v: unknown): unknown =>
  Array.isArray(v)
    ? v.map(canonical)
    : v !== null && typeof v === 'object'
      ? Object.fromEntries(
          Object.keys(v)
            .sort()
            .map((k) => [k, canonical((v as Record<string, unknown>)[k])]),
        )
      : v;

/** The first `n` lines of the output: valid OCSF, and the same as the reference map of their input event. */
async function check(file: string, n: number): Promise<void> {
  const validator = createValidator(ocsfCatalog());
  const h = await open(file, 'r');
  const buf = Buffer.alloc(n * 2048);
  const { bytesRead } = await h.read(buf, 0, buf.length, 0);
  await h.close();
  const lines = buf.subarray(0, bytesRead).toString('utf8').split('\n').slice(0, n);
  for (const [k, line] of lines.entries()) {
    const out = JSON.parse(line) as Record<string, unknown>;
    const issues = validator.validate(out);
    if (issues.length > 0)
      throw new Error(`output line ${k + 1} is not valid OCSF: ${JSON.stringify(issues)}\n${line}`);
    // session_id (metadata.uid) is 100000 + the event's number, and time its epoch ms + the number.
    const i = Number(out.time) - FIREWALL_EPOCH_MS;
    const expected = firewallReferenceMap(firewallEvent(i));
    if (!isDeepStrictEqual(canonical(out), canonical(expected)))
      throw new Error(
        `output line ${k + 1} differs from the reference map of event ${i}:\n${line}\n${JSON.stringify(expected)}`,
      );
  }
}

interface Result {
  e2e: number;
  send: number;
  cpu: number;
  perCpu: number;
  mbPerCore: number;
  idle: number;
  rssMax: number;
  hwm: number;
  outBytes: number;
}

async function run(data: { chunks: Buffer[]; bytes: number }): Promise<Result> {
  const dir = mkdtempSync(path.join(tmpdir(), 'weir-syslog-ng-'));
  mkdirSync(path.join(dir, 'buffer'));
  const conf = path.join(dir, 'weir-compare.conf');
  writeFileSync(conf, readFileSync(CONF));
  const port = await freePort();
  let proc: ChildProcess | undefined;
  try {
    const stderr: string[] = [];
    proc = spawn(
      'syslog-ng',
      ['-F', '-f', conf, '-R', path.join(dir, 'persist'), '-p', path.join(dir, 'pid'), '-c', path.join(dir, 'ctl')],
      {
        env: { PATH: process.env.PATH, WEIR_CMP_PORT: String(port), WEIR_CMP_DIR: dir },
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
    proc.stderr?.on('data', (c: Buffer) => stderr.push(c.toString()));
    const exited = new Promise<never>((_, reject) =>
      proc!.once('exit', (code) => reject(new Error(`syslog-ng exited with ${String(code)}: ${stderr.join('')}`))),
    );
    exited.catch(() => undefined);
    const pid = proc.pid!;
    const probe = await Promise.race([connect(port, 15_000), exited]);
    probe.destroy();
    await sleep(1000);
    const idle = statusKb(pid, 'VmRSS');
    let rssMax = idle;
    const sampler = setInterval(() => (rssMax = Math.max(rssMax, statusKb(pid, 'VmRSS'))), 100);
    const out = new Lines(path.join(dir, 'out.ndjson'));
    const sockets = await Promise.all(Array.from({ length: connections }, () => connect(port, 5000)));
    const cpu0 = cpuOf(pid);
    const t0 = performance.now();
    await Promise.race([send(sockets, data.chunks), exited]);
    const sent = performance.now();
    const deadline = Date.now() + 600_000;
    let lines = await out.count();
    while (lines < events) {
      if (Date.now() > deadline) throw new Error(`only ${lines} of ${events} lines in the output in time`);
      await Promise.race([sleep(20), exited]);
      lines = await out.count();
    }
    const end = performance.now();
    const cpu = cpuOf(pid) - cpu0;
    clearInterval(sampler);
    rssMax = Math.max(rssMax, statusKb(pid, 'VmRSS'));
    const hwm = statusKb(pid, 'VmHWM');
    if (lines !== events) throw new Error(`${lines} lines in the output for ${events} events sent`);
    await check(path.join(dir, 'out.ndjson'), Math.min(2000, events));
    return {
      e2e: events / ((end - t0) / 1000),
      send: events / ((sent - t0) / 1000),
      cpu,
      perCpu: events / cpu,
      mbPerCore: data.bytes / 1e6 / cpu,
      idle,
      rssMax,
      hwm,
      outBytes: out.bytes / events,
    };
  } finally {
    if (proc && proc.exitCode === null && proc.signalCode === null) {
      const gone = new Promise((r) => proc!.once('exit', r));
      proc.kill('SIGTERM');
      await gone;
    }
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const version = execFileSync('syslog-ng', ['--version'], { encoding: 'utf8' }).split('\n')[0];
  const data = input();
  console.log(
    `${version}; node ${process.version}; ${fmt(events)} firewall events (${(data.bytes / events).toFixed(0)} B each with the newline) over ${connections} TCP connection(s); median of ${runs}; load average ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`,
  );
  const results: Result[] = [];
  for (let i = 0; i < runs; i++) {
    const r = await run(data);
    results.push(r);
    console.log(
      `  run ${i + 1}: ${fmt(r.e2e)} ev/s end to end (sent at ${fmt(r.send)} ev/s), syslog-ng CPU ${r.cpu.toFixed(2)} s = ${fmt(r.perCpu)} events per CPU s, ${r.mbPerCore.toFixed(1)} MB/s per core; RSS MiB idle ${mib(r.idle)}, sampled max ${mib(r.rssMax)}, VmHWM ${mib(r.hwm)}; output ${r.outBytes.toFixed(0)} B/event`,
    );
  }
  const m = (f: (r: Result) => number) => median(results.map(f));
  console.log(
    '\n| what | events/s end to end | send events/s | CPU s a run | events per CPU s | input MB/s per core | idle RSS MiB | peak RSS MiB (sampled 100 ms) | VmHWM MiB | output B/event |',
  );
  console.log('|---|---|---|---|---|---|---|---|---|---|');
  console.log(
    `| syslog-ng (${connections} connection(s)) | ${fmt(m((r) => r.e2e))} | ${fmt(m((r) => r.send))} | ${m((r) => r.cpu).toFixed(2)} | ${fmt(m((r) => r.perCpu))} | ${m((r) => r.mbPerCore).toFixed(1)} | ${mib(m((r) => r.idle))} | ${mib(m((r) => r.rssMax))} | ${mib(m((r) => r.hwm))} | ${m((r) => r.outBytes).toFixed(0)} |`,
  );
}

await main();
