// End-to-end: a worker killed with SIGKILL in the middle of a large ingest loses nothing.
// Every event the API acknowledged ends up normalized or quarantined exactly once after the
// worker restarts (a redelivered batch is recognized by its id), on both deployments:
// embedded (`weir all` on PGlite, the database queue) and distributed (PostgreSQL + Redis,
// BullMQ, the API and the worker as separate processes).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/platform/db/index.js';
import { freshPostgresDatabase } from '../support/db.js';
import { setUpIngestion, processedEvents, type IngestSetup } from '../support/ingest.js';
import { spawnWeir, type WeirProcess } from '../support/process.js';
import { deletePrefix, uniquePrefix } from '../support/redis.js';
import { readRecords } from '../../src/pipeline/batch-codec.js';

const distributed = Boolean(process.env.DATABASE_URL && process.env.REDIS_URL);
const started = (l: Record<string, unknown>) => l.msg === 'weir started';
const BATCHES = 36;
const BATCH_SIZE = 500;
const LEASE_MS = '3000';

const running: WeirProcess[] = [];
const dirs: string[] = [];
afterAll(async () => {
  for (const p of running) if (p.proc.exitCode === null) p.kill('SIGKILL');
  await Promise.all(running.map((p) => p.exited));
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function start(role: string, env: Record<string, string | undefined>): WeirProcess {
  const p = spawnWeir(role, env);
  running.push(p);
  return p;
}

async function startApi(role: string, env: Record<string, string | undefined>): Promise<{ p: WeirProcess; url: string }> {
  const p = spawnWeir(role, { ...env, PORT: '0', LOG_LEVEL: 'info' });
  running.push(p);
  const line = await p.waitFor(started, 90_000);
  return { p, url: String(line.address) };
}

const oktaFixtures = JSON.parse(readFileSync(path.resolve(import.meta.dirname, '../../src/connectors/okta/fixtures/system_log.json'), 'utf8')) as Record<string, unknown>[];

/** Batch b of an integration: Okta events (normalized) or custom events (no mapping: quarantined). */
function body(platform: string, b: number): string {
  const lines: string[] = [];
  for (let i = 0; i < BATCH_SIZE; i++) {
    const seq = `${platform}-${b}-${i}`;
    const event = platform === 'okta' ? { ...oktaFixtures[i % oktaFixtures.length], weir_test_seq: seq } : { message: 'custom event', weir_test_seq: seq };
    lines.push(JSON.stringify(event));
  }
  return lines.join('\n');
}

/** Pushes every batch with a few in flight; returns the seqs of the batches the API acknowledged. */
async function pushAll(url: string, setup: IngestSetup, onAccepted: (n: number) => void): Promise<Set<string>> {
  const acknowledged = new Set<string>();
  const work = setup.integrations.flatMap((integration) => Array.from({ length: BATCHES / 2 }, (_, b) => ({ integration, b })));
  let next = 0;
  let accepted = 0;
  async function lane(): Promise<void> {
    while (next < work.length) {
      const { integration, b } = work[next++]!;
      try {
        const stream = integration.platform === 'okta' ? 'system_log' : 'events';
        const res = await fetch(`${url}/api/ingest/${stream}`, { method: 'POST', headers: { authorization: `Bearer ${integration.token}` }, body: body(integration.platform, b) });
        if (res.status !== 200) continue;
        for (let i = 0; i < BATCH_SIZE; i++) acknowledged.add(`${integration.platform}-${b}-${i}`);
        onAccepted(++accepted);
      } catch {
        // The process is gone: this batch was not acknowledged.
      }
    }
  }
  await Promise.all([lane(), lane(), lane()]);
  return acknowledged;
}

/** Every seq in the normalized output and the quarantine, with how often it occurs. */
async function outcomes(query: (sql: string) => Promise<Record<string, unknown>[]>): Promise<Map<string, number>> {
  const seen = new Map<string, number>();
  const add = (seq: unknown) => {
    if (typeof seq === 'string') seen.set(seq, (seen.get(seq) ?? 0) + 1);
  };
  for (const row of await query('select events from normalized_batches')) {
    for (const record of await readRecords(String(row.events))) {
      add((record.ocsf.unmapped as { weir_test_seq?: unknown } | undefined)?.weir_test_seq);
    }
  }
  for (const row of await query('select raw from quarantine_events')) {
    const raw = (typeof row.raw === 'string' ? JSON.parse(row.raw) : row.raw) as { weir_test_seq?: unknown };
    add(raw.weir_test_seq);
  }
  return seen;
}

function expectExactlyOnce(acknowledged: Set<string>, seen: Map<string, number>): void {
  const missing = [...acknowledged].filter((s) => !seen.has(s));
  const duplicated = [...seen].filter(([, n]) => n > 1).map(([s]) => s);
  expect(missing.slice(0, 5)).toEqual([]);
  expect(duplicated.slice(0, 5)).toEqual([]);
  expect(acknowledged.size).toBeGreaterThan(0);
}

async function waitProcessed(url: string, setup: IngestSetup, atLeast: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    let total = 0;
    for (const i of setup.integrations) total += await processedEvents(url, setup.cookie, i.id);
    if (total >= atLeast) return;
    if (Date.now() > deadline) throw new Error(`only ${total} of ${atLeast} events processed in time`);
    await new Promise((r) => setTimeout(r, 300));
  }
}

describe('SIGKILL in the middle of a large ingest', () => {
  it('embedded: every acknowledged event is normalized or quarantined exactly once after a restart', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'weir-kill-'));
    dirs.push(dataDir);
    const env = { WEIR_DATA_DIR: dataDir, WEIR_QUEUE_LEASE_MS: LEASE_MS };
    const first = await startApi('all', env);
    const setup = await setUpIngestion(first.url, ['okta', 'custom']);
    const acknowledged = await pushAll(first.url, setup, (n) => {
      if (n === BATCHES / 3) first.p.kill('SIGKILL');
    });
    await first.p.exited;
    expect(acknowledged.size).toBeLessThan(BATCHES * BATCH_SIZE);

    const second = await startApi('all', env);
    await waitProcessed(second.url, setup, acknowledged.size, 120_000);
    second.p.kill('SIGTERM');
    expect(await second.p.exited).toBe(0);

    const database = await openDatabase({ dataDir: `${dataDir}/pglite` });
    try {
      const seen = await outcomes(async (text) => (await sql.raw<Record<string, unknown>>(text).execute(database.db)).rows);
      expectExactlyOnce(acknowledged, seen);
    } finally {
      await database.close();
    }
  }, 240_000);

  it.runIf(distributed)('distributed: a worker killed mid-batch is replaced and nothing is lost or doubled', async () => {
    const db = await freshPostgresDatabase();
    const prefix = uniquePrefix();
    try {
      const env = { DATABASE_URL: db.url, REDIS_URL: process.env.REDIS_URL, WEIR_REDIS_PREFIX: prefix, WEIR_SECRET_KEY: 'ab'.repeat(32), WEIR_QUEUE_LEASE_MS: LEASE_MS };
      const api = await startApi('api', env);
      const worker = start('worker', env);
      await worker.waitFor(started, 90_000);
      const setup = await setUpIngestion(api.url, ['okta', 'custom']);
      let killed = false;
      const pushing = pushAll(api.url, setup, () => undefined);
      // Kill the worker once it has processed part of the load, while batches are in flight.
      await waitProcessed(api.url, setup, BATCH_SIZE * 4, 120_000);
      worker.kill('SIGKILL');
      killed = true;
      const acknowledged = await pushing;
      expect(killed).toBe(true);
      expect(acknowledged.size).toBe(BATCHES * BATCH_SIZE);

      const replacement = start('worker', env);
      await replacement.waitFor(started, 90_000);
      await waitProcessed(api.url, setup, acknowledged.size, 180_000);

      const client = new pg.Client({ connectionString: db.url });
      await client.connect();
      try {
        const seen = await outcomes(async (text) => (await client.query(text)).rows as Record<string, unknown>[]);
        expectExactlyOnce(acknowledged, seen);
        expect(seen.size).toBe(acknowledged.size);
      } finally {
        await client.end();
      }
      for (const p of [api.p, replacement]) p.kill('SIGTERM');
      await Promise.all([api.p.exited, replacement.exited]);
    } finally {
      await deletePrefix(prefix);
      await db.drop();
    }
  }, 300_000);
});
