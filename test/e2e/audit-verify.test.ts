// The audit chain verifier as operators run it (`tsx scripts/audit-verify.ts`), against the
// configured database: embedded PGlite in a data directory, or PostgreSQL with DATABASE_URL.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/core/clock.js';
import { createAuditService } from '../../src/modules/audit/service.js';
import { createAuditStore } from '../../src/modules/audit/store.js';
import { inTransaction } from '../../src/platform/db/ambient.js';
import { migrate, openDatabase, type Database } from '../../src/platform/db/index.js';
import type { AuditRow } from '../../src/modules/audit/store.js';
import { freshPostgresDatabase, usingPostgres } from '../support/db.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const ENTRIES = 8;

let env: Record<string, string>;
let cleanup: () => Promise<void> = async () => undefined;

/** Opens the database the script will read (PGlite admits one process: callers close it). */
async function withDatabase<T>(fn: (db: Database) => Promise<T>): Promise<T> {
  const database = await openDatabase(
    env.DATABASE_URL ? { url: env.DATABASE_URL, poolMax: 2 } : { dataDir: `${env.WEIR_DATA_DIR}/pglite` },
  );
  try {
    return await fn(database);
  } finally {
    await database.close();
  }
}

interface Run {
  code: number | null;
  report: Record<string, unknown>;
  stderr: string;
}

function verifyCommand(extraEnv: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, ['--import', 'tsx', 'scripts/audit-verify.ts'], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env, ...extraEnv },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    proc.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
    proc.stderr.on('data', (c: Buffer) => (err += c.toString('utf8')));
    proc.on('error', reject);
    proc.on('exit', (code) => {
      let report: Record<string, unknown> = {};
      try {
        report = out.trim() ? (JSON.parse(out) as Record<string, unknown>) : {};
      } catch {
        reject(new Error(`not JSON: ${out}`));
        return;
      }
      resolve({ code, report, stderr: err });
    });
  });
}

beforeAll(async () => {
  if (usingPostgres) {
    const fresh = await freshPostgresDatabase();
    env = { DATABASE_URL: fresh.url };
    cleanup = fresh.drop;
  } else {
    const dir = mkdtempSync(path.join(tmpdir(), 'weir-audit-verify-'));
    env = { WEIR_DATA_DIR: dir };
    cleanup = async () => rmSync(dir, { recursive: true, force: true });
  }
  await withDatabase(async ({ db }) => {
    await migrate(db);
    const audit = createAuditService({ store: createAuditStore(db), clock: systemClock });
    for (let i = 1; i <= ENTRIES; i++) {
      await inTransaction(db, () =>
        audit.record({
          actor: undefined,
          operationId: 'test.write',
          method: 'POST',
          path: `/api/test/${i}`,
          outcome: 'success',
          status: 201,
          correlationId: `verify-${i}`,
          target: { type: 'test', id: i, organizationId: null, details: { i } },
        }),
      );
    }
  });
}, 120_000);
afterAll(async () => cleanup());

describe('scripts/audit-verify.ts', { timeout: 90_000 }, () => {
  it('exits 0 with a JSON report when the chain is intact', async () => {
    const run = await verifyCommand();
    expect(run.code, run.stderr).toBe(0);
    expect(run.report).toMatchObject({
      ok: true,
      entries: ENTRIES,
      head_seq: ENTRIES,
      database: usingPostgres ? 'postgres' : 'pglite',
    });
  });

  // Each case opens the database once: it undoes the previous case's damage and does its own.
  it('exits 1 naming the seq of an edited entry', async () => {
    await withDatabase(({ db }) =>
      db
        .updateTable('audit_log')
        .set({ details: JSON.stringify({ i: 3, edited: true }) })
        .where('seq', '=', 3)
        .execute(),
    );
    const run = await verifyCommand();
    expect(run.code).toBe(1);
    expect(run.report).toMatchObject({ ok: false, broken_at: 3, reason: 'content does not match its hash' });
  });

  let deleted: AuditRow | undefined;
  it('exits 1 when an entry in the middle is deleted', async () => {
    await withDatabase(async ({ db }) => {
      await db
        .updateTable('audit_log')
        .set({ details: JSON.stringify({ i: 3 }) })
        .where('seq', '=', 3)
        .execute();
      expect((await createAuditService({ store: createAuditStore(db), clock: systemClock }).verify()).ok).toBe(true);
      deleted = await db.selectFrom('audit_log').selectAll().where('seq', '=', 5).executeTakeFirstOrThrow();
      await db.deleteFrom('audit_log').where('seq', '=', 5).execute();
    });
    const run = await verifyCommand();
    expect(run.code).toBe(1);
    expect(run.report).toMatchObject({ ok: false, broken_at: 5, reason: 'entry 5 is missing' });
  });

  it('exits 1 when the newest entry is deleted (the head points past the end)', async () => {
    await withDatabase(async ({ db }) => {
      if (!deleted) throw new Error('the previous case saved no entry');
      await db
        .insertInto('audit_log')
        .values({ ...deleted, details: JSON.stringify(deleted.details) })
        .execute();
      expect((await createAuditService({ store: createAuditStore(db), clock: systemClock }).verify()).ok).toBe(true);
      await db.deleteFrom('audit_log').where('seq', '=', ENTRIES).execute();
    });
    const run = await verifyCommand();
    expect(run.code).toBe(1);
    expect(run.report).toMatchObject({ ok: false, entries: ENTRIES - 1, head_seq: ENTRIES, broken_at: ENTRIES });
  });

  it('exits 2 on a configuration error', async () => {
    const run = await verifyCommand({ DATABASE_URL: 'mysql://nope' });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/DATABASE_URL/);
  });
});
