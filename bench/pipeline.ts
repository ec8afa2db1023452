// The full path, end to end: HTTP push → durable accept → normalization → routing → the
// `file` destination's NDJSON files. Drives a real Weir started from `dist/`: embedded (one
// `weir all`: PGlite, the database queue) or distributed (PostgreSQL + Redis: one `weir api`,
// --workers `weir worker` and --dispatchers `weir dispatcher` processes). One file
// destination (config {path: 'bench'}: WEIR_FILE_SINK_ROOT/org-<id>/bench, a temporary directory;
// delivery max_events 5000, max_wait_ms 200) and one catch-all route, made through the API.
//
// --events okta (default): Okta System Log events (the connector's fixtures, each with a new
// uuid and time, ~1.9 KB) pushed to an `okta` integration, stream system_log (the built-in
// mapping). --events firewall: generated firewall traffic events (bench/fixtures/firewall.ts,
// ~715 B) pushed to a `custom` integration, stream firewall; the mapping is published
// through the API first (the stream's definition appears when its first event is
// quarantined for want of a mapping; that probe is reprocessed once the version is live, and
// a second probe must reach the files before the runs start).
//
// A run pushes --count events in NDJSON requests of --batch events, --inflight requests at a
// time, and ends when every event is a line in the destination's files. Reported per run
// (median of --runs, after a warm-up of a tenth of the events):
//   accept        events answered 200 / time from the first push to the last answer
//   end to end    events / time from the first push until the last event is in the files
//   per CPU s     events / CPU seconds of the Weir processes in that time (/proc/<pid>/stat
//                 utime + stime, every thread): "events/s per core". PostgreSQL's and
//                 Redis's own CPU is not counted.
//   MB/s per core bytes pushed (request bodies, 10^6 bytes) / those CPU seconds
//   RSS           of each Weir process: idle (VmRSS 2 s after every process has started),
//                 sampled (the largest VmRSS seen every 100 ms during the run) and VmHWM
//                 (the kernel's high-water mark since the process started, read at the end
//                 of the run: it includes the warm-up and earlier runs)
// After the runs the ledger must say delivered = pushed (probes included), pending 0,
// unaccounted 0.
//
// --ab <dir>: A/B of two builds. <dir> is another checkout of the repository with its own
// `npm ci` and `npm run build` (a git worktree of an earlier commit, say). Every round runs
// both builds, A (this checkout's dist/) and B (<dir>'s dist/, spawned with cwd <dir>), in
// alternating order (A B, B A, ...), each on a fresh deployment (fresh data directory or
// database, its own warm-up) with the same events; medians of the --runs rounds side by
// side with the ratio A/B.
// --store off: the organization's event store route (every new organization gets one:
// docs/search.md) is disabled, so events go to the files only. --store-ab: A/B of the same
// build with the event store on (A) and off (B), rounds alternating as --ab's: what writing
// the store costs the pass.
// --rules N: the organization gets N detection rules before the warm-up (bench/fixtures/
// detection-rules.ts: mixed conditions over the events' fields, a tenth of them thresholds that
// count every failed sign-in per user). --rules-ab N: A/B of the same build with N rules (A)
// and none (B), rounds alternating as --ab's: what detection costs the pass.
// --telemetry-ab: A/B of the same build with telemetry on (A: OTLP metrics and traces, every
// batch sampled, to a sink in the bench process; /metrics on) and off (B): what the spans of
// the accept, the pass's stages and the deliveries and the metrics cost.
// --profile: Weir runs with --cpu-prof; the samples of the measured runs are summarised by
// category (bench/profile-summary.ts). Not with --ab.
//
//   npm run build && npx tsx bench/pipeline.ts [--mode embedded|postgres] [--events okta|firewall]
//     [--count 100000] [--runs 3] [--batch 1000] [--inflight 4] [--workers 1] [--dispatchers 1]
//     [--ab <dir> | --store-ab | --rules-ab 100 | --telemetry-ab] [--store on|off] [--rules 0] [--profile] [--node-options="--max-semi-space-size=32"]
//   (--events <number> is read as --count, the spelling before --events took a source)
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { createDestination, createRoute, ledgerTotals, waitFor } from '../test/support/delivery-api.js';
import { http, setUpIngestion, type IngestSetup } from '../test/support/ingest.js';
import { benchRules } from './fixtures/detection-rules.js';
import { FIREWALL_MAPPING, FIREWALL_PLATFORM, FIREWALL_STREAM, firewallLines } from './fixtures/firewall.js';
import { formatSummary, readProfileFiles, summarise, type Window } from './profile-summary.js';
import { cpuOf, statusKb } from './proc.js';

