// Cost of authentication. (1) Token verification alone, in process: the checksum + HMAC,
// a verification served by the cache, and one that misses the cache and reads the
// database. (2) p50/p99 of the same trivial route public vs. token-authenticated, against a
// server in its own process (bench/auth-server.ts), embedded and on PostgreSQL + Redis.
//
//   npx tsx bench/auth.ts [--mode embedded|postgres|both] [--runs 5] [--seconds 5]
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import pg from 'pg';
import { loadConfig } from '../src/config.js';
import { createContainer } from '../src/container.js';
import { generateToken, isWellFormed, tokenHash } from '../src/platform/crypto/tokens.js';
import { createLogger } from '../src/platform/logger.js';

const { values } = parseArgs({
  options: {
    mode: { type: 'string', default: 'both' },
    runs: { type: 'string', default: '5' },
    seconds: { type: 'string', default: '5' },
  },
});
const ROOT = path.resolve(import.meta.dirname, '..');
const runs = Number(values.runs);
const seconds = Number(values.seconds);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
const SECRET = 'ef'.repeat(32);

async function microbench(): Promise<void> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'weir-bench-'));
  const config = loadConfig({ WEIR_DATA_DIR: dataDir, WEIR_SECRET_KEY: SECRET, LOG_LEVEL: 'silent' });
  const c = await createContainer(config, { role: 'api', logger: createLogger({ level: 'silent', role: 'api' }) });
  try {
    const u = await c.database.db
      .insertInto('users')
      .values({ username: 'micro', email: 'm@example.test', password_hash: 'x', role: 'admin', organization_id: null })
      .returning('id')
      .executeTakeFirstOrThrow();
    const { token } = await c.identity.tokens.create({ kind: 'user', id: u.id, role: 'admin' }, { name: 'micro' });
    const key = c.keys.key('api-token-hmac');
    const time = async (label: string, n: number, fn: () => unknown) => {
      const samples: number[] = [];
      for (let r = 0; r < 5; r++) {
        const t0 = process.hrtime.bigint();
        for (let i = 0; i < n; i++) await fn();
        samples.push(Number(process.hrtime.bigint() - t0) / n / 1000);
      }
      console.log(`${label.padEnd(46)} ${median(samples).toFixed(2).padStart(8)} µs/op (median of 5 x ${n})`);
    };
    const other = generateToken('svcsk_');
    await time(
      'checksum + HMAC-SHA-256 (no I/O)',
      50_000,
      () => isWellFormed(other, 'svcsk_') && tokenHash(key, other),
    );
    await time('verify(token), cache hit', 50_000, () => c.identity.tokens.verify(token));
    const cacheKey = `tok:${tokenHash(key, token)}`;
    await time('verify(token), cache miss (PGlite lookup)', 2_000, async () => {
      await c.cache.del(cacheKey);
      await c.identity.tokens.verify(token);
    });
  } finally {
    await c.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

async function http(mode: string, env: Record<string, string>): Promise<void> {
  const proc = spawn(process.execPath, ['--import', 'tsx', 'bench/auth-server.ts'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, LOG_LEVEL: 'warn', WEIR_SECRET_KEY: SECRET, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const ready = await new Promise<{ address: string; token: string }>((resolve, reject) => {
    let buf = '';
    proc.stdout.on('data', (d: Buffer) => {
      buf += d.toString();
      const line = buf.split('\n').find((l) => l.startsWith('{"address"'));
      if (line) resolve(JSON.parse(line) as { address: string; token: string });
    });
    proc.on('exit', (code) => reject(new Error(`server exited ${String(code)}`)));
  });
  proc.stdout.resume();
  const headers = { authorization: `Bearer ${ready.token}` };
  const measure = async (url: string, h: Record<string, string>) => {
    const r = await autocannon({ url, connections: 10, duration: seconds, headers: h });
    if (r.non2xx || r.errors) throw new Error(`${url}: ${r.non2xx} non-2xx, ${r.errors} errors`);
    return r;
  };
  try {
    await measure(`${ready.address}/api/bench/authed`, headers); // warm-up (JIT, cache)
    const pub: autocannon.Result[] = [];
    const auth: autocannon.Result[] = [];
    for (let i = 0; i < runs; i++) {
      pub.push(await measure(`${ready.address}/api/bench/public`, {}));
      auth.push(await measure(`${ready.address}/api/bench/authed`, headers));
    }
    const row = (label: string, rs: autocannon.Result[]) =>
      console.log(
        `${mode.padEnd(9)} ${label.padEnd(14)} req/s ${median(rs.map((r) => r.requests.average))
          .toFixed(0)
          .padStart(6)}` +
          `  p50 ${median(rs.map((r) => r.latency.p50)).toFixed(2)} ms  p99 ${median(rs.map((r) => r.latency.p99)).toFixed(2)} ms`,
      );
    row('public', pub);
    row('authenticated', auth);
    const dp99 = median(auth.map((r) => r.latency.p99)) - median(pub.map((r) => r.latency.p99));
    const dp50 = median(auth.map((r) => r.latency.p50)) - median(pub.map((r) => r.latency.p50));
    console.log(
      `${mode.padEnd(9)} Δp50 ${dp50.toFixed(2)} ms, Δp99 ${dp99.toFixed(2)} ms (median of ${runs} x ${seconds}s, 10 connections)`,
    );
  } finally {
    proc.kill('SIGTERM');
  }
}

console.log(`node ${process.version}`);
await microbench();
if (values.mode !== 'postgres') {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'weir-bench-'));
  try {
    await http('embedded', { WEIR_DATA_DIR: dataDir });
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}
if (values.mode !== 'embedded') {
  const base = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const name = `weir_bench_${Date.now()}`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  await admin.query(`create database ${name}`);
  const url = new URL(base);
  url.pathname = `/${name}`;
  try {
    await http('postgres', {
      DATABASE_URL: url.toString(),
      REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
      WEIR_REDIS_PREFIX: name,
    });
  } finally {
    await new Promise((r) => setTimeout(r, 1000));
    await admin.query(`drop database if exists ${name} with (force)`);
    await admin.end();
  }
}
