// End-to-end ingestion benchmark: HTTP push in NDJSON batches -> durable accept -> normalized.
// Drives a real Weir deployment with autocannon: embedded (`weir all`: PGlite, database queue)
// and distributed (PostgreSQL + Redis/BullMQ: one `weir api` and two `weir worker` processes).
// Reports, per run: accept throughput (events/s answered 200), p50/p99 accept latency of one
// batch, and end-to-end throughput (accepted events / time until the last one is normalized).
//
//   npm run build && npx tsx bench/ingest.ts [--mode embedded|postgres|both] [--runs 3]
//     [--seconds 15] [--connections 8] [--batch 500] [--workers 2]
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { randomUUID } from 'node:crypto';
import autocannon from 'autocannon';
import pg from 'pg';
import { processedEvents, setUpIngestion } from '../test/support/ingest.js';

const { values } = parseArgs({
  options: {
    mode: { type: 'string', default: 'both' },
    runs: { type: 'string', default: '3' },
    seconds: { type: 'string', default: '15' },
    connections: { type: 'string', default: '8' },
    batch: { type: 'string', default: '500' },
    workers: { type: 'string', default: '2' },
  },
});
const ROOT = path.resolve(import.meta.dirname, '..');
const runs = Number(values.runs);
const seconds = Number(values.seconds);
const connections = Number(values.connections);
const batchSize = Number(values.batch);
const workerCount = Number(values.workers);

function startRole(role: string, env: Record<string, string>): { proc: ChildProcess; url: Promise<string> } {
  const proc = spawn(process.execPath, ['dist/src/main.js', role], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = new Promise<string>((resolve, reject) => {
    let buf = '';
    const onData = (c: Buffer) => {
      buf += c.toString();
      const m = /"address":"(http:[^"]+)"/.exec(buf);
      if (m?.[1]) {
        proc.stdout?.off('data', onData);
        proc.stdout?.resume();
        resolve(m[1]);
      }
    };
    proc.stdout?.on('data', onData);
    proc.on('exit', (code) => reject(new Error(`${role} exited with ${String(code)}`)));
  });
  proc.stdout?.resume();
  // Workers never print an address: their promise rejects at exit, unobserved.
  url.catch(() => undefined);
  return { proc, url };
}

/** Distinct NDJSON bodies of `batchSize` Okta System Log events (~1 KB each), from the fixtures. */
function bodies(count: number): string[] {
  const fixtures = JSON.parse(
    readFileSync(path.join(ROOT, 'src/connectors/okta/fixtures/system_log.json'), 'utf8'),
  ) as Record<string, unknown>[];
  const out: string[] = [];
  for (let b = 0; b < count; b++) {
    const lines: string[] = [];
    for (let i = 0; i < batchSize; i++) {
      const event = {
        ...fixtures[(b * batchSize + i) % fixtures.length],
        uuid: randomUUID(),
        published: new Date().toISOString(),
      };
      lines.push(JSON.stringify(event));
    }
    out.push(lines.join('\n'));
  }
  return out;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? NaN;
}

interface RunResult {
  acceptRate: number;
  p50: number;
  p99: number;
  e2eRate: number;
  rejected: number;
}

interface Target {
  token: string;
  integrationId: number;
  cookie: string;
}