const { values } = parseArgs({
  options: {
    mode: { type: 'string', default: 'embedded' },
    events: { type: 'string', default: 'okta' },
    count: { type: 'string' },
    runs: { type: 'string', default: '3' },
    batch: { type: 'string', default: '1000' },
    inflight: { type: 'string', default: '4' },
    workers: { type: 'string', default: '1' },
    dispatchers: { type: 'string', default: '1' },
    ab: { type: 'string' },
    store: { type: 'string', default: 'on' },
    'store-ab': { type: 'boolean', default: false },
    rules: { type: 'string', default: '0' },
    'rules-ab': { type: 'string' },
    'telemetry-ab': { type: 'boolean', default: false },
    profile: { type: 'boolean', default: false },
    'node-options': { type: 'string', default: '' },
  },
});
const ROOT = path.resolve(import.meta.dirname, '..');
const numericEvents = /^\d+$/.test(values.events);
const source: 'okta' | 'firewall' = numericEvents
  ? 'okta'
  : values.events === 'okta' || values.events === 'firewall'
    ? values.events
    : fail(`--events okta or firewall, not ${values.events}`);
const eventsPerRun = Number(values.count ?? (numericEvents ? values.events : '100000'));
const runs = Number(values.runs);
const batchSize = Number(values.batch);
const inflight = Number(values.inflight);
const STREAM = source === 'okta' ? 'system_log' : FIREWALL_STREAM;
const PLATFORM = source === 'okta' ? 'okta' : FIREWALL_PLATFORM;
/** Passed to Weir explicitly, so the firewall setup knows how long a publication takes to reach the workers. */
const MAPPING_REFRESH_MS = 5000;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
const mib = (kb: number) => (kb / 1024).toFixed(0);
const nowUs = () => Number(process.hrtime.bigint() / 1000n);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function fail(message: string): never {
  throw new Error(message);
}

/** A build of Weir: a checkout with its dist/ built. */
interface Build {
  label: 'A' | 'B';
  root: string;
  /** Whether the organization's event store route stays enabled (default: --store). */
  store?: boolean;
  /** Detection rules the organization gets (default: --rules). */
  rules?: number;
  /** OTLP metrics and traces (every batch sampled) to a local sink, and /metrics on (--telemetry-ab). */
  telemetry?: boolean;
}

interface Role {
  name: string;
  proc: ChildProcess;
  /** Resolves at "weir started" with the API address (undefined for roles without one). */
  started: Promise<string | undefined>;
}

/** WEIR_PASS_THREADS of the benchmark's environment reaches Weir (the pass on the main thread: 0). */
const passThreads =
  process.env.WEIR_PASS_THREADS !== undefined ? { WEIR_PASS_THREADS: process.env.WEIR_PASS_THREADS } : {};

