// Verifies the hash chain of the audit trail in the configured database (the same
// DATABASE_URL / WEIR_DATA_DIR the service uses) and prints a JSON report.
//   exit 0: intact   exit 1: broken (the report names the first entry that fails)
//   exit 2: configuration or database error
// The embedded database (PGlite) admits one process: against WEIR_DATA_DIR it takes the data
// directory's lock, so it refuses to run beside the service. On PostgreSQL it runs beside it.
import { loadConfig } from '../src/config.js';
import { systemClock } from '../src/core/clock.js';
import { createAuditService } from '../src/modules/audit/service.js';
import { createAuditStore } from '../src/modules/audit/store.js';
import { lockDataDir } from '../src/platform/data-dir-lock.js';
import { migrate, openDatabase } from '../src/platform/db/index.js';

async function main(): Promise<number> {
  const config = loadConfig();
  const dirLock = config.databaseUrl ? undefined : lockDataDir(config.dataDir, { command: 'audit-verify' });
  const database = await openDatabase({ url: config.databaseUrl, dataDir: `${config.dataDir}/pglite`, poolMax: 2 });
  try {
    await migrate(database.db);
    const audit = createAuditService({ store: createAuditStore(database.db), clock: systemClock });
    const startedAt = new Date();
    const report = await audit.verify();
    const out = {
      ok: report.ok,
      entries: report.entries,
      head_seq: report.headSeq,
      ...(report.ok ? {} : { broken_at: report.brokenAt, reason: report.reason }),
      database: database.kind,
      checked_at: startedAt.toISOString(),
      duration_ms: Date.now() - startedAt.getTime(),
    };
    process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
    return report.ok ? 0 : 1;
  } finally {
    await database.close();
    dirLock?.release();
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`audit-verify: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(2);
  },
);
