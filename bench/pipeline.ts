// The full path, end to end: HTTP push → durable accept → normalization → routing → the
// `file` destination's NDJSON files. Drives a real Weir started from `dist/`: embedded (one
// `weir all`: PGlite, the database queue) or distributed (PostgreSQL + Redis: one `weir api`,
// --workers `weir worker` and --dispatchers `weir dispatcher` processes). One file
// destination (config {path: 'bench'} under WEIR_FILE_SINK_ROOT, a temporary directory;
// delivery max_events 5000, max_wait_ms 200) and one catch-all route, made through the API.
// A run pushes --events Okta System Log events (the connector's fixtures, each with a new
// uuid and time) in NDJSON requests of --batch events, --inflight requests at a time, and
// ends when every event is a line in the destination's files. Reported per run (median of
// --runs, after a warm-up of a tenth of the events):
//   accept       events answered 200 / time from the first push to the last answer
//   end to end   events / time from the first push until the last event is in the files
//   per CPU s    events / CPU seconds of the Weir processes in that time (/proc/<pid>/stat
//                utime + stime, every thread): "events/s per core". PostgreSQL's and
//                Redis's own CPU is not counted.
// --profile: Weir runs with --cpu-prof; the samples of the measured runs are summarised by
// category (bench/profile-summary.ts).
//
//   npm run build && npx tsx bench/pipeline.ts [--mode embedded|postgres] [--events 100000]
//     [--runs 3] [--batch 1000] [--inflight 4] [--workers 1] [--dispatchers 1] [--profile]
//     [--node-options="--max-semi-space-size=32"]   (flags for Weir's node, to try runtime settings)
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { createDestination, createRoute, ledgerTotals } from '../test/support/delivery-api.js';
import { setUpIngestion, type IngestSetup } from '../test/support/ingest.js';
import { formatSummary, readProfileFiles, summarise, type Window } from './profile-summary.js';

const { values } = parseArgs({
  options: {
    mode: { type: 'string', default: 'embedded' },
    events: { type: 'string', default: '100000' },
    runs: { type: 'string', default: '3' },
    batch: { type: 'string', default: '1000' },
    inflight: { type: 'string', default: '4' },
    workers: { type: 'string', default: '1' },
    dispatchers: { type: 'string', default: '1' },
    profile: { type: 'boolean', default: false },
    'node-options': { type: 'string', default: '' },
  },
});
const ROOT = path.resolve(import.meta.dirname, '..');
const eventsPerRun = Number(values.events);
const runs = Number(values.runs);
const batchSize = Number(values.batch);
const inflight = Number(values.inflight);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
const nowUs = () => Number(process.hrtime.bigint() / 1000n);
const CLK_TCK = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;

interface Role {
  name: string;
  proc: ChildProcess;
  /** Resolves at "weir started" with the API address (undefined for roles without one). */
  started: Promise<string | undefined>;
}

