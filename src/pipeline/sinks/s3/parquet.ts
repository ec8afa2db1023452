// Parquet objects for Amazon Security Lake custom sources: one object per OCSF class and
// event day, rows sorted by time, in the class's schema (lake-schema.ts): nested objects as
// structs, arrays as lists, so Athena, Spark or DuckDB read `actor.user.name` as a column.
// Every value goes where the schema says; what does not fit is kept, never dropped: a value
// of the wrong type (a string in `severity_id`), a key the schema does not define (a vendor
// field, an extension's attribute) goes into `unmapped` (MAP<string, string>) under its
// path (`severity_id`, `actor.user.x_vendor`, `resources[1].type_id`), next to the event's
// own `unmapped` keys flattened the same way (`requestParameters.name`).
// hyparquet-writer writes the file (repetition and definition levels for nested columns).
import { gzipSync } from 'node:zlib';
import { parquetWriteBuffer, type ColumnSource } from 'hyparquet-writer';
import { OCSF_VERSION, ocsfCatalog } from '../../../ocsf/catalog.js';
import type { OcsfCatalog } from '../../../ocsf/types.js';
import { eventDay } from './layout.js';
import {
  classSchema,
  inferSchema,
  OBJECT_DEPTH,
  pruneSchema,
  UNMAPPED,
  type LakeNode,
  type Leaf,
} from './lake-schema.js';

/** Does not fit the column: the value goes to `unmapped`. */
const MISFIT = Symbol('misfit');
const INT32_MIN = -(2 ** 31);
const INT32_MAX = 2 ** 31 - 1;
/** Beyond ±8.64e15 ms a Date is invalid. */
const MAX_MS = 8.64e15;

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

