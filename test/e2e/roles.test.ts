// End-to-end: roles as real processes. The embedded part runs everywhere; the distributed
// part runs when DATABASE_URL and REDIS_URL point at real PostgreSQL and Redis.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { freshPostgresDatabase } from '../support/db.js';
import { spawnWeir, type WeirProcess } from '../support/process.js';

const distributed = Boolean(process.env.DATABASE_URL && process.env.REDIS_URL);
const started = (l: Record<string, unknown>) => l.msg === 'weir started';

const running: WeirProcess[] = [];
const dirs: string[] = [];
afterAll(async () => {
  for (const p of running) if (p.proc.exitCode === null) p.kill('SIGKILL');
  await Promise.all(running.map((p) => p.exited));
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const d = mkdtempSync(path.join(tmpdir(), 'weir-e2e-'));
  dirs.push(d);
  return d;
}

function start(role: string, env: Record<string, string | undefined>): WeirProcess {
  const p = spawnWeir(role, env);
  running.push(p);
  return p;
}

// The embedded processes do not depend on the pass's adapters: they run in the embedded pass only.
describe.skipIf(distributed)('embedded: weir all', () => {
  it('starts on PGlite, answers probes, and stops cleanly on SIGTERM', async () => {
    const dataDir = tempDir();
    const p = start('all', { PORT: '0', WEIR_DATA_DIR: dataDir });
    const line = await p.waitFor(started, 60_000);
    const address = String(line.address);
    expect((await fetch(`${address}/livez`)).status).toBe(200);
    const ready = await fetch(`${address}/readyz`);
    expect(ready.status).toBe(200);
    // The data directory exists here: the disk guard measures it (and refuses nothing on a disk with room).
    expect(await ready.json()).toEqual({
      status: 'ok',
      checks: { database: 'ok', cache: 'ok' },
      disk: { free_bytes: expect.any(Number), floor_bytes: 536870912, refusing_events: false, reserved_bytes: 0 },
    });
    p.kill('SIGTERM');
    expect(await p.exited).toBe(0);
    expect(p.lines.some((l) => l.msg === 'stopped')).toBe(true);
    // The data survives: a second start on the same directory finds its schema.
    const again = start('all', { PORT: '0', WEIR_DATA_DIR: dataDir });
    await again.waitFor(started, 60_000);
    again.kill('SIGTERM');
    expect(await again.exited).toBe(0);
  }, 120_000);

  it('refuses a separate role without the distributed configuration', async () => {
    const p = start('worker', { WEIR_DATA_DIR: tempDir() });
    expect(await p.exited).toBe(2);
    expect(p.stderr.join('')).toMatch(/DATABASE_URL and REDIS_URL/);
  });

  it('refuses an invalid setting naming the variable', async () => {
    const p = start('all', { PORT: 'eighty' });
    expect(await p.exited).toBe(2);
    expect(p.stderr.join('')).toMatch(/PORT must be an integer/);
  });
});

describe.runIf(distributed)('distributed: roles as separate processes on PostgreSQL and Redis', () => {
  it('runs concurrent migrations safely', async () => {
    const db = await freshPostgresDatabase();
    try {
      const procs = Array.from({ length: 4 }, () => start('migrate', { DATABASE_URL: db.url }));
      expect(await Promise.all(procs.map((p) => p.exited))).toEqual([0, 0, 0, 0]);
      const client = new pg.Client({ connectionString: db.url });
      await client.connect();
      const r = await client.query('select name from weir_migrations');
      await client.end();
      expect(r.rows.map((x: { name: string }) => x.name)).toContain('0001_foundation');
    } finally {
      await db.drop();
    }
  }, 90_000);

  it('starts every role, reports liveness, elects one beat, fails over, and stops cleanly', async () => {
    const db = await freshPostgresDatabase();
    const env = {
      DATABASE_URL: db.url,
      REDIS_URL: process.env.REDIS_URL,
      WEIR_REDIS_PREFIX: `weir-e2e-${randomUUID()}`,
      WEIR_BEAT_LOCK_TTL_MS: '2000',
      WEIR_SECRET_KEY: 'ab'.repeat(32),
      WEIR_HEARTBEAT_INTERVAL_MS: '500',
      PORT: '0',
    };
    const client = new pg.Client({ connectionString: db.url });
    try {
      const api = start('api', env);
      const apiLine = await api.waitFor(started, 60_000);
      const others = ['worker', 'dispatcher', 'beat', 'beat'].map((r) => start(r, env));
      await Promise.all(others.map((p) => p.waitFor(started, 60_000)));

      const ready = await fetch(`${String(apiLine.address)}/readyz`);
      expect(ready.status).toBe(200);

      await client.connect();
      const hb = await client.query('select role, queue_backend from process_heartbeats order by role');
      expect(hb.rows.map((r: { role: string }) => r.role)).toEqual(['api', 'beat', 'beat', 'dispatcher', 'worker']);
      expect(new Set(hb.rows.map((r: { queue_backend: string }) => r.queue_backend))).toEqual(new Set(['bullmq']));

      const beats = others.slice(2);
      const leading = (p: WeirProcess) => p.lines.filter((l) => l.msg === 'beat is leading').length;
      await Promise.race(beats.map((b) => b.waitFor((l) => l.msg === 'beat is leading', 10_000)));
      await new Promise((r) => setTimeout(r, 1000));
      expect(beats.map(leading).sort()).toEqual([0, 1]);

      const leader = beats.find((b) => leading(b) === 1) as WeirProcess;
      const standby = beats.find((b) => b !== leader) as WeirProcess;
      leader.kill('SIGKILL');
      const t0 = Date.now();
      await standby.waitFor((l) => l.msg === 'beat is leading', 10_000);
      expect(Date.now() - t0).toBeLessThan(6000);

      for (const p of [api, ...others.slice(0, 2), standby]) p.kill('SIGTERM');
      const codes = await Promise.all([api, ...others.slice(0, 2), standby].map((p) => p.exited));
      expect(codes).toEqual([0, 0, 0, 0]);
      // Stopped processes remove their heartbeat; the killed leader's row stays until pruned.
      const left = await client.query('select role from process_heartbeats');
      expect(left.rows.map((r: { role: string }) => r.role)).toEqual(['beat']);
    } finally {
      await client.end().catch(() => undefined);
      await db.drop();
    }
  }, 120_000);
});
