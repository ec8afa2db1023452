// schema.ts is written by hand; this compares it with what the migrations actually build, so
// that a migration without its schema.ts line (or the reverse) fails here and not at run time.
// The interfaces are read with the TypeScript checker so that the aliases (Timestamp, BigCount,
// Json, Generated) resolve to what Kysely sees: a column is nullable when its select type holds
// null, and may be left out of an insert when its insert type holds undefined.
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../../test/support/db.js';

interface Column {
  nullable: boolean;
  /** Kysely lets an insert leave it out: a default (Generated<>) or null. */
  optionalOnInsert: boolean;
}
type Tables = Map<string, Map<string, Column>>;

const SCHEMA_FILE = fileURLToPath(new URL('./schema.ts', import.meta.url));
// Kysely's own bookkeeping, not the application's.
const MIGRATOR_TABLES = new Set(['weir_migrations', 'weir_migrations_lock']);

function declaredTables(): Tables {
  const config = ts.getParsedCommandLineOfConfigFile(
    fileURLToPath(new URL('../../../tsconfig.json', import.meta.url)),
    {},
    { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => undefined },
  );
  const program = ts.createProgram([SCHEMA_FILE], { ...config?.options, noEmit: true });
  const problems = ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
  // Unresolved kysely types would read as `any` and every column would look alike.
  if (problems.length > 0) throw new Error(`schema.ts does not compile:\n${problems.join('\n')}`);
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(SCHEMA_FILE);
  const db = source?.statements.find(
    (s): s is ts.InterfaceDeclaration => ts.isInterfaceDeclaration(s) && s.name.text === 'DB',
  );
  if (!db) throw new Error('schema.ts has no `interface DB`');

  const constituents = (type: ts.Type): ts.Type[] => (type.isUnion() ? type.types : [type]);
  const has = (types: ts.Type[], flag: ts.TypeFlags) => types.some((t) => (t.flags & flag) !== 0);
  // ColumnType<S, I, U> is {__select__: S, __insert__: I, __update__: U}; Kysely reads each
  // member of a union (`Json | null`) on its own, and so does this.
  const part = (type: ts.Type, name: '__select__' | '__insert__'): ts.Type[] =>
    constituents(type).flatMap((member) => {
      const property = member.getProperty(name);
      return property ? constituents(checker.getTypeOfSymbol(property)) : [member];
    });

  const tables: Tables = new Map();
  for (const table of checker.getTypeAtLocation(db).getProperties()) {
    const columns = new Map<string, Column>();
    for (const column of checker.getTypeOfSymbol(table).getProperties()) {
      const type = checker.getTypeOfSymbol(column);
      const select = part(type, '__select__');
      const insert = part(type, '__insert__');
      const nullable = has(select, ts.TypeFlags.Null);
      const omittable = has(insert, ts.TypeFlags.Undefined) || has(insert, ts.TypeFlags.Null);
      columns.set(column.name, { nullable, optionalOnInsert: omittable });
    }
    tables.set(table.name, columns);
  }
  return tables;
}

async function migratedTables(t: TestDatabase): Promise<Map<string, Map<string, Column & { hasDefault: boolean }>>> {
  // Partitions are the database's business; the application names only their parent.
  const { rows } = await sql<{
    table_name: string;
    column_name: string;
    is_nullable: 'YES' | 'NO';
    column_default: string | null;
    is_identity: 'YES' | 'NO';
    is_generated: string;
  }>`
    select c.table_name, c.column_name, c.is_nullable, c.column_default, c.is_identity, c.is_generated
      from information_schema.columns c
      join information_schema.tables t on t.table_schema = c.table_schema and t.table_name = c.table_name
      join pg_catalog.pg_class k on k.oid = format('%I.%I', c.table_schema, c.table_name)::regclass
     where c.table_schema = current_schema() and t.table_type = 'BASE TABLE' and not k.relispartition
     order by c.table_name, c.ordinal_position`.execute(t.database.db);
  const tables = new Map<string, Map<string, Column & { hasDefault: boolean }>>();
  for (const r of rows) {
    if (MIGRATOR_TABLES.has(r.table_name)) continue;
    const columns = tables.get(r.table_name) ?? new Map();
    // `default null` says nothing an absent default does not.
    const hasDefault =
      (r.column_default !== null && !/^null(::|$)/i.test(r.column_default)) ||
      r.is_identity === 'YES' ||
      r.is_generated === 'ALWAYS';
    const nullable = r.is_nullable === 'YES';
    columns.set(r.column_name, { nullable, hasDefault, optionalOnInsert: hasDefault || nullable });
    tables.set(r.table_name, columns);
  }
  return tables;
}

describe('schema.ts against the migrated database', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase();
  });
  afterAll(async () => t?.close());

  it('declares every table and column the migrations create, with their nullability and defaults', async () => {
    const declared = declaredTables();
    const actual = await migratedTables(t);
    const drift: string[] = [];
    for (const name of actual.keys())
      if (!declared.has(name)) drift.push(`${name}: table created by the migrations, missing from DB in schema.ts`);
    for (const name of declared.keys())
      if (!actual.has(name)) drift.push(`${name}: table in schema.ts, not created by any migration`);
    for (const [name, columns] of actual) {
      const types = declared.get(name);
      if (!types) continue;
      for (const column of columns.keys())
        if (!types.has(column)) drift.push(`${name}.${column}: column missing from schema.ts`);
      for (const column of types.keys())
        if (!columns.has(column)) drift.push(`${name}.${column}: column in schema.ts, not in the database`);
      for (const [column, db] of columns) {
        const ts = types.get(column);
        if (!ts) continue;
        if (db.nullable !== ts.nullable)
          drift.push(
            `${name}.${column}: ${db.nullable ? 'nullable' : 'not null'} in the database, ` +
              `${ts.nullable ? 'has' : 'lacks'} \`| null\` in schema.ts`,
          );
        // A nullable column may always be left out; what matters is a NOT NULL one.
        else if (!db.nullable && db.hasDefault !== ts.optionalOnInsert)
          drift.push(
            db.hasDefault
              ? `${name}.${column}: has a default in the database, schema.ts requires it on insert (Generated<>?)`
              : `${name}.${column}: no default in the database, schema.ts lets an insert leave it out`,
          );
      }
    }
    expect(drift, `schema.ts and the migrations disagree:\n${drift.join('\n')}`).toEqual([]);
  });
});