async function run(url: string, ctx: Target, payloads: string[]): Promise<RunResult> {
  const before = await processedEvents(url, ctx.cookie, ctx.integrationId);
  const started = Date.now();
  const r = await autocannon({
    url: `${url}/api/ingest/system_log`,
    connections,
    duration: seconds,
    requests: payloads.map((body) => ({
      method: 'POST' as const,
      body,
      headers: { authorization: `Bearer ${ctx.token}`, 'content-type': 'application/x-ndjson' },
    })),
  });
  const acceptedEvents = r['2xx'] * batchSize;
  if (process.env.BENCH_DEBUG)
    console.error(`load: ${r['2xx']} x 2xx, ${r.non2xx} non-2xx, ${r.errors} errors, ${r.timeouts} timeouts`);
  const loadMs = Date.now() - started;
  // Wait until the workers have normalized (or quarantined) every accepted event.
  const deadline = Date.now() + 600_000;
  let done = before;
  while (done - before < acceptedEvents && Date.now() < deadline) {
    await new Promise((res) => setTimeout(res, 250));
    done = await processedEvents(url, ctx.cookie, ctx.integrationId);
    if (process.env.BENCH_DEBUG) console.error(`processed ${done - before} of ${acceptedEvents}`);
  }
  const e2eMs = Date.now() - started;
  if (done - before < acceptedEvents)
    throw new Error(`only ${done - before} of ${acceptedEvents} events normalized in time`);
  return {
    acceptRate: acceptedEvents / (loadMs / 1000),
    p50: r.latency.p50,
    p99: r.latency.p99,
    e2eRate: acceptedEvents / (e2eMs / 1000),
    rejected: r.non2xx,
  };
}

async function benchDeployment(mode: string, env: Record<string, string>, distributed: boolean): Promise<void> {
  const procs: ChildProcess[] = [];
  try {
    let url: string;
    if (distributed) {
      const apiRole = startRole('api', { ...env, PORT: '0' });
      procs.push(apiRole.proc);
      url = await apiRole.url;
      for (let i = 0; i < workerCount; i++) procs.push(startRole('worker', env).proc);
    } else {
      const all = startRole('all', { ...env, PORT: '0' });
      procs.push(all.proc);
      url = await all.url;
    }
    const setup = await setUpIngestion(url, ['okta']);
    const integration = setup.integrations[0]!;
    const ctx: Target = { token: integration.token, integrationId: integration.id, cookie: setup.cookie };
    const payloads = bodies(16);
    const bytes = payloads.reduce((n, p) => n + Buffer.byteLength(p), 0) / payloads.length;
    await run(url, ctx, payloads); // warm-up (JIT, caches, mapping registry)
    const results: RunResult[] = [];
    for (let i = 0; i < runs; i++) results.push(await run(url, ctx, payloads));
    console.log(
      `${mode.padEnd(9)} accept ${median(results.map((x) => x.acceptRate))
        .toFixed(0)
        .padStart(7)} ev/s` +
        `  p50 ${median(results.map((x) => x.p50)).toFixed(0)} ms  p99 ${median(results.map((x) => x.p99)).toFixed(0)} ms` +
        `  end-to-end ${median(results.map((x) => x.e2eRate))
          .toFixed(0)
          .padStart(7)} ev/s` +
        `  non-2xx ${results.reduce((n, x) => n + x.rejected, 0)}` +
        `  (median of ${runs} x ${seconds}s, ${connections} connections, ${batchSize} events/request, ~${Math.round(bytes / batchSize)} B/event)`,
    );
  } finally {
    for (const p of procs) p.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 1500));
  }
}

async function main(): Promise<void> {
  console.log(`node ${process.version}`);
  if (values.mode === 'embedded' || values.mode === 'both') {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'weir-bench-'));
    try {
      await benchDeployment('embedded', { WEIR_DATA_DIR: dataDir }, false);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }
  if (values.mode === 'postgres' || values.mode === 'both') {
    const base = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
    const name = `weir_bench_${Date.now()}`;
    const admin = new pg.Client({ connectionString: base });
    await admin.connect();
    await admin.query(`create database ${name}`);
    const url = new URL(base);
    url.pathname = `/${name}`;
    try {
      await benchDeployment(
        `postgres+${workerCount}w`,
        {
          DATABASE_URL: url.toString(),
          REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
          WEIR_REDIS_PREFIX: name,
          WEIR_SECRET_KEY: 'cd'.repeat(32),
        },
        true,
      );
    } finally {
      await admin.query(`drop database if exists ${name} with (force)`);
      await admin.end();
    }
  }
}

await main();
