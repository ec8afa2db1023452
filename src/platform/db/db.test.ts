import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../../test/support/db.js';
import { afterCommit, executor, inTransaction } from './ambient.js';
import { migrate, transaction } from './index.js';

describe(`database (${process.env.DATABASE_URL ? 'postgres' : 'pglite'})`, () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase();
  });
  afterAll(async () => t?.close());

  it('applies migrations once and is idempotent', async () => {
    expect(await migrate(t.database.db)).toEqual([]);
    const rows = await sql<{ name: string }>`select name from weir_migrations order by name`.execute(t.database.db);
    expect(rows.rows.map((r) => r.name)).toContain('0001_foundation');
  });

  it('reads int8 as number and timestamps as UTC dates', async () => {
    const r = await sql<{ n: number; ts: Date; tz: Date }>`
      select 42::int8 as n, '2026-01-02 03:04:05'::timestamp as ts, '2026-01-02T03:04:05+02:00'::timestamptz as tz`.execute(
      t.database.db,
    );
    expect(r.rows[0]?.n).toBe(42);
    expect(r.rows[0]?.ts.toISOString()).toBe('2026-01-02T03:04:05.000Z');
    expect(r.rows[0]?.tz.toISOString()).toBe('2026-01-02T01:04:05.000Z');
  });

  it('round-trips jsonb and reports affected rows', async () => {
    const db = t.database.db;
    await db
      .insertInto('job_schedules')
      .values({
        key: 'k1',
        queue: 'q',
        name: 'n',
        payload: JSON.stringify({ a: [1, { b: 'c' }] }),
        every_ms: 1000,
        next_run_at: new Date(),
      })
      .execute();
    const row = await db.selectFrom('job_schedules').selectAll().where('key', '=', 'k1').executeTakeFirstOrThrow();
    expect(row.payload).toEqual({ a: [1, { b: 'c' }] });
    const res = await db.updateTable('job_schedules').set({ every_ms: 5 }).where('key', '=', 'k1').executeTakeFirst();
    expect(res.numUpdatedRows).toBe(1n);
  });

  it('commits and rolls back transactions', async () => {
    const db = t.database.db;
    await transaction(db, async (trx) => {
      await trx
        .insertInto('job_schedules')
        .values({ key: 'tx-ok', queue: 'q', name: 'n', payload: '{}', every_ms: 1, next_run_at: new Date() })
        .execute();
    });
    await expect(
      transaction(db, async (trx) => {
        await trx
          .insertInto('job_schedules')
          .values({ key: 'tx-bad', queue: 'q', name: 'n', payload: '{}', every_ms: 1, next_run_at: new Date() })
          .execute();
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    const keys = (await db.selectFrom('job_schedules').select('key').execute()).map((r) => r.key);
    expect(keys).toContain('tx-ok');
    expect(keys).not.toContain('tx-bad');
  });

  it('serializes concurrent transactions without interleaving', async () => {
    const db = t.database.db;
    await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        transaction(db, async (trx) => {
          await trx
            .insertInto('job_schedules')
            .values({ key: `c${i}`, queue: 'q', name: 'n', payload: '{}', every_ms: i, next_run_at: new Date() })
            .execute();
          if (i % 2) throw new Error('rollback');
        }).catch(() => undefined),
      ),
    );
    const n = await db.selectFrom('job_schedules').select('key').where('key', 'like', 'c%').execute();
    expect(n.map((r) => r.key).sort()).toEqual(['c0', 'c2', 'c4', 'c6', 'c8']);
  });

  it('runs afterCommit work only once the ambient transaction committed', async () => {
    const db = t.database.db;
    const seen: string[] = [];
    await inTransaction(db, async () => {
      await executor(db)
        .insertInto('job_schedules')
        .values({ key: 'ac-1', queue: 'q', name: 'n', payload: '{}', every_ms: 1, next_run_at: new Date() })
        .execute();
      await afterCommit(async () => {
        const row = await db.selectFrom('job_schedules').select('key').where('key', '=', 'ac-1').executeTakeFirst();
        seen.push(`after:${row?.key ?? 'missing'}`);
      });
      seen.push('inside');
    });
    await inTransaction(db, async () => {
      await afterCommit(async () => void seen.push('never'));
      throw new Error('rollback');
    }).catch(() => undefined);
    await afterCommit(async () => void seen.push('outside'));
    expect(seen).toEqual(['inside', 'after:ac-1', 'outside']);
  });
});

describe('a new embedded data directory', () => {
  it('is created and migrated in a thread of its own, then opened with small shared buffers', async () => {
    const { mkdtempSync, rmSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const path = await import('node:path');
    const dir = mkdtempSync(path.join(tmpdir(), 'weir-pglite-'));
    const { openDatabase } = await import('./index.js');
    const database = await openDatabase({ dataDir: path.join(dir, 'pglite') });
    try {
      // The thread applied every migration: nothing is left for this one.
      expect(await migrate(database.db)).toEqual([]);
      const applied = await sql<{ n: number }>`select count(*)::int as n from weir_migrations`.execute(database.db);
      const { migrations } = await import('./migrations/index.js');
      expect(applied.rows[0]!.n).toBe(Object.keys(migrations).length);
      const buffers = await sql<{ shared_buffers: string }>`show shared_buffers`.execute(database.db);
      expect(buffers.rows[0]!.shared_buffers).toBe('16MB');
    } finally {
      await database.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
