// A whole Weir for the console's browser tests: the console built once per run (Vite, into a
// temporary directory; WEIR_CONSOLE_DIR reuses a build), every role running in this process
// on a fresh database, listening on a free loopback port.
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/config.js';
import { createContainer, type Container } from '../../src/container.js';
import { createLogger } from '../../src/platform/logger.js';
import { startRole } from '../../src/roles/index.js';
import { createTestDatabase } from '../support/db.js';
import { TEST_SECRET_KEY } from '../support/identity.js';

export const CHROMIUM = process.env.WEIR_CHROMIUM ?? '/usr/bin/chromium';
const ROOT = path.resolve(import.meta.dirname, '../..');

export async function buildConsole(): Promise<string> {
  const given = process.env.WEIR_CONSOLE_DIR;
  if (given && existsSync(path.join(given, 'index.html'))) return given;
  const outDir = mkdtempSync(path.join(tmpdir(), 'weir-console-'));
  const { build } = await import('vite');
  await build({
    configFile: path.join(ROOT, 'web/vite.config.ts'),
    logLevel: 'warn',
    build: { outDir, emptyOutDir: true },
  });
  return outDir;
}

export interface RunningWeir {
  url: string;
  container: Container;
  sinkRoot: string;
  stop(): Promise<void>;
}

/** Every role in this process; the console is served when its build's directory is given. */
export async function startWeir(consoleDir?: string, env: Record<string, string> = {}): Promise<RunningWeir> {
  const tdb = await createTestDatabase();
  const sinkRoot = mkdtempSync(path.join(tmpdir(), 'weir-console-sinks-'));
  const bodyLogDir = mkdtempSync(path.join(tmpdir(), 'weir-console-bodies-'));
  const loaded = loadConfig({
    REDIS_URL: process.env.REDIS_URL,
    WEIR_REDIS_PREFIX: `weir-console-${randomUUID()}`,
    WEIR_SECRET_KEY: TEST_SECRET_KEY,
    WEIR_DATA_DIR: path.join(tmpdir(), 'weir-console-unused'),
    WEIR_EVENT_STORE_PATH: ':memory:',
    WEIR_BODY_LOG_DIR: bodyLogDir,
    LOG_LEVEL: 'silent',
    HOST: '127.0.0.1',
    PORT: '0',
    ...(consoleDir ? { WEIR_CONSOLE_DIR: consoleDir } : {}),
    WEIR_FILE_SINK_ROOT: sinkRoot,
    WEIR_TOKEN_RATE_LIMIT: '100000',
    WEIR_MAPPING_REFRESH_MS: '100',
    WEIR_DISPATCH_POLL_MS: '50',
    WEIR_PASS_THREADS: '0',
    ...env,
  });
  // The console's tests mint licenses with the test key, which only a test set-up trusts.
  const config = { ...loaded, trustTestLicenses: true };
  const logger = createLogger({ level: 'silent', role: 'all' });
  const container = await createContainer(config, { role: 'all', database: tdb.database, logger });
  const role = await startRole(container, 'all');
  return {
    url: String(role.address),
    container,
    sinkRoot,
    async stop() {
      await role.stop();
      await container.close();
      await tdb.close();
      rmSync(bodyLogDir, { recursive: true, force: true });
    },
  };
}
