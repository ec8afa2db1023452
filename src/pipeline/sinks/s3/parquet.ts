// Parquet objects for Amazon Security Lake custom sources: one object per OCSF class and
// event day, rows sorted by time. The columns are the class's top-level OCSF attributes
// taken from the catalog, not from the batch, so every object of a class has the same schema
// (what the Glue crawler behind a custom source needs to keep one stable table):
//   - scalar attributes are typed columns (integer_t INT32, long_t INT64, float_t DOUBLE,
//     boolean_t BOOLEAN, timestamp_t TIMESTAMP(ms, UTC), string types UTF8);
//   - object and array attributes are UTF8 columns holding the value's JSON text (not
//     Parquet structs: a struct schema would follow each batch's shape and drift between
//     objects, or expand the whole OCSF object graph);
//   - a value that does not fit its column, and any top-level key the class does not
//     define, is kept in `unmapped` (JSON), the OCSF attribute meant for it: nothing is lost.
// Classes the catalog does not know get columns inferred from the events of the object.
import { gzipSync } from 'node:zlib';
import { parquetWriteBuffer, type ColumnSource, type SchemaElement } from 'hyparquet-writer';
import { ocsfCatalog } from '../../../ocsf/catalog.js';
import type { OcsfAttribute, OcsfCatalog } from '../../../ocsf/types.js';
import { eventDay } from './layout.js';

type Kind = 'int32' | 'int64' | 'double' | 'boolean' | 'string' | 'timestamp' | 'json';
export interface ParquetColumn {
  name: string;
  kind: Kind;
}

const UNMAPPED = 'unmapped';
/** Does not fit the column: the value goes to `unmapped`. */
const MISFIT = Symbol('misfit');
const INT32_MIN = -(2 ** 31);
const INT32_MAX = 2 ** 31 - 1;

function attributeKind(catalog: OcsfCatalog, attr: OcsfAttribute): Kind {
  if (attr.isArray || attr.type === 'object_t') return 'json';
  if (attr.type === 'timestamp_t') return 'timestamp';
  const base = catalog.type(attr.type)?.base ?? attr.type;
  switch (base) {
    case 'integer_t':
      return 'int32';
    case 'long_t':
      return 'int64';
    case 'float_t':
      return 'double';
    case 'boolean_t':
      return 'boolean';
    case 'json_t':
      return 'json';
    default:
      return 'string';
  }
}

const classColumnsCache = new Map<number, readonly ParquetColumn[] | null>();

/** The columns of a class the catalog knows (in the catalog's order), or null. */
export function classColumns(classUid: number, catalog: OcsfCatalog = ocsfCatalog()): readonly ParquetColumn[] | null {
  let cols = classColumnsCache.get(classUid);
  if (cols === undefined) {
    const def = catalog.classByUid(classUid);
    if (def) {
      const list = Object.values(def.attributes).map((a) => ({ name: a.name, kind: attributeKind(catalog, a) }));
      if (!list.some((c) => c.name === UNMAPPED)) list.push({ name: UNMAPPED, kind: 'json' });
      cols = Object.freeze(list);
    } else cols = null;
    classColumnsCache.set(classUid, cols);
  }
  return cols;
}

function valueKind(name: string, v: unknown): Kind {
  if (typeof v === 'boolean') return 'boolean';
  if (typeof v === 'string') return 'string';
  if (typeof v === 'number') {
    if (!Number.isSafeInteger(v)) return 'double';
    return name === 'time' || name.endsWith('_time') ? 'timestamp' : 'int64';
  }
  return 'json';
}

/** Columns of a class the catalog does not know, from the events' values (sorted by name). */
export function inferColumns(events: readonly Record<string, unknown>[]): ParquetColumn[] {
  const kinds = new Map<string, Kind>();
  for (const e of events) {
    for (const [name, v] of Object.entries(e)) {
      if (v === null || v === undefined) continue;
      const k = valueKind(name, v);
      const seen = kinds.get(name);
      if (seen === undefined) kinds.set(name, k);
      else if (seen !== k)
        kinds.set(
          name,
          seen === 'int64' && k === 'double' ? 'double' : seen === 'double' && k === 'int64' ? 'double' : 'json',
        );
    }
  }
  kinds.set(UNMAPPED, 'json');
  return [...kinds].map(([name, kind]) => ({ name, kind })).sort((a, b) => (a.name < b.name ? -1 : 1));
}

function fit(kind: Kind, v: unknown): unknown {
  switch (kind) {
    case 'int32':
      return typeof v === 'number' && Number.isInteger(v) && v >= INT32_MIN && v <= INT32_MAX ? v : MISFIT;
    case 'int64':
      return typeof v === 'number' && Number.isSafeInteger(v) ? BigInt(v) : MISFIT;
    case 'timestamp':
      return typeof v === 'number' && Number.isSafeInteger(v) ? v : MISFIT;
    case 'double':
      return typeof v === 'number' ? v : MISFIT;
    case 'boolean':
      return typeof v === 'boolean' ? v : MISFIT;
    case 'string':
      return typeof v === 'string' ? v : typeof v === 'number' || typeof v === 'boolean' ? String(v) : MISFIT;
    case 'json':
      return JSON.stringify(v);
  }
}

