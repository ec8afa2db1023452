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
// A short lease so stalled-job recovery takes a second, not the production 30 s.
const LEASE_MS = 1000;

export interface Reopened {
  queue: QueueAdapter;
  /**
   * Date.now() when a new consumer could first reach the job: the last child's kill, or
   * with PGlite (one process at a time) the moment the store was reopened after it.
   */
  reachableAt: number;
  close(): Promise<void>;
}

export interface KillOptions {
  /** Attempts of the job (default 3). */
  attempts?: number;
  /** Children that start the job in turn and are killed mid-job (default 1). */
  times?: number;
}

export interface QueueFixture {
  title: string;
  enabled: boolean;
  /** WEIR_QUEUE_LEASE_MS of every adapter: a dead consumer's job is back within it. */
  leaseMs: number;
  setup(): Promise<void>;
  teardown(): Promise<void>;
  /** A new adapter on the shared store; several act as several processes. */
  open(): QueueAdapter;
  /**
   * Runs a consumer of `queue` in a child process that enqueues job `jobId`, starts it and
   * is killed with SIGKILL (`times` children in turn, each taking the job over from the
   * last); then opens an adapter on the same store for the test.
   */
  killConsumerMidJob(queue: string, jobId: string, options?: KillOptions): Promise<Reopened>;
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
    async killConsumerMidJob(queue, jobId, options) {
      const spec = childSpec('database', queue, jobId, options);
      if (usingPostgres) {
        spec.databaseUrl = t?.url;
        const reachableAt = await killChildren(spec, options);
        const q = new DatabaseQueue({ db: db(), leaseMs: LEASE_MS, pollIntervalMs: 50 });
        return { queue: q, reachableAt, close: () => q.close() };
      }
      // PGlite is single-process: the child owns the directory until it is dead.
      const dir = await mkdtemp(path.join(tmpdir(), 'weir-queue-'));
      spec.dataDir = dir;
      await killChildren(spec, options);
      const database = await openDatabase({ dataDir: dir });
      await migrate(database.db);
      // As Weir opens its embedded database: exclusive, so only the sweep finds the dead child's job.
      const q = new DatabaseQueue({ db: database.db, leaseMs: LEASE_MS, pollIntervalMs: 50, exclusive: true });
      return {
        queue: q,
        reachableAt: Date.now(),
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
    const q = new BullMqQueue({ redisUrl: redisUrl ?? '', prefix, leaseMs: LEASE_MS });
    adapters.push(q);
    return q;
  };
  return {
    title: redisUrl ? 'bullmq' : 'bullmq (skipped: set REDIS_URL to run)',
    enabled: Boolean(redisUrl),
    leaseMs: LEASE_MS,
    async setup() {},
    async teardown() {
      await Promise.allSettled(adapters.map((a) => a.close()));
      await deletePrefix(prefix);
    },
    open,
    async killConsumerMidJob(queue, jobId, options) {
      const spec = childSpec('bullmq', queue, jobId, options);
      spec.redisUrl = redisUrl;
      spec.prefix = prefix;
      const reachableAt = await killChildren(spec, options);
      const q = open();
      return { queue: q, reachableAt, close: () => q.close() };
    },
  };
}

function childSpec(backend: ChildSpec['backend'], queue: string, jobId: string, options: KillOptions = {}): ChildSpec {
  return {
    backend,
    queue,
    jobId,
    leaseMs: LEASE_MS,
    ...(options.attempts !== undefined ? { attempts: options.attempts } : {}),
  };
}

/** Child i (from 1) starts attempt i of the job, the earlier children's attempts having stalled. */
async function killChildren(spec: ChildSpec, options: KillOptions = {}): Promise<number> {
  let killedAt = 0;
  for (let attempt = 1; attempt <= (options.times ?? 1); attempt++)
    killedAt = await runUntilStartedThenKill(spec, attempt);
  return killedAt;
}

async function runUntilStartedThenKill(spec: ChildSpec, attempt: number, timeoutMs = 45_000): Promise<number> {
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
      const timer = setTimeout(
        () => reject(new Error(`child did not start the job in ${timeoutMs} ms: ${stderr}`)),
        timeoutMs,
      );
      child.stdout.on('data', (chunk: Buffer) => {
        out += chunk.toString('utf8');
        if (out.includes(`started ${spec.jobId} ${attempt}`)) {
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
  return Date.now();
}

export function uniqueQueue(): string {
  return `t-${randomUUID().slice(0, 8)}`;
}
