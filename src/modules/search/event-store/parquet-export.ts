// Exporting stored events to Parquet in the layout Amazon Security Lake reads from a custom
// source (docs/search.md, Export): one source per OCSF class, `ext/<source>/region=<region>/
// accountId=<account>/eventDay=<YYYYMMDD>/<file>.parquet`, rows sorted by time, each event's
// attributes as real Parquet columns (nested objects as structs, lists as lists), so Athena,
// Spark or DuckDB read `actor.user.name` as a column. DuckDB writes it: the columns of a class
// are the structure merged over that class's events (json_group_structure), and each event is
// read into it (json_transform). The DuckDB store exports from its own table; the PostgreSQL
// store reads its events a page at a time into a DuckDB in memory first.
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import {
  DuckDBInstance,
  TIMESTAMP_MS,
  VARCHAR,
  DuckDBDataChunk,
  DuckDBTimestampMillisecondsValue,
  type DuckDBConnection,
  type DuckDBValue,
} from '@duckdb/node-api';
import { ocsfCatalog } from '../../../ocsf/catalog.js';
import { sqlString } from './duckdb/sql.js';
import type { EventStore, ParquetExport } from './port.js';

export interface ExportOptions {
  organizationIds: readonly number[];
  from: Date;
  to: Date;
  /** The export's directory (created). */
  dir: string;
  region: string;
  accountId: string;
}

/** A custom source's name for an OCSF class: `weir-<class name>` (`weir-class-<uid>` for a class the catalog does not know). */
export function sourceName(classUid: number | null): string {
  const name = classUid === null ? undefined : ocsfCatalog().classByUid(classUid)?.name;
  return name ? `weir-${name.replaceAll('_', '-')}` : `weir-class-${classUid ?? 'none'}`;
}

/**
 * Writes the rows of `source` (a relation with `time`, `class_uid` and `event` JSON text) under
 * `o.dir` in Security Lake's layout; the files written (relative to `o.dir`) and the row count.
 */
export async function writeSecurityLake(
  connection: DuckDBConnection,
  source: string,
  o: ExportOptions,
): Promise<ParquetExport> {
  await mkdir(o.dir, { recursive: true });
  const classes = (
    await connection.runAndReadAll(`select distinct class_uid from ${source} s order by 1 nulls last`)
  ).getRowsJS() as [number | null][];
  const files: string[] = [];
  let rows = 0;
  for (const [cls] of classes) {
    const where = cls === null ? 'class_uid is null' : `class_uid = ${Math.trunc(Number(cls))}`;
    const structure = (
      await connection.runAndReadAll(`select json_group_structure(event)::VARCHAR from ${source} s where ${where}`)
    ).getRowsJS()[0]?.[0] as string | null | undefined;
    if (!structure || !structure.startsWith('{')) continue;
    const target = path.join(o.dir, 'ext', sourceName(cls === null ? null : Number(cls)));
    await mkdir(target, { recursive: true });
    const res = await connection.run(`
      copy (
        select unnest(json_transform(event, ${sqlString(structure)})),
          ${sqlString(o.region)} as region, ${sqlString(o.accountId)} as accountId, strftime(time, '%Y%m%d') as eventDay
        from ${source} s where ${where} order by time
      ) to ${sqlString(target)} (format parquet, compression snappy, partition_by (region, accountId, eventDay), overwrite_or_ignore true, filename_pattern 'weir_{uuid}')`);
    rows += Number(res.rowsChanged);
    const listed = (
      await connection.runAndReadAll(
        `select file from glob(${sqlString(path.join(target, '**', '*.parquet'))}) order by 1`,
      )
    ).getRowsJS() as [string][];
    for (const [file] of listed) files.push(path.relative(o.dir, file));
  }
  return { files: [...new Set(files)].sort(), rows };
}

/** The export of a store that is not DuckDB: its events a page at a time into a DuckDB in memory, then the same writer. */
export async function exportThroughMemory(store: Pick<EventStore, 'page'>, o: ExportOptions): Promise<ParquetExport> {
  await mkdir(o.dir, { recursive: true });
  const instance = await DuckDBInstance.create(':memory:', {
    memory_limit: '256MB',
    threads: '1',
    temp_directory: path.join(o.dir, '.tmp'),
  });
  const connection = await instance.connect();
  try {
    await connection.run('create table staged (time TIMESTAMP_MS, event VARCHAR)');
    const appender = await connection.createAppender('staged');
    const scope = { organizationIds: o.organizationIds, from: o.from, to: o.to, condition: null };
    let after: { time: Date; id: string } | null = null;
    for (;;) {
      const page = await store.page(scope, after, 5_000);
      if (page.length === 0) break;
      const chunk = DuckDBDataChunk.create([TIMESTAMP_MS, VARCHAR], page.length);
      chunk.setColumns([
        page.map((e): DuckDBValue => new DuckDBTimestampMillisecondsValue(BigInt(e.time.getTime()))),
        page.map((e): DuckDBValue => e.line),
      ]);
      appender.appendDataChunk(chunk);
      const last = page[page.length - 1]!;
      after = { time: last.time, id: last.event_id };
      if (page.length < 5_000) break;
    }
    appender.closeSync();
    return await writeSecurityLake(
      connection,
      `(select time, try_cast(event->>'class_uid' as INTEGER) as class_uid, event::JSON as event from staged)`,
      o,
    );
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}
