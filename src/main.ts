#!/usr/bin/env node
// CLI entry: `weir all|api|worker|dispatcher|beat|migrate`, and the commands that talk to a
// running Weir over its API (`weir config ...`, `weir tap ...`: src/cli). Parses the role, loads the
// configuration once, builds the container, starts the role, and stops it cleanly on
// SIGTERM/SIGINT after in-flight work has finished. Without a role it only prints the
// usage: a bare `weir` must never start a server by accident.
import { commandsUsage, isCommand, runCommand } from './cli/index.js';
import { ConfigError, isDistributed, loadConfig, ROLES, type Config, type Role } from './config.js';
import { DataDirLockedError, lockDataDir, type DataDirLock } from './platform/data-dir-lock.js';
import { createLogger, type Logger } from './platform/logger.js';
import { packageVersion } from './platform/version.js';
// The database, the container and the roles are imported when a role starts: `--help`, `--version`
// and the commands that talk to the API do not load them (about 2 s).

const ROLE_SUMMARY: Record<Role, string> = {
  all: 'every role in one process (what `npm start` runs); the embedded mode',
  api: 'the HTTP API and console (distributed mode)',
  worker: 'normalization and collection jobs (distributed mode)',
  dispatcher: 'routing and delivery to destinations (distributed mode)',
  beat: 'the single scheduler, elected by a lock (distributed mode)',
  syslog: 'the syslog receiver: the listeners syslog integrations declare (distributed mode)',
  migrate: 'applies database migrations and exits',
};

function usageText(): string {
  const width = Math.max(...ROLES.map((r) => r.length));
  return `usage: weir <role> | weir <command> [options]\n\nroles:\n${ROLES.map((r) => `  ${r.padEnd(width)}  ${ROLE_SUMMARY[r]}`).join('\n')}\n\n${commandsUsage()}`;
}

function usage(): never {
  process.stderr.write(usageText());
  process.exit(2);
}

/** Embedded mode: this process owns WEIR_DATA_DIR, or it exits naming the process that does. */
function holdDataDir(config: Config, role: Role, logger: Logger): DataDirLock | undefined {
  if (config.databaseUrl) return undefined;
  try {
    const lock = lockDataDir(config.dataDir, { command: `weir ${role} (${process.argv.slice(1).join(' ')})` });
    if (lock.tookOverFrom)
      logger.warn(
        { lock: lock.file, previous: lock.tookOverFrom },
        'took over the data directory lock of a process that is gone',
      );
    return lock;
  } catch (err) {
    if (err instanceof DataDirLockedError) {
      process.stderr.write(`weir: ${err.message}\n`);
      process.exit(1);
    }
    throw err;
  }
}

async function main(): Promise<void> {
  const arg = process.argv[2];
  if (arg === '--help' || arg === '-h') {
    process.stdout.write(usageText());
    return;
  }
  if (arg === '--version' || arg === '-V') {
    process.stdout.write(`weir ${packageVersion()}\n`);
    return;
  }
  if (isCommand(arg)) {
    process.exitCode = await runCommand(process.argv.slice(2));
    return;
  }
  if (arg === undefined || !ROLES.includes(arg as Role)) usage();
  const role = arg as Role;
  // A role takes no arguments; asking it for help must never start it (or migrate).
  const rest = process.argv.slice(3);
  if (rest.includes('--help') || rest.includes('-h')) {
    process.stdout.write(
      `usage: weir ${role}\n\n${ROLE_SUMMARY[role]}. Configured by the environment (README, Configuration).\n`,
    );
    return;
  }
  if (rest.length > 0) {
    process.stderr.write(`weir: the role ${role} takes no arguments (got ${rest.join(' ')}); see weir --help\n`);
    process.exit(2);
  }

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

  if (role !== 'all' && role !== 'migrate' && !isDistributed(config)) {
    process.stderr.write(
      `weir: the ${role} role runs as a separate process only in the distributed mode: set DATABASE_URL and REDIS_URL, or run \`weir all\` for the embedded mode\n`,
    );
    process.exit(2);
  }
  const dirLock = holdDataDir(config, role, logger);

  if (role === 'migrate') {
    const { migrate, openDatabase } = await import('./platform/db/index.js');
    const database = await openDatabase({
      url: config.databaseUrl,
      dataDir: `${config.dataDir}/pglite`,
      sharedBuffers: config.pgliteSharedBuffers,
      logger,
    });
    const applied = await migrate(database.db);
    logger.info({ applied }, applied.length ? 'migrations applied' : 'database schema is up to date');
    await database.close();
    dirLock?.release();
    return;
  }

  const [{ createContainer }, { startRole }] = await Promise.all([
    import('./container.js'),
    import('./roles/index.js'),
  ]);
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
      dirLock?.release();
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
