// HTTP benchmark: requests/s and p50/p99 latency of /livez (no I/O) and /readyz (one
// database round trip and one cache ping), against a real `weir all` process, embedded
// and on PostgreSQL + Redis. The load generator runs in this process, the server in its
// own; each figure is the median of several runs.
//
//   npm run build && npx tsx bench/http.ts [--mode embedded|postgres|both] [--runs 3] [--seconds 10]
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import pg from 'pg';

const { values } = parseArgs({
  options: {
    mode: { type: 'string', default: 'both' },
    runs: { type: 'string', default: '3' },
    seconds: { type: 'string', default: '10' },
    connections: { type: 'string', default: '20' },
  },
});
const ROOT = path.resolve(import.meta.dirname, '..');
const runs = Number(values.runs);
const seconds = Number(values.seconds);
const connections = Number(values.connections);

async function startServer(env: Record<string, string>): Promise<{ url: string; proc: ChildProcess }> {
  const proc = spawn(process.execPath, ['dist/src/main.js', 'all'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    let buf = '';
    const onData = (c: Buffer) => {
      buf += c.toString();
      const m = /"address":"(http:[^"]+)"/.exec(buf);
      if (m?.[1]) {
        // From here on the server's log lines are drained unread, as a log shipper would.
        proc.stdout?.off('data', onData);
        proc.stdout?.resume();
        resolve({ url: m[1], proc });
      }
    };
    proc.stdout?.on('data', onData);
    proc.on('exit', (code) => reject(new Error(`server exited with ${String(code)}`)));
  });
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? NaN;
}

async function measure(url: string): Promise<{ rps: number; p50: number; p99: number }> {
  const r = await autocannon({ url, connections, duration: seconds, pipelining: 1 });
  if (r.non2xx > 0 || r.errors > 0) throw new Error(`${url}: ${r.non2xx} non-2xx, ${r.errors} errors`);
  return { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99 };
}

async function benchMode(mode: string, env: Record<string, string>): Promise<void> {
  const { url, proc } = await startServer({ ...env, LOG_LEVEL: 'info' });
  try {
    await measure(`${url}/livez`); // warm-up
    for (const route of ['/livez', '/readyz']) {
      const results = [];
      for (let i = 0; i < runs; i++) results.push(await measure(`${url}${route}`));
      console.log(
        `${mode.padEnd(9)} ${route.padEnd(8)} req/s ${median(results.map((r) => r.rps))
          .toFixed(0)
          .padStart(6)}` +
          `  p50 ${median(results.map((r) => r.p50)).toFixed(1)} ms  p99 ${median(results.map((r) => r.p99)).toFixed(1)} ms` +
          `  (median of ${runs} x ${seconds}s, ${connections} connections)`,
      );
    }
  } finally {
    proc.kill('SIGTERM');
  }
}

async function main(): Promise<void> {
  console.log(`node ${process.version}`);
  if (values.mode === 'embedded' || values.mode === 'both') {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'weir-bench-'));
    try {
      await benchMode('embedded', { WEIR_DATA_DIR: dataDir });
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
      await benchMode('postgres', {
        DATABASE_URL: url.toString(),
        REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
        WEIR_REDIS_PREFIX: name,
        WEIR_SECRET_KEY: 'cd'.repeat(32),
      });
    } finally {
      await new Promise((r) => setTimeout(r, 1000));
      await admin.query(`drop database if exists ${name} with (force)`);
      await admin.end();
    }
  }
}

await main();