function schemaElement(c: ParquetColumn): SchemaElement {
  const base = { name: c.name, repetition_type: 'OPTIONAL' as const };
  switch (c.kind) {
    case 'int32':
      return { ...base, type: 'INT32' };
    case 'int64':
      return { ...base, type: 'INT64' };
    case 'double':
      return { ...base, type: 'DOUBLE' };
    case 'boolean':
      return { ...base, type: 'BOOLEAN' };
    case 'timestamp':
      return {
        ...base,
        type: 'INT64',
        converted_type: 'TIMESTAMP_MILLIS',
        logical_type: { type: 'TIMESTAMP', isAdjustedToUTC: true, unit: 'MILLIS' },
      };
    default:
      return { ...base, type: 'BYTE_ARRAY', converted_type: 'UTF8', logical_type: { type: 'STRING' } };
  }
}

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

export interface ParquetOptions {
  /** zlib level of the GZIP pages (Security Lake's `.gz.parquet`). */
  gzipLevel?: number;
  catalog?: OcsfCatalog;
}

/** One Parquet file (GZIP pages, one row group) of events that all share one class_uid. */
export function buildParquet(
  events: readonly Record<string, unknown>[],
  classUid: number,
  options: ParquetOptions = {},
): Uint8Array {
  const columns = classColumns(classUid, options.catalog) ?? inferColumns(events);
  const index = new Map(columns.map((c, i) => [c.name, i]));
  const unmappedAt = index.get(UNMAPPED)!;
  const rows = [...events].sort((a, b) => timeOf(a) - timeOf(b));
  const n = rows.length;
  const data = columns.map(() => new Array<unknown>(n).fill(null));

  for (let r = 0; r < n; r++) {
    const event = rows[r]!;
    let extra: Record<string, unknown> | undefined;
    for (const name in event) {
      const v = event[name];
      if (v === null || v === undefined || name === UNMAPPED) continue;
      const at = index.get(name);
      const fitted = at === undefined ? MISFIT : fit(columns[at]!.kind, v);
      if (fitted === MISFIT) (extra ??= {})[name] = v;
      else data[at!]![r] = fitted;
    }
    const own = event[UNMAPPED];
    if (extra)
      data[unmappedAt]![r] = JSON.stringify(
        own === undefined || own === null
          ? extra
          : isPlainObject(own)
            ? { ...own, ...extra }
            : { ...extra, [UNMAPPED]: own },
      );
    else if (own !== undefined && own !== null) data[unmappedAt]![r] = JSON.stringify(own);
  }

  const level = options.gzipLevel ?? 3;
  // Min/max of JSON text prune nothing: statistics only where a query engine can use them.
  const columnData: ColumnSource[] = columns.map((c, i) => ({
    name: c.name,
    data: data[i]!,
    statistics: c.kind !== 'json',
  }));
  const buffer = parquetWriteBuffer({
    columnData,
    schema: [{ name: 'root', num_children: columns.length }, ...columns.map(schemaElement)],
    codec: 'GZIP',
    compressors: { GZIP: (input) => gzipSync(input, { level }) },
    // One row group: a batch is at most a few thousand rows, far under Security Lake's 256 MB.
    rowGroupSize: Math.max(n, 1),
    createdBy: 'weir',
    kvMetadata: [
      { key: 'ocsf.class_uid', value: String(classUid) },
      {
        key: 'weir.json_columns',
        value: columns
          .filter((c) => c.kind === 'json')
          .map((c) => c.name)
          .join(','),
      },
    ],
  });
  return new Uint8Array(buffer);
}

function timeOf(e: Record<string, unknown>): number {
  return typeof e.time === 'number' ? e.time : Number.MAX_SAFE_INTEGER;
}

export interface ClassDayGroup {
  classUid: number;
  /** snake_case class name, for the `{class_name}` placeholder. */
  className: string;
  /** YYYYMMDD (UTC) of the events' `time`. */
  day: string;
  /** Indexes into the batch. */
  indexes: number[];
}

function classNameOf(uid: number, event: Record<string, unknown>, catalog: OcsfCatalog): string {
  const known = catalog.classByUid(uid)?.name;
  if (known) return known;
  const given = event.class_name;
  return typeof given === 'string' && given.trim()
    ? given
        .trim()
        .toLowerCase()
        .replace(/[^a-z0-9]+/g, '_')
    : `class_${uid}`;
}

/**
 * Splits a batch into (class_uid, eventDay) groups, in order of first appearance. Events
 * without a numeric class_uid cannot belong to a custom source: they are refused.
 */
export function groupByClassAndDay(
  events: readonly Record<string, unknown>[],
  fallbackTimeMs: number,
  catalog: OcsfCatalog = ocsfCatalog(),
): { groups: ClassDayGroup[]; refused: number[] } {
  const groups = new Map<string, ClassDayGroup>();
  const refused: number[] = [];
  for (let i = 0; i < events.length; i++) {
    const e = events[i]!;
    const uid = e.class_uid;
    if (typeof uid !== 'number' || !Number.isInteger(uid)) {
      refused.push(i);
      continue;
    }
    const t = e.time;
    // Beyond ±8.64e15 ms a Date is invalid: such a time cannot name a day.
    const day = eventDay(typeof t === 'number' && Math.abs(t) <= 8.64e15 ? t : fallbackTimeMs);
    const key = `${uid}/${day}`;
    let g = groups.get(key);
    if (!g) groups.set(key, (g = { classUid: uid, className: classNameOf(uid, e, catalog), day, indexes: [] }));
    g.indexes.push(i);
  }
  return { groups: [...groups.values()], refused };
}
