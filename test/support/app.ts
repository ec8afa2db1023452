// A whole Weir API in-process for medium tests: a fresh database (PGlite in memory, or a
// fresh PostgreSQL database when DATABASE_URL is set), the cache/queue/lock adapters the
// environment selects (Redis when REDIS_URL is set, under a unique prefix), app.inject().
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { buildApp, type RouteModule } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { createContainer, type Container } from '../../src/container.js';
import type { Clock } from '../../src/core/clock.js';
import type { Api } from '../../src/platform/http/routes.js';
import { createLogger } from '../../src/platform/logger.js';
import type { Consumer } from '../../src/platform/queue/port.js';
import { startConsumers } from '../../src/roles/jobs.js';
import { TEST_SECRET_KEY } from './identity.js';
import { createTestDatabase, type TestDatabase } from './db.js';

export interface TestApp {
  app: Api;
  container: Container;
  /** The fresh PostgreSQL database's URL, on PostgreSQL (tests that open a second connection). */
  databaseUrl: string | undefined;
  /** Log lines written so far (parsed JSON), when captureLogs was set. */
  logs: Record<string, unknown>[];
  close(): Promise<void>;
}

export interface TestAppOptions {
  env?: Record<string, string>;
  extraRoutes?: RouteModule[];
  captureLogs?: boolean;
  /** The container's clock (tests that move time). */
  clock?: Clock;
  /** Trust licenses signed by the test key (default true; a server configured from its environment never does). */
  trustTestLicenses?: boolean;
  /** Another app's database (a restart on the same data): left open when this app closes. */
  database?: TestDatabase;
}

export async function createTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const shared = options.database;
  const tdb = shared ?? (await createTestDatabase());
  // Embedded, the queue's and the outbox's bodies go to a body log of this app's own.
  const bodyLogDir = mkdtempSync(path.join(tmpdir(), 'weir-test-bodies-'));
  const env: Record<string, string | undefined> = {
    REDIS_URL: process.env.REDIS_URL,
    WEIR_REDIS_PREFIX: `weir-test-${randomUUID()}`,
    WEIR_SECRET_KEY: TEST_SECRET_KEY,
    // The database is injected; the data directory is never opened.
    WEIR_DATA_DIR: path.join(tmpdir(), 'weir-test-unused'),
    // The embedded event store (DuckDB) in memory: every test app has its own.
    WEIR_EVENT_STORE_PATH: ':memory:',
    WEIR_BODY_LOG_DIR: bodyLogDir,
    LOG_LEVEL: options.captureLogs ? 'info' : 'silent',
    // Test destinations listen on loopback; SSRF tests set this to ''.
    WEIR_OUTBOUND_ALLOW_CIDRS: '127.0.0.0/8,::1/128',
    // The console is served only where a test asks for it (WEIR_CONSOLE_DIR).
    WEIR_CONSOLE_DIR: '',
    ...options.env,
  };
  // Test apps trust licenses signed by the test key (scripts/test-license-key.pem); a server never does.
  const config = { ...loadConfig(env), trustTestLicenses: options.trustTestLicenses ?? true };
  const logs: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _enc, cb) {
      for (const line of chunk.toString('utf8').split('\n'))
        if (line.trim()) logs.push(JSON.parse(line) as Record<string, unknown>);
      cb();
    },
  });
  const logger = createLogger({ level: config.logLevel, role: 'api', destination });
  let container: Container | undefined;
  let app: Api;
  try {
    container = await createContainer(config, {
      role: 'api',
      database: tdb.database,
      logger,
      ...(options.clock ? { clock: options.clock } : {}),
    });
    app = await buildApp(container, { extraRoutes: options.extraRoutes });
  } catch (err) {
    await container?.close();
    if (!shared) await tdb.close();
    rmSync(bodyLogDir, { recursive: true, force: true });
    throw err;
  }
  const built = container;
  return {
    app,
    container: built,
    databaseUrl: tdb.url,
    logs,
    async close() {
      await app.close();
      await built.close();
      if (!shared) await tdb.close();
      rmSync(bodyLogDir, { recursive: true, force: true });
    },
  };
}

/** The worker role's queue consumers on the test app (normalization, enrichment, detections...), as `weir worker` starts them. */
export function startWorkerConsumers(t: TestApp): Consumer[] {
  return startConsumers(
    t.container.queue,
    t.container.jobs.filter((j) => j.role === 'worker'),
    t.container.logger,
  );
}
