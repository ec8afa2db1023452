import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../../test/support/db.js';
import { isDuplicateTable, isUniqueViolation } from './errors.js';

describe('database errors', () => {
  it('reads the SQLSTATE of anything thrown', () => {
    expect(isUniqueViolation({ code: '23505' })).toBe(true);
    expect(isUniqueViolation({ code: '23503' })).toBe(false);
    expect(isUniqueViolation(new Error('23505'))).toBe(false);
    expect(isUniqueViolation(null)).toBe(false);
    expect(isUniqueViolation('23505')).toBe(false);
    expect(isDuplicateTable({ code: '42P07' })).toBe(true);
    expect(isDuplicateTable({ code: '23505' })).toBe(false);
  });

  describe(`as the database reports them (${process.env.DATABASE_URL ? 'postgres' : 'pglite'})`, () => {
    let t: TestDatabase;
    beforeAll(async () => {
      t = await createTestDatabase();
    });
    afterAll(async () => t?.close());

    it('recognises a unique violation and a duplicate table', async () => {
      const db = t.database.db;
      await sql`create table weir_errors_probe (k text primary key)`.execute(db);
      await sql`insert into weir_errors_probe values ('a')`.execute(db);
      const dup = await sql`insert into weir_errors_probe values ('a')`.execute(db).catch((e: unknown) => e);
      expect(isUniqueViolation(dup)).toBe(true);
      const again = await sql`create table weir_errors_probe (k text)`.execute(db).catch((e: unknown) => e);
      expect(isDuplicateTable(again)).toBe(true);
      expect(isUniqueViolation(again)).toBe(false);
    });
  });
});
