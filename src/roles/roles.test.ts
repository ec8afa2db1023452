import { randomUUID } from 'node:crypto';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { TEST_SECRET_KEY } from '../../test/support/identity.js';
import { createTestDatabase, type TestDatabase } from '../../test/support/db.js';
import { loadConfig } from '../config.js';
import { createContainer, type Container } from '../container.js';
import { startRole } from './index.js';

let tdb: TestDatabase | undefined;
let container: Container | undefined;
afterEach(async () => {
  await container?.close();
  await tdb?.close();
  container = undefined;
  tdb = undefined;
});

async function setup(): Promise<Container> {
  tdb = await createTestDatabase();
  const config = loadConfig({
    REDIS_URL: process.env.REDIS_URL,
    WEIR_REDIS_PREFIX: `weir-test-${randomUUID()}`,
    WEIR_SECRET_KEY: TEST_SECRET_KEY,
    WEIR_DATA_DIR: path.join(tmpdir(), 'weir-test-unused'),
    WEIR_EVENT_STORE_PATH: ':memory:',
    // The data directory is shared by test files: no body log in it (test/support/app.ts gives each app its own).
    WEIR_BODY_LOG: 'off',
    PORT: '0',
    LOG_LEVEL: 'silent',
  });
  container = await createContainer(config, { role: 'all', database: tdb.database, logger: pino({ level: 'silent' }) });
  return container;
}

describe('the event store and the role', () => {
  it('refuses WEIR_EVENT_STORE=duckdb in a role of a distributed Weir (the file belongs to one process), naming the way out', async () => {
    tdb = await createTestDatabase();
    const config = loadConfig({
      WEIR_SECRET_KEY: TEST_SECRET_KEY,
      WEIR_DATA_DIR: path.join(tmpdir(), 'weir-test-unused'),
      WEIR_EVENT_STORE: 'duckdb',
      WEIR_EVENT_STORE_PATH: ':memory:',
      LOG_LEVEL: 'silent',
    });
    await expect(
      createContainer(config, { role: 'worker', database: tdb.database, logger: pino({ level: 'silent' }) }),
    ).rejects.toThrow(/WEIR_EVENT_STORE=duckdb .*weir all.*postgres/);
  });
});

describe('the body log and the deployment', () => {
  it('refuses WEIR_BODY_LOG=on with DATABASE_URL (the roles share no disk), and is off there by default', () => {
    const base = { WEIR_SECRET_KEY: TEST_SECRET_KEY, DATABASE_URL: 'postgres://127.0.0.1/weir' };
    expect(() => loadConfig({ ...base, WEIR_BODY_LOG: 'on' })).toThrow(/WEIR_BODY_LOG=on .*distributed.*unset it/);
    expect(loadConfig(base).bodyLogDir).toBeUndefined();
    expect(loadConfig({ WEIR_DATA_DIR: '/var/lib/weir' }).bodyLogDir).toBe(path.resolve('/var/lib/weir/bodies'));
    expect(loadConfig({ WEIR_BODY_LOG: 'off' }).bodyLogDir).toBeUndefined();
  });
});

describe('role lifecycle', () => {
  it('stop() finishes the job in flight before it resolves, and takes no new one', async () => {
    const c = await setup();
    const events: string[] = [];
    let startedJob!: () => void;
    const started = new Promise<void>((r) => (startedJob = r));
    const withSlowJob: Container = {
      ...c,
      jobs: [
        ...c.jobs,
        {
          queue: 'test-slow',
          role: 'worker',
          concurrency: 1,
          handlers: {
            slow: async (job) => {
              events.push(`start ${String((job.payload as { n: number }).n)}`);
              startedJob();
              await new Promise((r) => setTimeout(r, 500));
              events.push(`end ${String((job.payload as { n: number }).n)}`);
            },
          },
        },
      ],
    };
    const running = await startRole(withSlowJob, 'all');
    expect(running.address).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    await c.queue.enqueue('test-slow', 'slow', { n: 1 });
    await started;
    await c.queue.enqueue('test-slow', 'slow', { n: 2 });
    await running.stop();
    events.push('stopped');
    expect(events.slice(0, 3)).toEqual(['start 1', 'end 1', 'stopped']);
    const counts = await c.queue.counts('test-slow');
    expect(counts.completed).toBe(1);
    expect(counts.waiting).toBe(1); // the second job stays accepted for the next process
  });

  it('records a heartbeat while running and removes it on stop', async () => {
    const c = await setup();
    const running = await startRole(c, 'all');
    expect((await c.processes.list()).map((p) => p.role)).toEqual(['all']);
    await running.stop();
    expect(await c.processes.list()).toEqual([]);
  });
});