function fitLeaf(leaf: Leaf, v: unknown): unknown {
  switch (leaf) {
    case 'int32':
      return typeof v === 'number' && Number.isInteger(v) && v >= INT32_MIN && v <= INT32_MAX ? v : MISFIT;
    case 'int64':
      return typeof v === 'number' && Number.isSafeInteger(v) ? BigInt(v) : MISFIT;
    case 'timestamp': {
      // datetime_t: an RFC 3339 text in OCSF JSON.
      const ms = typeof v === 'string' ? Date.parse(v) : NaN;
      return Number.isFinite(ms) && Math.abs(ms) <= MAX_MS ? ms : MISFIT;
    }
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

/** Misfits of one event, by path. */
type Leftovers = Map<string, unknown>;

/** One batch's fitting: the misfits of the current event, the leaves used, the current path. */
interface Fitting {
  out: Leftovers;
  /** The schema's leaves a value of the batch went to. */
  readonly used: Set<LakeNode>;
  /** Attribute names and array indexes down to the value being fitted (joined on a misfit only). */
  readonly path: (string | number)[];
}

const pathText = (path: readonly (string | number)[]): string =>
  path.map((s, i) => (typeof s === 'number' ? `[${s}]` : i === 0 ? s : `.${s}`)).join('');

function fitOne(node: LakeNode, v: unknown, ctx: Fitting): unknown {
  if (node.kind === 'leaf') {
    const f = fitLeaf(node.leaf, v);
    if (f !== MISFIT) ctx.used.add(node);
    return f;
  }
  if (node.kind === 'map' || !isPlainObject(v)) return MISFIT;
  const fitted: Record<string, unknown> = {};
  for (const key in v) {
    const x = v[key];
    if (x === null || x === undefined) continue;
    const child = node.byName.get(key);
    ctx.path.push(key);
    const f = child ? fit(child, x, ctx) : MISFIT;
    if (f === MISFIT) ctx.out.set(pathText(ctx.path), x);
    else fitted[key] = f;
    ctx.path.pop();
  }
  return fitted;
}

/** The value in the node's shape, or MISFIT (misfits below it are in `ctx.out`). */
function fit(node: LakeNode, v: unknown, ctx: Fitting): unknown {
  if (node.kind === 'map' || !node.list) return fitOne(node, v, ctx);
  if (!Array.isArray(v)) return MISFIT;
  // An empty list of scalars is still a value; one of objects has no leaf to keep it.
  if (node.kind === 'leaf') ctx.used.add(node);
  const list = new Array<unknown>(v.length);
  for (let i = 0; i < v.length; i++) {
    const e: unknown = v[i];
    let f: unknown = null;
    if (e !== null && e !== undefined) {
      ctx.path.push(i);
      f = fitOne(node, e, ctx);
      if (f === MISFIT) {
        ctx.out.set(pathText(ctx.path), e);
        f = null;
      }
      ctx.path.pop();
    }
    list[i] = f;
  }
  return list;
}

const text = (v: unknown): string => (typeof v === 'string' ? v : JSON.stringify(v));

/**
 * `unmapped` as a map: the event's own unmapped object flattened to dotted keys (arrays and
 * scalars as their text), then the misfits by path. A key already taken gets `#2`, `#3`...
 */
function unmappedMap(own: unknown, leftovers: Leftovers): Map<string, string> | null {
  const map = new Map<string, string>();
  const put = (key: string, value: string) => {
    let k = key;
    for (let i = 2; map.has(k); i++) k = `${key}#${i}`;
    map.set(k, value);
  };
  const flatten = (o: Record<string, unknown>, prefix: string) => {
    for (const key in o) {
      const v = o[key];
      if (v === null || v === undefined) continue;
      if (isPlainObject(v) && Object.keys(v).length > 0) flatten(v, `${prefix}${key}.`);
      else put(prefix + key, text(v));
    }
  };
  if (isPlainObject(own)) flatten(own, '');
  else if (own !== null && own !== undefined) put(UNMAPPED, text(own));
  for (const [k, v] of leftovers) put(k, text(v));
  return map.size > 0 ? map : null;
}

export interface ParquetOptions {
  /** zlib level of the GZIP pages (Security Lake's `.gz.parquet`). */
  gzipLevel?: number;
  catalog?: OcsfCatalog;
}

/**
 * One Parquet file (GZIP pages, one row group) of events that all share one class_uid, in the
 * class schema pruned to the columns the events have (lake-schema.ts, pruneSchema).
 */
export function buildParquet(
  events: readonly Record<string, unknown>[],
  classUid: number,
  options: ParquetOptions = {},
): Uint8Array {
  const schema = classSchema(classUid, options.catalog) ?? inferSchema(events);
  const rows = [...events].sort((a, b) => timeOf(a) - timeOf(b));
  const n = rows.length;
  const data = new Map<string, unknown[]>(schema.columns.map((c) => [c.name, new Array<unknown>(n).fill(null)]));
  const unmapped = schema.byName.get(UNMAPPED)!;
  const ctx: Fitting = { out: new Map(), used: new Set(), path: [] };

  for (let r = 0; r < n; r++) {
    const event = rows[r]!;
    ctx.out = new Map();
    for (const name in event) {
      const v = event[name];
      if (v === null || v === undefined || name === UNMAPPED) continue;
      const node = schema.byName.get(name);
      ctx.path.push(name);
      const f = node === undefined ? MISFIT : fit(node, v, ctx);
      ctx.path.pop();
      if (f === MISFIT) ctx.out.set(name, v);
      else data.get(name)![r] = f;
    }
    const map = unmappedMap(event[UNMAPPED], ctx.out);
    if (map) {
      data.get(UNMAPPED)![r] = map;
      ctx.used.add(unmapped);
    }
  }
  const { columns, elements } = pruneSchema(schema, ctx.used);

  const level = options.gzipLevel ?? 3;
  // Statistics where a query engine can prune with them: top-level scalars (time, class_uid,
  // severity_id...), not the thousands of mostly empty leaves below the structs.
  // A column no event of the batch has is pages of nulls only, a few bytes each: compressing
  // them would only add gzip's own header. Offset indexes serve page skipping, and these
  // objects have one page per column.
  const columnData: ColumnSource[] = columns.map((c) => {
    const values = data.get(c.name)!;
    return {
      name: c.name,
      data: values,
      statistics: c.kind === 'leaf' && c.leaf !== 'json' && !c.list,
      offsetIndex: false,
      ...(values.every((v) => v === null) ? { codec: 'UNCOMPRESSED' as const } : {}),
    };
  });
  const buffer = parquetWriteBuffer({
    columnData,
    schema: elements,
    codec: 'GZIP',
    compressors: { GZIP: (input) => gzipSync(input, { level }) },
    // One row group: a batch is at most a few thousand rows, far under Security Lake's 256 MB.
    rowGroupSize: Math.max(n, 1),
    createdBy: 'weir',
    kvMetadata: [
      { key: 'ocsf.class_uid', value: String(classUid) },
      { key: 'ocsf.version', value: OCSF_VERSION },
      { key: 'weir.object_depth', value: String(OBJECT_DEPTH) },
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