function startRole(role: string, env: Record<string, string>, profileDir?: string): Role {
  const extra = values['node-options'].split(' ').filter(Boolean);
  const args = [...extra, ...(profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : []), 'dist/src/main.js', role];
  const proc = spawn(process.execPath, args, { cwd: ROOT, env: { PATH: process.env.PATH, LOG_LEVEL: 'info', ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
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

/** CPU seconds (user + system, every thread) of a process so far. */
function cpuOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLK_TCK;
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

const fixtures = JSON.parse(readFileSync(path.join(ROOT, 'src/connectors/okta/fixtures/system_log.json'), 'utf8')) as Record<string, unknown>[];

/** NDJSON request bodies of `count` events, each event distinct. */
function bodies(count: number): string[] {
  const out: string[] = [];
  for (let start = 0; start < count; start += batchSize) {
    const lines: string[] = [];
    for (let i = start; i < Math.min(start + batchSize, count); i++) {
      lines.push(JSON.stringify({ ...fixtures[i % fixtures.length], uuid: randomUUID(), published: new Date().toISOString() }));
    }
    out.push(lines.join('\n'));
  }
  return out;
}

interface RunResult {
  accept: number;
  e2e: number;
  perCpu: number;
  cpu: number;
  window: Window;
  retries: number;
  /** CPU seconds of each process, in the order started. */
  cpuByRole: { role: string; cpu: number }[];
}

async function push(url: string, token: string, payloads: string[]): Promise<number> {
  let next = 0;
  let retries = 0;
  const one = async (): Promise<void> => {
    while (next < payloads.length) {
      const body = payloads[next++]!;
      for (;;) {
        const res = await fetch(`${url}/api/ingest/system_log`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/x-ndjson' }, body });
        const text = await res.text();
        if (res.status === 200) break;
        // Backpressure (429 / 503) says when to come back; anything else is a failure of the benchmark.
        if (res.status !== 429 && res.status !== 503) throw new Error(`push: ${res.status} ${text.slice(0, 300)}`);
        retries++;
        await new Promise((r) => setTimeout(r, Math.min(1000, Number(res.headers.get('retry-after') ?? 0.2) * 1000)));
      }
    }
  };
  await Promise.all(Array.from({ length: inflight }, one));
  return retries;
}

async function run(url: string, setup: IngestSetup, weir: Role[], counter: LineCounter, already: number, events: number): Promise<RunResult> {
  const payloads = bodies(events);
  const pids = weir.map((r) => r.proc.pid!);
  const cpu0 = pids.map(cpuOf);
  const us0 = nowUs();
  const t0 = performance.now();
  const retries = await push(url, setup.integrations[0]!.token, payloads);
  const accepted = performance.now();
  const deadline = Date.now() + 600_000;
  let lines = await counter.count();
  while (lines < already + events) {
    if (Date.now() > deadline) throw new Error(`only ${lines - already} of ${events} events reached the files in time`);
    await new Promise((r) => setTimeout(r, 50));
    lines = await counter.count();
  }
  const end = performance.now();
  const us1 = nowUs();
  const cpuByRole = pids.map((pid, i) => ({ role: weir[i]!.name, cpu: cpuOf(pid) - cpu0[i]! }));
  const cpu = cpuByRole.reduce((n, r) => n + r.cpu, 0);
  if (lines !== already + events) throw new Error(`${lines - already} lines in the files for ${events} events pushed`);
  return { accept: events / ((accepted - t0) / 1000), e2e: events / ((end - t0) / 1000), perCpu: events / cpu, cpu, window: [us0, us1], retries, cpuByRole };
}

async function settledLedger(url: string, cookie: string, delivered: number): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const t = await ledgerTotals(url, { cookie });
    if (t.delivered === delivered && t.pending === 0 && t.unaccounted === 0) return;
    if (Date.now() > deadline) throw new Error(`ledger does not balance: ${JSON.stringify(t)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function bench(mode: string, env: Record<string, string>): Promise<void> {
  const fileRoot = mkdtempSync(path.join(tmpdir(), 'weir-bench-files-'));
  const profileDir = values.profile ? mkdtempSync(path.join(tmpdir(), 'weir-bench-prof-')) : undefined;
  const common = { ...env, WEIR_FILE_SINK_ROOT: fileRoot };
  const weir: Role[] = [];
  const results: RunResult[] = [];
  try {
    let url: string;
    if (mode === 'embedded') {
      weir.push(startRole('all', { ...common, PORT: '0' }, profileDir));
      url = (await weir[0]!.started)!;
    } else {
      weir.push(startRole('api', { ...common, PORT: '0' }, profileDir));
      for (let i = 0; i < Number(values.workers); i++) weir.push(startRole('worker', common, profileDir));
      for (let i = 0; i < Number(values.dispatchers); i++) weir.push(startRole('dispatcher', common, profileDir));
      url = (await weir[0]!.started)!;
      await Promise.all(weir.map((r) => r.started));
    }
    const setup = await setUpIngestion(url, ['okta']);
    const headers = { cookie: setup.cookie };
    const destination = await createDestination(url, headers, {
      name: 'bench files',
      type: 'file',
      organization_id: setup.organizationId,
      config: { path: 'bench' },
      // max_bytes raised so that max_events is the bound (5,000 Okta events are ~17 MB).
      delivery: { max_events: 5000, max_wait_ms: 200, max_bytes: 64 * 1_048_576 },
    });
    await createRoute(url, headers, { name: 'everything to files', organization_id: setup.organizationId, destination_ids: [destination] });
    // Routes apply at the next dispatch cycle.
    await new Promise((r) => setTimeout(r, 500));
    const counter = new LineCounter(path.join(fileRoot, 'bench'));
    const warmup = Math.max(batchSize, Math.round(eventsPerRun / 10 / batchSize) * batchSize);
    await run(url, setup, weir, counter, 0, warmup);
    let done = warmup;
    for (let i = 0; i < runs; i++) {
      const r = await run(url, setup, weir, counter, done, eventsPerRun);
      done += eventsPerRun;
      results.push(r);
      console.log(
        `  run ${i + 1}: accept ${fmt(r.accept)} ev/s, end to end ${fmt(r.e2e)} ev/s, Weir CPU ${r.cpu.toFixed(1)} s = ${fmt(r.perCpu)} events per CPU s` +
          (r.cpuByRole.length > 1 ? ` (${r.cpuByRole.map((x) => `${x.role} ${x.cpu.toFixed(1)} s = ${fmt(eventsPerRun / x.cpu)} ev/CPU s`).join(', ')})` : '') +
          (r.retries ? `, ${r.retries} pushes retried (backpressure)` : ''),
      );
    }
    await settledLedger(url, setup.cookie, done);
    const label = mode === 'embedded' ? 'embedded (`weir all`)' : `PostgreSQL + Redis: 1 api, ${values.workers} worker(s), ${values.dispatchers} dispatcher(s)`;
    console.log(
      `| ${label} | ${fmt(median(results.map((r) => r.accept)))} | ${fmt(median(results.map((r) => r.e2e)))} | ${median(results.map((r) => r.cpu)).toFixed(1)} | ${fmt(median(results.map((r) => r.perCpu)))} |`,
    );
  } finally {
    for (const r of weir) r.proc.kill('SIGTERM');
    await Promise.all(weir.map((r) => (r.proc.exitCode !== null ? undefined : new Promise((res) => r.proc.once('exit', res)))));
    rmSync(fileRoot, { recursive: true, force: true });
  }
  if (profileDir) {
    const files = readProfileFiles([profileDir]);
    const windows = results.map((r) => r.window);
    const cpu = results.reduce((n, r) => n + r.cpu, 0);
    console.log(`\n${formatSummary(summarise(files.map((f) => f.profile), windows, 25), `profile of ${mode}, every Weir process, the ${runs} measured run(s)`)}`);
    console.log(`\n(the processes' CPU in those runs: ${cpu.toFixed(1)} s; the rest of it is off the JavaScript thread: zlib and fs on the thread pool, GC helpers)`);
    if (weir.length > 1) {
      for (const [i, role] of weir.entries()) {
        const mine = files.filter((f) => f.pid === role.proc.pid).map((f) => f.profile);
        const roleCpu = results.reduce((n, r) => n + (r.cpuByRole[i]?.cpu ?? 0), 0);
        console.log(`\n${formatSummary(summarise(mine, windows, 12), `profile of the ${role.name} process (its CPU in those runs: ${roleCpu.toFixed(1)} s)`)}`);
      }
    }
    rmSync(profileDir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  console.log(`node ${process.version}; ${fmt(eventsPerRun)} events a run in requests of ${batchSize}, ${inflight} in flight; median of ${runs}`);
  console.log('| deployment | accept events/s | end to end events/s | Weir CPU s a run | events per CPU s |');
  console.log('|---|---|---|---|---|');
  if (values.mode === 'embedded') {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'weir-bench-'));
    try {
      await bench('embedded', { WEIR_DATA_DIR: dataDir });
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  } else if (values.mode === 'postgres') {
    const base = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
    const name = `weir_bench_${Date.now()}`;
    const admin = new pg.Client({ connectionString: base });
    await admin.connect();
    await admin.query(`create database ${name}`);
    const url = new URL(base);
    url.pathname = `/${name}`;
    try {
      await bench('postgres', {
        DATABASE_URL: url.toString(),
        REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
        WEIR_REDIS_PREFIX: name,
        WEIR_SECRET_KEY: 'cd'.repeat(32),
      });
    } finally {
      await admin.query(`drop database if exists ${name} with (force)`);
      await admin.end();
    }
  } else throw new Error('--mode embedded or postgres');
}

await main();
