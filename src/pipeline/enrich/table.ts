// Lookup tables: reading an upload (CSV or JSON rows), checking it, patching a version into the
// next one, and building the in-memory index the one pass asks per event.
//
// Decisions:
// - CSV cells stay strings, verbatim (an empty cell is ""): CSV has no types, and a guess turns
//   ZIP code "02134" or account "0012" into a number. JSON rows keep their scalar types.
// - Duplicate keys are not an error: the last row of a key wins, in a table as in a patch.
//   Keys compare per match kind (keyText): exactly, lower-cased, or as the normalized network.
// - A key cell may be a string or a number (compared as its decimal text).
import { parse as parseCsvSync } from 'csv-parse/sync';
import { CidrIndex } from './cidr-index.js';
import { parseNetwork, networkText } from './ip.js';
import { MATCH_KINDS, type Cell, type Lookup, type MatchKind, type Row, type TableData } from './types.js';
import { WildcardIndex } from './wildcard-index.js';

export { encodeTable, decodeTable } from './table-codec.js';

export const TABLE_LIMITS = {
  rows: 2_000_000,
  columns: 64,
  keyLength: 1024,
  columnNameLength: 128,
  /** Problems listed by validateTable before it summarizes the rest. */
  problems: 100,
} as const;
export const MAX_TABLE_ROWS = TABLE_LIMITS.rows;

export interface TableProblem {
  at: string;
  message: string;
}

/** An upload that cannot be read as a table at all (validateTable reports the rest). */
export class TableError extends Error {
  constructor(
    readonly at: string,
    message: string,
  ) {
    super(`${at}: ${message}`);
    this.name = 'TableError';
  }
}

/** The first line names the columns; RFC 4180 quoting; CRLF, LF or CR line ends, mixed; a UTF-8 BOM and blank lines are skipped. */
export function parseTableCsv(text: string, keyColumn: string, match: MatchKind): TableData {
  let records: string[][];
  try {
    records = parseCsvSync(text, {
      bom: true,
      skip_empty_lines: true,
      relax_column_count: false,
      record_delimiter: ['\r\n', '\n', '\r'],
    });
  } catch (e) {
    const err = e as Error & { lines?: number };
    throw new TableError(err.lines ? `line ${err.lines}` : 'csv', err.message.replace(/^Invalid Record Length: /, ''));
  }
  const header = records[0];
  if (!header) throw new TableError('csv', 'the file is empty: the first line names the columns');
  const seen = new Set<string>();
  header.forEach((name, i) => {
    if (name === '') throw new TableError(`columns[${i}]`, 'a column has no name');
    if (seen.has(name)) throw new TableError(`columns[${i}]`, `column "${name}" appears twice`);
    seen.add(name);
  });
  const rows: Row[] = new Array(records.length - 1);
  const width = header.length;
  for (let r = 1; r < records.length; r++) {
    const rec = records[r]!;
    const row: Row = {};
    for (let c = 0; c < width; c++) row[header[c]!] = rec[c]!;
    rows[r - 1] = row;
  }
  return { key_column: keyColumn, match, columns: header, rows };
}

/**
 * An array of flat objects. Columns are the union of their keys, in order of first appearance;
 * a key missing from a row is absent from it. Values are taken as they are: validateTable
 * reports the ones that are not scalars.
 */
export function tableFromJson(rows: unknown, keyColumn: string, match: MatchKind): TableData {
  if (!Array.isArray(rows)) throw new TableError('rows', 'expected an array of objects');
  const columns = new Set<string>();
  rows.forEach((r, i) => {
    if (r === null || typeof r !== 'object' || Array.isArray(r))
      throw new TableError(`rows[${i}]`, 'expected an object');
    for (const k of Object.keys(r)) columns.add(k);
  });
  return { key_column: keyColumn, match, columns: [...columns], rows: rows as Row[] };
}

/** The text a key compares by under a match kind; undefined when it cannot be a key. */
export function keyText(value: unknown, match: MatchKind): string | undefined {
  let s: string;
  if (typeof value === 'string') s = value;
  else if (typeof value === 'number' && Number.isFinite(value)) s = String(value);
  else return undefined;
  if (s === '') return undefined;
  switch (match) {
    case 'exact':
      return s;
    case 'case_insensitive':
    case 'wildcard':
      return s.toLowerCase();
    case 'cidr': {
      const net = parseNetwork(s);
      return net && networkText(net);
    }
  }
}

function isCell(v: unknown): v is Cell {
  return v === null || typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v));
}

const prop = (name: string) => (/^[A-Za-z_][A-Za-z0-9_]*$/.test(name) ? `.${name}` : `[${JSON.stringify(name)}]`);

