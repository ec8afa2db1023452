// The backends the queue contract test runs against: the database queue always (PGlite,
// or PostgreSQL with DATABASE_URL), BullMQ only with REDIS_URL. Each fixture opens adapters
// over one shared store, and can run a consumer in a child process that the test kills.
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { openDatabase, migrate } from '../../src/platform/db/index.js';
import { BullMqQueue } from '../../src/platform/queue/bullmq.js';
import { DatabaseQueue } from '../../src/platform/queue/database.js';
import type { QueueAdapter } from '../../src/platform/queue/index.js';
import { createTestDatabase, usingPostgres, type TestDatabase } from './db.js';
import type { ChildSpec } from './queue-child.js';
import { deletePrefix, redisUrl, uniquePrefix } from './redis.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
// Short leases so stalled-job recovery takes a second or two, not the production 30 s.
const LEASE_MS = 1000;
const LOCK_DURATION_MS = 2000;
const STALLED_INTERVAL_MS = 1000;

export interface Reopened {
  queue: QueueAdapter;
  close(): Promise<void>;
}

export interface QueueFixture {
  title: string;
  enabled: boolean;
  /** How long a running job's claim lasts without renewal (lease / BullMQ lockDuration). */
  leaseMs: number;
  setup(): Promise<void>;
  teardown(): Promise<void>;
  /** A new adapter on the shared store; several act as several processes. */
  open(): QueueAdapter;
  /**
   * Runs a consumer of `queue` in a child process that enqueues job `jobId`, starts it and
   * is killed with SIGKILL; then opens an adapter on the same store for the test.
   */
  killConsumerMidJob(queue: string, jobId: string): Promise<Reopened>;
}

export function databaseFixture(): QueueFixture {
  let t: TestDatabase | undefined;
  const db = () => {
    if (!t) throw new Error('fixture not set up');
    return t.database.db;
  };
  return {
    title: `database (${usingPostgres ? 'postgres' : 'pglite'})`,
    enabled: true,
    leaseMs: LEASE_MS,
    async setup() {
      t = await createTestDatabase();
    },
    async teardown() {
      await t?.close();
    },
    open: () => new DatabaseQueue({ db: db(), leaseMs: LEASE_MS, pollIntervalMs: 50 }),
    async killConsumerMidJob(queue, jobId) {
      const spec = childSpec('database', queue, jobId);
      if (usingPostgres) {
        spec.databaseUrl = t?.url;
        await runUntilStartedThenKill(spec);
        const q = new DatabaseQueue({ db: db(), leaseMs: LEASE_MS, pollIntervalMs: 50 });
        return { queue: q, close: () => q.close() };
      }
      // PGlite is single-process: the child owns the directory until it is dead.
      const dir = await mkdtemp(path.join(tmpdir(), 'weir-queue-'));
      spec.dataDir = dir;
      await runUntilStartedThenKill(spec);
      const database = await openDatabase({ dataDir: dir });
      await migrate(database.db);
      const q = new DatabaseQueue({ db: database.db, leaseMs: LEASE_MS, pollIntervalMs: 50 });
      return {
        queue: q,
        async close() {
          await q.close();
          await database.close();
          await rm(dir, { recursive: true, force: true });
        },
      };
    },
  };
}

export function bullmqFixture(): QueueFixture {
  const prefix = uniquePrefix();
  const adapters: BullMqQueue[] = [];
  const open = () => {
    const q = new BullMqQueue({
      redisUrl: redisUrl ?? '',
      prefix,
      lockDurationMs: LOCK_DURATION_MS,
      stalledIntervalMs: STALLED_INTERVAL_MS,
    });
    adapters.push(q);
    return q;
  };
  return {
    title: redisUrl ? 'bullmq' : 'bullmq (skipped: set REDIS_URL to run)',
    enabled: Boolean(redisUrl),
    leaseMs: LOCK_DURATION_MS,
    async setup() {},
    async teardown() {
      await Promise.allSettled(adapters.map((a) => a.close()));
      await deletePrefix(prefix);
    },
    open,
    async killConsumerMidJob(queue, jobId) {
      const spec = childSpec('bullmq', queue, jobId);
      spec.redisUrl = redisUrl;
      spec.prefix = prefix;
      await runUntilStartedThenKill(spec);
      const q = open();
      return { queue: q, close: () => q.close() };
    },
  };
}

function childSpec(backend: ChildSpec['backend'], queue: string, jobId: string): ChildSpec {
  return { backend, queue, jobId, leaseMs: LEASE_MS, lockDurationMs: LOCK_DURATION_MS, stalledIntervalMs: STALLED_INTERVAL_MS };
}

async function runUntilStartedThenKill(spec: ChildSpec, timeoutMs = 45_000): Promise<void> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/support/queue-child.ts', JSON.stringify(spec)], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  try {
    await new Promise<void>((resolve, reject) => {
      let out = '';
      const timer = setTimeout(() => reject(new Error(`child did not start the job in ${timeoutMs} ms: ${stderr}`)), timeoutMs);
      child.stdout.on('data', (chunk: Buffer) => {
        out += chunk.toString('utf8');
        if (out.includes(`started ${spec.jobId} 1`)) {
          clearTimeout(timer);
          resolve();
        }
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`child exited (${String(code)}) before starting the job: ${stderr}`));
      });
    });
  } finally {
    child.kill('SIGKILL');
    await exited;
  }
}

export function uniqueQueue(): string {
  return `t-${randomUUID().slice(0, 8)}`;
}
