#!/usr/bin/env node
// CLI entry: `weir all|api|worker|dispatcher|beat|migrate`. Parses the role, loads the
// configuration once, builds the container, starts the role, and stops it cleanly on
// SIGTERM/SIGINT after in-flight work has finished.
import { ConfigError, isDistributed, loadConfig, ROLES, type Role } from './config.js';
import { createContainer } from './container.js';
import { migrate, openDatabase } from './platform/db/index.js';
import { createLogger } from './platform/logger.js';
import { startRole } from './roles/index.js';

function usage(): never {
  process.stderr.write(`usage: weir <${ROLES.join('|')}>\n`);
  process.exit(2);
}

async function main(): Promise<void> {
  const role = (process.argv[2] ?? 'all') as Role;
  if (!ROLES.includes(role)) usage();

  let config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`weir: configuration error: ${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
  const logger = createLogger({ level: config.logLevel, role });

  if (role === 'migrate') {
    const database = await openDatabase({ url: config.databaseUrl, dataDir: `${config.dataDir}/pglite`, logger });
    const applied = await migrate(database.db);
    logger.info({ applied }, applied.length ? 'migrations applied' : 'database schema is up to date');
    await database.close();
    return;
  }
  if (role !== 'all' && !isDistributed(config)) {
    process.stderr.write(
      `weir: the ${role} role runs as a separate process only in the distributed mode: set DATABASE_URL and REDIS_URL, or run \`weir all\` for the embedded mode\n`,
    );
    process.exit(2);
  }

  const container = await createContainer(config, { role, logger });
  const running = await startRole(container, role);

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'stopping: finishing in-flight work');
    const deadline = setTimeout(() => {
      logger.error({ timeoutMs: config.shutdownTimeoutMs }, 'in-flight work did not finish in time; exiting');
      process.exit(1);
    }, config.shutdownTimeoutMs);
    deadline.unref();
    try {
      await running.stop();
      await container.close();
      logger.info('stopped');
      process.exit(0);
    } catch (err) {
      logger.error({ err }, 'error while stopping');
      process.exit(1);
    }
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

main().catch((err: unknown) => {
  process.stderr.write(`weir: failed to start: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