/** Every problem of a table, each with where it is (`rows[12].ip`); empty when it can be built. */
export function validateTable(data: TableData): TableProblem[] {
  const problems: TableProblem[] = [];
  let more = 0;
  const add = (at: string, message: string) => {
    if (problems.length < TABLE_LIMITS.problems) problems.push({ at, message });
    else more++;
  };
  const { key_column: key, match, columns, rows } = data;
  if (!(MATCH_KINDS as readonly string[]).includes(match)) add('match', `must be one of ${MATCH_KINDS.join(', ')}`);
  if (!Array.isArray(columns)) return [{ at: 'columns', message: 'expected a list of column names' }];
  if (!Array.isArray(rows)) return [{ at: 'rows', message: 'expected a list of rows' }];
  if (!columns.includes(key)) add('key_column', `the key column "${key}" is not a column of the table`);
  if (columns.length > TABLE_LIMITS.columns)
    add('columns', `a table has at most ${TABLE_LIMITS.columns} columns (this one has ${columns.length})`);
  columns.forEach((c, i) => {
    if (typeof c !== 'string' || c === '') add(`columns[${i}]`, 'a column name is a non-empty string');
    else if (c.length > TABLE_LIMITS.columnNameLength)
      add(`columns[${i}]`, `a column name is limited to ${TABLE_LIMITS.columnNameLength} characters`);
  });
  if (rows.length > TABLE_LIMITS.rows) {
    add(
      'rows',
      `a table has at most ${TABLE_LIMITS.rows.toLocaleString('en-US')} rows (this one has ${rows.length.toLocaleString('en-US')})`,
    );
    return finish(problems, more);
  }
  const known = new Set(columns);
  const keyAt = prop(key);
  const keyKnown = known.has(key); // else the one problem above says it all
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i] as unknown;
    if (row === null || typeof row !== 'object' || Array.isArray(row)) {
      add(`rows[${i}]`, 'a row is an object of column → value');
      continue;
    }
    const r = row as Record<string, unknown>;
    for (const c in r) {
      if (!known.has(c)) add(`rows[${i}]${prop(c)}`, `"${c}" is not a column of the table`);
      else if (!isCell(r[c])) add(`rows[${i}]${prop(c)}`, 'a cell is a string, a finite number, a boolean or null');
    }
    const k = r[key];
    if (!keyKnown) continue;
    if (k === undefined || k === null || k === '') add(`rows[${i}]${keyAt}`, 'the row has no key');
    else if (typeof k !== 'string' && typeof k !== 'number') add(`rows[${i}]${keyAt}`, 'a key is a string or a number');
    else if (String(k).length > TABLE_LIMITS.keyLength)
      add(`rows[${i}]${keyAt}`, `a key is limited to ${TABLE_LIMITS.keyLength} characters`);
    else if (match === 'cidr' && keyText(k, match) === undefined) {
      add(`rows[${i}]${keyAt}`, `"${String(k).slice(0, 64)}" is not an IPv4 or IPv6 network ("10.0.0.0/8") or address`);
    }
  }
  return finish(problems, more);
}

function finish(problems: TableProblem[], more: number): TableProblem[] {
  if (more > 0) problems.push({ at: 'rows', message: `and ${more.toLocaleString('en-US')} more problems` });
  return problems;
}

export interface TablePatch {
  upsert?: Row[];
  delete?: string[];
}

/**
 * The next version of a table: deletions first, then upserts (an upserted row replaces the
 * whole row of its key, or is appended). Keys compare per match kind; the result holds one
 * row per key, in the order of first appearance. Rows whose key is not valid are kept, for
 * validateTable to report. The base is not modified.
 */
export function applyPatch(base: TableData, patch: TablePatch): TableData {
  const { key_column: key, match } = base;
  const byKey = new Map<string, Row>();
  const invalid: Row[] = [];
  const put = (row: Row) => {
    const k = keyText(row[key], match);
    if (k === undefined) invalid.push(row);
    else byKey.set(k, row);
  };
  for (const row of base.rows) put(row);
  for (const d of patch.delete ?? []) {
    const k = keyText(d, match);
    if (k !== undefined) byKey.delete(k);
  }
  const columns = [...base.columns];
  const known = new Set(columns);
  for (const row of patch.upsert ?? []) {
    for (const c of Object.keys(row)) {
      if (!known.has(c)) {
        known.add(c);
        columns.push(c);
      }
    }
    put(row);
  }
  return { key_column: key, match, columns, rows: [...byKey.values(), ...invalid] };
}

class MapLookup implements Lookup {
  constructor(private readonly map: Map<string, Row>) {}
  get size(): number {
    return this.map.size;
  }
  get(key: string): Row | undefined {
    return this.map.get(key);
  }
}

class CaseInsensitiveLookup implements Lookup {
  constructor(private readonly map: Map<string, Row>) {}
  get size(): number {
    return this.map.size;
  }
  get(key: string): Row | undefined {
    // Most keys arrive already lower-case: the first probe then answers without allocating.
    return this.map.get(key) ?? this.map.get(key.toLowerCase());
  }
}

/**
 * The index of a valid table (validateTable first: rows whose key is not valid are skipped).
 * Rows are shared with the data, not copied: callers do not modify what get() returns.
 */
export function buildTable(data: TableData): Lookup {
  const { key_column: key, match, rows } = data;
  switch (match) {
    case 'exact':
    case 'case_insensitive': {
      const map = new Map<string, Row>();
      for (let i = 0; i < rows.length; i++) {
        const row = rows[i]!;
        const k = keyText(row[key], match);
        if (k !== undefined) map.set(k, row);
      }
      return match === 'exact' ? new MapLookup(map) : new CaseInsensitiveLookup(map);
    }
    case 'cidr': {
      const index = new CidrIndex();
      for (let i = 0; i < rows.length; i++) {
        const row = rows[i]!;
        const k = row[key];
        if (typeof k === 'string') index.add(k, row);
      }
      return index.seal();
    }
    case 'wildcard': {
      const index = new WildcardIndex();
      for (let i = 0; i < rows.length; i++) {
        const row = rows[i]!;
        const k = keyText(row[key], 'exact');
        if (k !== undefined) index.add(k, row);
      }
      return index.seal();
    }
    default:
      throw new TableError('match', `unknown match kind "${String(match)}"`);
  }
}