function startRole(build: Build, role: string, env: Record<string, string>, profileDir?: string): Role {
  const extra = values['node-options'].split(' ').filter(Boolean);
  const args = [
    ...extra,
    ...(profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : []),
    'dist/src/main.js',
    role,
  ];
  const proc = spawn(process.execPath, args, {
    cwd: build.root,
    env: { PATH: process.env.PATH, LOG_LEVEL: 'info', ...passThreads, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const started = new Promise<string | undefined>((resolve, reject) => {
    let buf = '';
    const onData = (c: Buffer) => {
      buf += c.toString();
      const line = buf.split('\n').find((l) => l.includes('"weir started"'));
      if (line) {
        proc.stdout?.off('data', onData);
        proc.stdout?.resume(); // log lines are drained, as a shipper would
        resolve((JSON.parse(line) as { address?: string }).address);
      }
    };
    proc.stdout?.on('data', onData);
    proc.on('exit', (code) => reject(new Error(`${role} exited with ${String(code)}`)));
  });
  started.catch(() => undefined);
  return { name: role, proc, started };
}

/** The largest VmRSS of each process, sampled every 100 ms between start() and stop(). */
class RssSampler {
  private max: number[];
  private timer: NodeJS.Timeout | undefined;
  constructor(private readonly pids: number[]) {
    this.max = pids.map(() => 0);
  }
  start(): void {
    const sample = () => this.pids.forEach((pid, i) => (this.max[i] = Math.max(this.max[i]!, statusKb(pid, 'VmRSS'))));
    sample();
    this.timer = setInterval(sample, 100);
  }
  stop(): number[] {
    clearInterval(this.timer);
    this.pids.forEach((pid, i) => (this.max[i] = Math.max(this.max[i]!, statusKb(pid, 'VmRSS'))));
    return this.max;
  }
}

/**
 * Lines written in the destination's directory, read incrementally: finished files are
 * counted once; each writer's `.current` file from where the last look stopped (a new
 * inode after a rotation starts from 0, the renamed one being counted as a finished file).
 */
class LineCounter {
  private finished = new Map<string, number>();
  private current = new Map<string, { ino: number; offset: number; lines: number }>();
  constructor(private readonly dir: string) {}

  async count(): Promise<number> {
    let names: string[];
    try {
      names = readdirSync(this.dir);
    } catch {
      return 0;
    }
    let total = 0;
    const live = new Set<string>();
    for (const name of names) {
      if (name.endsWith('.ndjson')) {
        let n = this.finished.get(name);
        if (n === undefined) {
          n = (await this.countFrom(path.join(this.dir, name))).lines;
          this.finished.set(name, n);
        }
        total += n;
      } else if (name.endsWith('.ndjson.current')) {
        live.add(name);
        try {
          const file = path.join(this.dir, name);
          const prev = this.current.get(name);
          const r = await this.countFrom(file, prev);
          this.current.set(name, r);
          total += r.lines;
        } catch {
          // Renamed between the listing and the read: counted as a finished file next time.
        }
      }
    }
    for (const name of [...this.current.keys()]) if (!live.has(name)) this.current.delete(name);
    return total;
  }

  private async countFrom(file: string, prev?: { ino: number; offset: number; lines: number }) {
    const h = await open(file, 'r');
    try {
      const st = await h.stat();
      let { offset, lines } = prev && prev.ino === st.ino && prev.offset <= st.size ? prev : { offset: 0, lines: 0 };
      const buf = Buffer.allocUnsafe(1 << 20);
      for (;;) {
        const { bytesRead } = await h.read(buf, 0, buf.length, offset);
        if (bytesRead === 0) break;
        // Only whole lines count: a batch is one append, and its last byte is a newline.
        for (let i = buf.indexOf(10); i !== -1 && i < bytesRead; i = buf.indexOf(10, i + 1)) lines++;
        offset += bytesRead;
      }
      return { ino: st.ino, offset, lines };
    } finally {
      await h.close();
    }
  }
}

const oktaFixtures = JSON.parse(
  readFileSync(path.join(ROOT, 'src/connectors/okta/fixtures/system_log.json'), 'utf8'),
) as Record<string, unknown>[];
/** Number of the next generated firewall event (events are distinct within a deployment; --ab gives both builds the same ones). */
let nextFirewall = 0;

/** NDJSON request bodies of `count` events, each event distinct. */
function bodies(count: number): string[] {
  const out: string[] = [];
  for (let start = 0; start < count; start += batchSize) {
    const n = Math.min(batchSize, count - start);
    if (source === 'firewall') {
      out.push(firewallLines(nextFirewall, n).join('\n'));
      nextFirewall += n;
      continue;
    }
    const lines: string[] = [];
    for (let i = start; i < start + n; i++) {
      lines.push(
        JSON.stringify({
          ...oktaFixtures[i % oktaFixtures.length],
          uuid: randomUUID(),
          published: new Date().toISOString(),
        }),
      );
    }
    out.push(lines.join('\n'));
  }
  return out;
}

interface RunResult {
  build: Build['label'];
  accept: number;
  e2e: number;
  perCpu: number;
  cpu: number;
  /** Bytes of the request bodies. */
  bytes: number;
  /** Input MB (10^6 bytes) per Weir CPU second. */
  mbPerCore: number;
  window: Window;
  retries: number;
  /** CPU seconds of each process, in the order started. */
  cpuByRole: { role: string; cpu: number }[];
  /** kB per process, in the order started: the largest VmRSS sampled during the run, VmHWM at its end, VmRSS once started. */
  rssMax: number[];
  hwm: number[];
  idle: number[];
}

async function pushBodies(url: string, token: string, payloads: string[]): Promise<number> {
  let next = 0;
  let retries = 0;
  const one = async (): Promise<void> => {
    while (next < payloads.length) {
      const body = payloads[next++]!;
      for (;;) {
        const res = await fetch(`${url}/api/ingest/${STREAM}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/x-ndjson' },
          body,
        });
        const text = await res.text();
        if (res.status === 200) break;
        // Backpressure (429 / 503) says when to come back; anything else is a failure of the benchmark.
        if (res.status !== 429 && res.status !== 503) throw new Error(`push: ${res.status} ${text.slice(0, 300)}`);
        retries++;
        await sleep(Math.min(1000, Number(res.headers.get('retry-after') ?? 0.2) * 1000));
      }
    }
  };
  await Promise.all(Array.from({ length: inflight }, one));
  return retries;
}

async function waitForLines(counter: LineCounter, expected: number, what: string, timeoutMs = 600_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lines = await counter.count();
  while (lines < expected) {
    if (Date.now() > deadline) throw new Error(`${what}: ${lines} of ${expected} events reached the files in time`);
    await sleep(50);
    lines = await counter.count();
  }
  if (lines !== expected) throw new Error(`${what}: ${lines} lines in the files for ${expected} events pushed`);
}

/** A running Weir with its destination, route and (firewall) published mapping. */
interface Deployment {
  build: Build;
  url: string;
  setup: IngestSetup;
  weir: Role[];
  counter: LineCounter;
  /** Events pushed so far (probes and warm-up included); every one must become a line. */
  pushed: number;
  /** Copies each event makes: the file's, and the event store's when on. */
  copies: number;
  idle: number[];
  stop(): Promise<void>;
}

async function run(d: Deployment, payloads: string[], events: number): Promise<RunResult> {
  const pids = d.weir.map((r) => r.proc.pid!);
  const bytes = payloads.reduce((n, b) => n + Buffer.byteLength(b), 0);
  const sampler = new RssSampler(pids);
  sampler.start();
  const cpu0 = pids.map(cpuOf);
  const us0 = nowUs();
  const t0 = performance.now();
  const retries = await pushBodies(d.url, d.setup.integrations[0]!.token, payloads);
  const accepted = performance.now();
  await waitForLines(d.counter, d.pushed + events, 'run');
  const end = performance.now();
  const us1 = nowUs();
  const cpuByRole = pids.map((pid, i) => ({ role: d.weir[i]!.name, cpu: cpuOf(pid) - cpu0[i]! }));
  const rssMax = sampler.stop();
  const hwm = pids.map((pid) => statusKb(pid, 'VmHWM'));
  d.pushed += events;
  const cpu = cpuByRole.reduce((n, r) => n + r.cpu, 0);
  return {
    build: d.build.label,
    accept: events / ((accepted - t0) / 1000),
    e2e: events / ((end - t0) / 1000),
    perCpu: events / cpu,
    cpu,
    bytes,
    mbPerCore: bytes / 1e6 / cpu,
    window: [us0, us1],
    retries,
    cpuByRole,
    rssMax,
    hwm,
    idle: d.idle,
  };
}

async function settledLedger(d: Deployment): Promise<void> {
  const deadline = Date.now() + 30_000;
  const delivered = d.pushed * d.copies;
  for (;;) {
    const t = await ledgerTotals(d.url, { cookie: d.setup.cookie });
    if (t.delivered === delivered && t.pending === 0 && t.unaccounted === 0) return;
    if (Date.now() > deadline) throw new Error(`ledger does not balance (${delivered} pushed): ${JSON.stringify(t)}`);
    await sleep(200);
  }
}

/**
 * Publishes the firewall mapping through the API: a first event creates the stream's
 * definition (it waits in the quarantine: no mapping yet), a version is published, the
 * quarantined event is reprocessed with it, and, once the workers have had the time to load
 * the version, a second event must reach the files. Returns the events it pushed (2).
 */
async function publishFirewallMapping(d: Deployment): Promise<number> {
  const headers = { cookie: d.setup.cookie };
  const org = d.setup.organizationId;
  const integration = d.setup.integrations[0]!;
  const probe = async (i: number) => {
    const res = await fetch(`${d.url}/api/ingest/${STREAM}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${integration.token}`, 'content-type': 'application/x-ndjson' },
      body: firewallLines(i, 1, 7)[0],
    });
    if (res.status !== 200) throw new Error(`probe push: ${res.status} ${await res.text()}`);
  };
  await probe(0);
  const definition = await waitFor(
    `the mapping definition of ${PLATFORM}/${STREAM}`,
    async () => {
      const res = await http(
        d.url,
        'GET',
        `/api/mappings?platform=${PLATFORM}&stream=${STREAM}&organization_id=${org}`,
        undefined,
        headers,
      );
      if (res.status !== 200) throw new Error(`mappings: ${res.status} ${JSON.stringify(res.json)}`);
      const items = res.json.items as { id: string; organization_id: number | null }[];
      return items.find((x) => x.organization_id === org)?.id;
    },
    60_000,
  );
  const published = await http(
    d.url,
    'POST',
    `/api/mappings/${definition}/versions`,
    { document: FIREWALL_MAPPING, comment: 'bench/pipeline.ts --events firewall' },
    headers,
  );
  if (published.status !== 201) throw new Error(`publish: ${published.status} ${JSON.stringify(published.json)}`);
  const quarantined = await waitFor(
    'the first probe in the quarantine',
    async () => {
      const res = await http(
        d.url,
        'GET',
        `/api/quarantine?integration_id=${integration.id}&stream=${STREAM}`,
        undefined,
        headers,
      );
      if (res.status !== 200) throw new Error(`quarantine: ${res.status} ${JSON.stringify(res.json)}`);
      const items = res.json.items as { id: string; error_kind: string }[];
      if (items.length > 1) throw new Error(`quarantine: ${JSON.stringify(items)}`);
      return items[0];
    },
    30_000,
  );
  if (quarantined.error_kind !== 'no_mapping')
    throw new Error(`the first probe was quarantined as ${quarantined.error_kind}`);
  const reprocessed = await http(d.url, 'POST', `/api/quarantine/${quarantined.id}/reprocess`, undefined, headers);
  if (reprocessed.status !== 200 || reprocessed.json.status !== 'reprocessed')
    throw new Error(`reprocess: ${reprocessed.status} ${JSON.stringify(reprocessed.json)}`);
  await waitForLines(d.counter, 1, 'the reprocessed probe', 60_000).catch(async (err: Error) => {
    throw new Error(
      `${err.message}; ledger ${JSON.stringify(await ledgerTotals(d.url, headers))}; reprocess answered ${JSON.stringify(reprocessed.json)}`,
    );
  });
  await sleep(MAPPING_REFRESH_MS + 1000);
  await probe(1);
  await waitForLines(d.counter, 2, 'the second probe (is the published mapping live in the workers?)', 60_000);
  const still = await http(d.url, 'GET', `/api/quarantine?integration_id=${integration.id}`, undefined, headers);
  if (Number(still.json.total ?? (still.json.items as unknown[]).length) !== 0)
    throw new Error(`events in the quarantine after the setup: ${JSON.stringify(still.json)}`);
  return 2;
}

/** A fresh database for one deployment: a data directory embedded, a PostgreSQL database and Redis prefix distributed. */
async function freshEnvironment(mode: string): Promise<{ env: Record<string, string>; drop(): Promise<void> }> {
  if (mode === 'embedded') {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'weir-bench-'));
    return { env: { WEIR_DATA_DIR: dataDir }, drop: async () => rmSync(dataDir, { recursive: true, force: true }) };
  }
  if (mode !== 'postgres') throw new Error('--mode embedded or postgres');
  const base = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const name = `weir_bench_${Date.now()}_${Math.floor(Math.random() * 1e6)}`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  await admin.query(`create database ${name}`);
  const url = new URL(base);
  url.pathname = `/${name}`;
  return {
    env: {
      DATABASE_URL: url.toString(),
      REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
      WEIR_REDIS_PREFIX: name,
      WEIR_SECRET_KEY: 'cd'.repeat(32),
    },
    drop: async () => {
      await admin.query(`drop database if exists ${name} with (force)`);
      await admin.end();
    },
  };
}

/** Starts a build on a fresh environment, sets up the destination, the route and (firewall) the mapping, and runs the warm-up. */
async function deploy(build: Build, mode: string, profileDir?: string): Promise<Deployment> {
  const environment = await freshEnvironment(mode);
  const fileRoot = mkdtempSync(path.join(tmpdir(), 'weir-bench-files-'));
  const common = {
    ...environment.env,
    WEIR_FILE_SINK_ROOT: fileRoot,
    WEIR_MAPPING_REFRESH_MS: String(MAPPING_REFRESH_MS),
    ...(build.telemetry ? await telemetryEnv() : {}),
  };
  const weir: Role[] = [];
  const stop = async () => {
    for (const r of weir) r.proc.kill('SIGTERM');
    await Promise.all(
      weir.map((r) =>
        r.proc.exitCode !== null || r.proc.signalCode !== null
          ? undefined
          : new Promise((res) => r.proc.once('exit', res)),
      ),
    );
    rmSync(fileRoot, { recursive: true, force: true });
    await environment.drop();
  };
  try {
    if (mode === 'embedded') weir.push(startRole(build, 'all', { ...common, PORT: '0' }, profileDir));
    else {
      weir.push(startRole(build, 'api', { ...common, PORT: '0' }, profileDir));
      for (let i = 0; i < Number(values.workers); i++) weir.push(startRole(build, 'worker', common, profileDir));
      for (let i = 0; i < Number(values.dispatchers); i++)
        weir.push(startRole(build, 'dispatcher', common, profileDir));
    }
    const url = (await weir[0]!.started)!;
    await Promise.all(weir.map((r) => r.started));
    // Idle: 2 s after every process said it started (migrations and the built-in catalog are done by then), before any request.
    await sleep(2000);
    const idle = weir.map((r) => statusKb(r.proc.pid!, 'VmRSS'));
    const setup = await setUpIngestion(url, [PLATFORM]);
    const headers = { cookie: setup.cookie };
    const destination = await createDestination(url, headers, {
      name: 'bench files',
      type: 'file',
      organization_id: setup.organizationId,
      config: { path: 'bench' },
      // max_bytes raised so that max_events is the bound (5,000 Okta events are ~17 MB).
      delivery: { max_events: 5000, max_wait_ms: 200, max_bytes: 64 * 1_048_576 },
    });
    await createRoute(url, headers, {
      name: 'everything to files',
      organization_id: setup.organizationId,
      destination_ids: [destination],
    });
    const store = build.store ?? values.store !== 'off';
    if (!store) await disableEventStoreRoute(url, headers, setup.organizationId);
    const rules = build.rules ?? Number(values.rules);
    if (rules > 0) {
      for (const rule of benchRules(rules)) {
        const res = await http(
          url,
          'POST',
          '/api/detections/rules',
          { organization_id: setup.organizationId, ...rule },
          headers,
        );
        if (res.status !== 201) throw new Error(`detection rule: ${res.status} ${JSON.stringify(res.json)}`);
      }
      // Workers read rules at their refresh.
      await sleep(MAPPING_REFRESH_MS + 500);
    }
    // Routes apply at the next dispatch cycle.
    await sleep(500);
    const d: Deployment = {
      build,
      url,
      setup,
      weir,
      counter: new LineCounter(path.join(fileRoot, `org-${setup.organizationId}`, 'bench')),
      pushed: 0,
      copies: store ? 2 : 1,
      idle,
      stop,
    };
    if (source === 'firewall') d.pushed += await publishFirewallMapping(d);
    const warmup = Math.max(batchSize, Math.round(eventsPerRun / 10 / batchSize) * batchSize);
    await run(d, bodies(warmup), warmup);
    return d;
  } catch (err) {
    await stop().catch(() => undefined);
    throw err;
  }
}

const perRole = (d: { weir: Role[] } | undefined, kb: number[]) =>
  kb.length === 1 ? mib(kb[0]!) : kb.map((k, i) => `${d?.weir[i]?.name ?? i} ${mib(k)}`).join(' / ');

function printRun(label: string, d: Deployment, r: RunResult): void {
  console.log(
    `  ${label}: accept ${fmt(r.accept)} ev/s, end to end ${fmt(r.e2e)} ev/s, Weir CPU ${r.cpu.toFixed(1)} s = ${fmt(r.perCpu)} events per CPU s, ${r.mbPerCore.toFixed(2)} MB/s per core` +
      (r.cpuByRole.length > 1
        ? ` (${r.cpuByRole.map((x) => `${x.role} ${x.cpu.toFixed(1)} s = ${fmt(eventsPerRun / x.cpu)} ev/CPU s`).join(', ')})`
        : '') +
      `; RSS MiB idle ${perRole(d, r.idle)}, sampled max ${perRole(d, r.rssMax)}, VmHWM ${perRole(d, r.hwm)}` +
      (r.retries ? `, ${r.retries} pushes retried (backpressure)` : ''),
  );
}

/** Median of each process's figure across runs. */
const medianByRole = (rs: RunResult[], pick: (r: RunResult) => number[]) =>
  rs[0] ? pick(rs[0]).map((_, i) => median(rs.map((r) => pick(r)[i]!))) : [];

function tableRow(label: string, build: string, d: Deployment | undefined, rs: RunResult[]): string {
  return `| ${label} | ${build} | ${fmt(median(rs.map((r) => r.accept)))} | ${fmt(median(rs.map((r) => r.e2e)))} | ${median(rs.map((r) => r.cpu)).toFixed(1)} | ${fmt(median(rs.map((r) => r.perCpu)))} | ${median(rs.map((r) => r.mbPerCore)).toFixed(2)} | ${perRole(
    d,
    medianByRole(rs, (r) => r.idle),
  )} | ${perRole(
    d,
    medianByRole(rs, (r) => r.rssMax),
  )} | ${perRole(
    d,
    medianByRole(rs, (r) => r.hwm),
  )} |`;
}

const TABLE_HEAD =
  '| deployment | build | accept events/s | end to end events/s | Weir CPU s a run | events per CPU s | input MB/s per core | idle RSS MiB | peak RSS MiB (sampled 100 ms) | VmHWM MiB |\n|---|---|---|---|---|---|---|---|---|---|';

function deploymentLabel(mode: string): string {
  return mode === 'embedded'
    ? 'embedded (`weir all`)'
    : `PostgreSQL + Redis: 1 api, ${values.workers} worker(s), ${values.dispatchers} dispatcher(s)`;
}

/** One deployment, a warm-up and --runs runs (as before --ab existed). */
async function single(mode: string): Promise<void> {
  const build: Build = { label: 'A', root: ROOT };
  const profileDir = values.profile ? mkdtempSync(path.join(tmpdir(), 'weir-bench-prof-')) : undefined;
  const results: RunResult[] = [];
  const d = await deploy(build, mode, profileDir);
  try {
    for (let i = 0; i < runs; i++) {
      const r = await run(d, bodies(eventsPerRun), eventsPerRun);
      results.push(r);
      printRun(`run ${i + 1}`, d, r);
    }
    await settledLedger(d);
    console.log(`\n${TABLE_HEAD}\n${tableRow(deploymentLabel(mode), 'this checkout', d, results)}`);
  } finally {
    await d.stop();
  }
  if (profileDir) {
    const files = readProfileFiles([profileDir]);
    const windows = results.map((r) => r.window);
    const cpu = results.reduce((n, r) => n + r.cpu, 0);
    console.log(
      `\n${formatSummary(
        summarise(
          files.map((f) => f.profile),
          windows,
          25,
        ),
        `profile of ${mode}, every Weir process, the ${runs} measured run(s)`,
      )}`,
    );
    console.log(
      `\n(the processes' CPU in those runs: ${cpu.toFixed(1)} s; the rest of it is off the JavaScript thread: zlib and fs on the thread pool, GC helpers)`,
    );
    if (d.weir.length > 1) {
      for (const [i, role] of d.weir.entries()) {
        const mine = files.filter((f) => f.pid === role.proc.pid).map((f) => f.profile);
        const roleCpu = results.reduce((n, r) => n + (r.cpuByRole[i]?.cpu ?? 0), 0);
        console.log(
          `\n${formatSummary(summarise(mine, windows, 12), `profile of the ${role.name} process (its CPU in those runs: ${roleCpu.toFixed(1)} s)`)}`,
        );
      }
    }
    // One profile per JavaScript thread (the main thread and the pass's worker threads).
    const threads = files.filter((f) => f.pid === d.weir[0]!.proc.pid);
    if (d.weir.length === 1 && threads.length > 1) {
      for (const f of threads)
        console.log(
          `\n${formatSummary(summarise([f.profile], windows, 12), `profile of one thread of ${d.weir[0]!.name}: ${path.basename(f.file)}`)}`,
        );
    }
    if (process.env.WEIR_BENCH_KEEP_PROFILE) console.log(`profiles kept in ${profileDir}`);
    else rmSync(profileDir, { recursive: true, force: true });
  }
}

/** Turns off the route every new organization gets to its event store (docs/search.md). */
async function disableEventStoreRoute(
  url: string,
  headers: Record<string, string>,
  organizationId: number,
): Promise<void> {
  const routes = await http(url, 'GET', `/api/collectors/routes?organization_id=${organizationId}`, undefined, headers);
  const list = routes.json as unknown as { id: string; name: string }[];
  const route = list.find((r) => r.name === 'Everything to the event store');
  if (!route) throw new Error('the organization has no event store route');
  const res = await http(url, 'PUT', `/api/collectors/routes/${route.id}`, { enabled: false }, headers);
  if (res.status !== 200) throw new Error(`disabling the event store route: ${res.status} ${JSON.stringify(res.json)}`);
}

/** --ab: every round runs both builds on fresh deployments with the same events, in alternating order. */
async function ab(mode: string, other: string | undefined): Promise<void> {
  const builds: Build[] = other
    ? [
        { label: 'A', root: ROOT },
        { label: 'B', root: path.resolve(other) },
      ]
    : values['rules-ab']
      ? [
          { label: 'A', root: ROOT, rules: Number(values['rules-ab']) },
          { label: 'B', root: ROOT, rules: 0 },
        ]
      : values['telemetry-ab']
        ? [
            { label: 'A', root: ROOT, telemetry: true },
            { label: 'B', root: ROOT, telemetry: false },
          ]
        : [
            { label: 'A', root: ROOT, store: true },
            { label: 'B', root: ROOT, store: false },
          ];
  for (const b of builds)
    if (!existsSync(path.join(b.root, 'dist/src/main.js')))
      throw new Error(`${b.label}: no ${path.join(b.root, 'dist/src/main.js')} (npm ci && npm run build there first)`);
  console.log(
    other
      ? `A = ${builds[0]!.root} (${gitDescribe(builds[0]!.root)}), B = ${builds[1]!.root} (${gitDescribe(builds[1]!.root)})`
      : values['rules-ab']
        ? `A = ${values['rules-ab']} detection rules, B = none; both ${builds[0]!.root} (${gitDescribe(builds[0]!.root)})`
        : values['telemetry-ab']
          ? `A = telemetry on (OTLP metrics and every trace to a local sink, /metrics), B = off; both ${builds[0]!.root} (${gitDescribe(builds[0]!.root)})`
          : `A = the event store on, B = off; both ${builds[0]!.root} (${gitDescribe(builds[0]!.root)})`,
  );
  const results: Record<Build['label'], RunResult[]> = { A: [], B: [] };
  let last: Deployment | undefined;
  for (let round = 0; round < runs; round++) {
    const order = round % 2 === 0 ? builds : [...builds].reverse();
    // The same events for both builds of the round (each deployment is fresh: nothing is seen twice).
    const from = nextFirewall;
    let payloads: string[] | undefined;
    for (const build of order) {
      nextFirewall = from;
      const d = await deploy(build, mode);
      try {
        payloads ??= bodies(eventsPerRun);
        const r = await run(d, payloads, eventsPerRun);
        await settledLedger(d);
        results[build.label].push(r);
        printRun(`round ${round + 1}, ${build.label}`, d, r);
        last = d;
      } finally {
        await d.stop();
      }
    }
  }
  console.log(`\n${TABLE_HEAD}`);
  for (const b of builds) console.log(tableRow(deploymentLabel(mode), `${b.label}: ${b.root}`, last, results[b.label]));
  const rows: [string, (r: RunResult) => number][] = [
    ['accept events/s', (r) => r.accept],
    ['end to end events/s', (r) => r.e2e],
    ['Weir CPU s a run', (r) => r.cpu],
    ['events per CPU s', (r) => r.perCpu],
    ['input MB/s per core', (r) => r.mbPerCore],
    ['peak RSS MiB, all processes (sampled)', (r) => r.rssMax.reduce((a, b) => a + b, 0) / 1024],
    ['VmHWM MiB, all processes', (r) => r.hwm.reduce((a, b) => a + b, 0) / 1024],
    ['idle RSS MiB, all processes', (r) => r.idle.reduce((a, b) => a + b, 0) / 1024],
  ];
  console.log(`\n| median of ${runs} rounds | A | B | A/B |\n|---|---|---|---|`);
  for (const [name, pick] of rows) {
    const a = median(results.A.map(pick));
    const b = median(results.B.map(pick));
    const show = (x: number) => (x < 100 ? x.toFixed(2) : fmt(x));
    console.log(`| ${name} | ${show(a)} | ${show(b)} | ${(a / b).toFixed(2)} |`);
  }
}

let otlpSink: Promise<string> | undefined;
/**
 * --telemetry-ab's A side: OTLP/HTTP to a sink in this process that reads and drops every export
 * (what a collector on the same host costs Weir's exporter), every trace sampled, /metrics on.
 */
function telemetryEnv(): Promise<Record<string, string>> {
  otlpSink ??= new Promise((resolve) => {
    const server = createServer((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
    });
    server.unref();
    server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`));
  });
  return otlpSink.then((endpoint) => ({
    OTEL_ENABLED: 'true',
    OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
    OTEL_TRACES_SAMPLER_RATIO: '1',
    OTEL_METRIC_EXPORT_INTERVAL_MS: '15000',
    WEIR_PROMETHEUS_ENABLED: 'true',
  }));
}

function gitDescribe(dir: string): string {
  try {
    return execFileSync('git', ['-C', dir, 'log', '-1', '--format=%h %s'], { encoding: 'utf8' }).trim().slice(0, 80);
  } catch {
    return 'not a git checkout';
  }
}

async function main(): Promise<void> {
  console.log(
    `node ${process.version}; ${source} events (${PLATFORM}/${STREAM}); ${fmt(eventsPerRun)} events a run in requests of ${batchSize}, ${inflight} in flight; median of ${runs}; load average ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`,
  );
  if (values.ab || values['store-ab'] || values['rules-ab'] || values['telemetry-ab']) {
    if (values.profile)
      throw new Error('--profile is not available with --ab, --store-ab, --rules-ab or --telemetry-ab');
    await ab(values.mode, values.ab);
  } else await single(values.mode);
}

await main();
