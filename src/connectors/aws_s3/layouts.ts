// What an object holds and how it becomes events. The layout is told by the key (the paths
// AWS services write) and, for generic objects, by the content: gzip by its magic bytes, a JSON
// document, NDJSON or text. Nothing an object holds is dropped: a line or document that is not
// what its layout says becomes a text event {"message": ...}, which a mapping parses or the
// quarantine shows.
import { createInterface } from 'node:readline';
import { Readable } from 'node:stream';
import { brotliDecompressSync, createGunzip, gunzipSync } from 'node:zlib';
import { parquetMetadata, parquetReadObjects, type Compressors } from 'hyparquet';
import { VendorError } from '../sdk.js';

export type Layout = 'cloudtrail' | 'vpc_flow' | 'security_lake' | 'ndjson' | 'json' | 'text';
export type LayoutChoice = 'auto' | Layout;
export const LAYOUTS: readonly LayoutChoice[] = [
  'auto',
  'cloudtrail',
  'vpc_flow',
  'security_lake',
  'ndjson',
  'json',
  'text',
];

/** The stream each layout's events are collected under (mappings aws_s3/<stream>). */
export const STREAM_OF: Record<Layout, string> = {
  cloudtrail: 'cloudtrail',
  vpc_flow: 'flow_logs',
  security_lake: 'security_lake',
  ndjson: 'objects',
  json: 'objects',
  text: 'objects',
};

/** A JSON document or a Parquet file is read whole: larger objects are refused with this limit in the message. */
export const MAX_DOCUMENT_BYTES = 256 * 1024 * 1024;

// AWSLogs/[o-org/]<account>/CloudTrail/<region>/YYYY/MM/DD/<file>.json.gz (digests and Insights live in other folders).
const CLOUDTRAIL = /(^|\/)AWSLogs\/(o-[a-z0-9]+\/)?\d{12}\/CloudTrail\/[^/]+\/\d{4}\/\d{2}\/\d{2}\/[^/]+\.json(\.gz)?$/;
// AWSLogs/<account>/vpcflowlogs/<region>/YYYY/MM/DD/<file>.log.gz, and the Hive-compatible aws-service=vpcflowlogs/ paths.
const VPC_FLOW = /(^|\/)(AWSLogs\/\d{12}\/vpcflowlogs\/|(.*\/)?aws-service=vpcflowlogs\/).*\.log(\.gz)?$/;
const PARQUET = /\.parquet$/;

/** The layout a key says, in auto mode; undefined: a generic object (NDJSON, JSON or text by its content). */
export function layoutOfKey(key: string): 'cloudtrail' | 'vpc_flow' | 'security_lake' | undefined {
  if (CLOUDTRAIL.test(key)) return 'cloudtrail';
  if (VPC_FLOW.test(key)) return 'vpc_flow';
  if (PARQUET.test(key)) return 'security_lake';
  return undefined;
}

// CloudTrail's digest files sign the log files; they hold no events.
const CLOUDTRAIL_DIGEST = /(^|\/)AWSLogs\/(o-[a-z0-9]+\/)?\d{12}\/CloudTrail-Digest\//;

/** The stream an object of this key is collected under with this layout choice (undefined: none, a digest file). */
export function streamOfKey(key: string, choice: LayoutChoice): string | undefined {
  if (CLOUDTRAIL_DIGEST.test(key)) return undefined;
  if (choice !== 'auto') return STREAM_OF[choice];
  const layout = layoutOfKey(key);
  return layout ? STREAM_OF[layout] : 'objects';
}

type Raw = Record<string, unknown>;
const message = (line: string): Raw => ({ message: line });

/** The body, gunzipped when it starts with the gzip magic bytes (whatever the key or Content-Encoding say). */
async function decoded(body: Readable): Promise<Readable> {
  const it = body[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  let first = await it.next();
  while (!first.done && first.value.length < 2) {
    const next = await it.next();
    first = next.done ? first : { done: false, value: Buffer.concat([first.value, next.value]) };
    if (next.done) break;
  }
  if (first.done) return Readable.from([]);
  const head = first.value;
  const raw = Readable.from(
    (async function* () {
      yield head;
      for (let n = await it.next(); !n.done; n = await it.next()) yield n.value;
    })(),
  );
  if (head[0] !== 0x1f || head[1] !== 0x8b) return raw;
  const gunzip = createGunzip();
  raw.on('error', (err) => gunzip.destroy(err));
  return raw.pipe(gunzip);
}

async function whole(stream: Readable, what: string): Promise<Buffer> {
  const parts: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    size += (chunk as Buffer).length;
    if (size > MAX_DOCUMENT_BYTES)
      throw new VendorError('invalid_response', `${what}: larger than ${MAX_DOCUMENT_BYTES} bytes read whole`);
    parts.push(chunk as Buffer);
  }
  return Buffer.concat(parts);
}

function lines(stream: Readable): AsyncIterable<string> {
  return createInterface({ input: stream, crlfDelay: Infinity });
}

function parseObject(line: string): Raw | undefined {
  try {
    const v: unknown = JSON.parse(line);
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Raw) : undefined;
  } catch {
    return undefined;
  }
}

/** A JSON document's events: the elements of Records[] (CloudTrail) or of an array, or the object; else its lines as text. */
function* documentEvents(text: string): Generator<Raw> {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    for (const line of text.split(/\r?\n/)) if (line.trim()) yield message(line);
    return;
  }
  const records = Array.isArray(doc) ? doc : (doc as { Records?: unknown } | null)?.Records;
  if (Array.isArray(records)) {
    for (const r of records) yield typeof r === 'object' && r !== null && !Array.isArray(r) ? (r as Raw) : { value: r };
  } else if (typeof doc === 'object' && doc !== null) yield doc as Raw;
  else yield { value: doc };
}

const FIELD = /^[a-z][a-z0-9-]*$/;

/** VPC flow log text: the header line names the fields; each record becomes an object keyed by them. */
async function* flowEvents(stream: Readable): AsyncGenerator<Raw> {
  let fields: string[] | undefined;
  let first = true;
  for await (const line of lines(stream)) {
    if (!line.trim()) continue;
    const values = line.trim().split(/\s+/);
    if (first) {
      first = false;
      if (values.every((v) => FIELD.test(v)) && values.includes('srcaddr')) {
        fields = values;
        continue;
      }
    }
    if (!fields || values.length !== fields.length) {
      yield message(line);
      continue;
    }
    const record: Raw = {};
    for (let i = 0; i < fields.length; i++) record[fields[i]!] = values[i];
    yield record;
  }
}

/** NDJSON: each line an object; a line that is not one is kept as text. */
async function* ndjsonEvents(source: AsyncIterable<string>): AsyncGenerator<Raw> {
  for await (const line of source) if (line.trim()) yield parseObject(line) ?? message(line);
}

async function* textEvents(stream: Readable): AsyncGenerator<Raw> {
  for await (const line of lines(stream)) if (line.trim()) yield message(line);
}

/** A generic object: NDJSON when its first line is a JSON object, a JSON document when it opens with { or [, else text. */
async function* genericEvents(stream: Readable, what: string): AsyncGenerator<Raw> {
  const it = lines(stream)[Symbol.asyncIterator]();
  let head = await it.next();
  while (!head.done && !head.value.trim()) head = await it.next();
  if (head.done) return;
  const firstLine = head.value;
  const rest = async function* () {
    yield firstLine;
    for (let n = await it.next(); !n.done; n = await it.next()) yield n.value;
  };
  if (parseObject(firstLine)) {
    yield* ndjsonEvents(rest());
  } else if (/^\s*[[{]/.test(firstLine)) {
    const parts: string[] = [];
    let size = 0;
    for await (const line of rest()) {
      size += line.length + 1;
      if (size > MAX_DOCUMENT_BYTES)
        throw new VendorError('invalid_response', `${what}: larger than ${MAX_DOCUMENT_BYTES} bytes read whole`);
      parts.push(line);
    }
    yield* documentEvents(parts.join('\n'));
  } else {
    for await (const line of rest()) if (line.trim()) yield message(line);
  }
}

// hyparquet decodes Snappy itself; GZIP and Brotli pages come from node:zlib. ZSTD (Security
// Lake's default since 2024 for some sources) needs a decoder Weir does not ship yet: such a
// file fails with hyparquet's "unsupported compression codec" in the stream's last_error.
const COMPRESSORS: Compressors = {
  GZIP: (input) => new Uint8Array(gunzipSync(input)),
  BROTLI: (input) => new Uint8Array(brotliDecompressSync(input)),
};

function jsonSafe(value: unknown): unknown {
  if (typeof value === 'bigint')
    return value <= BigInt(Number.MAX_SAFE_INTEGER) && value >= BigInt(Number.MIN_SAFE_INTEGER)
      ? Number(value)
      : value.toString();
  if (value instanceof Date) return value.toISOString();
  if (value instanceof Uint8Array) return Buffer.from(value).toString('base64');
  if (Array.isArray(value)) return value.map(jsonSafe);
  if (value && typeof value === 'object') {
    const out: Raw = {};
    for (const [k, v] of Object.entries(value)) if (v !== null && v !== undefined) out[k] = jsonSafe(v);
    return out;
  }
  return value;
}

/** Parquet rows (Security Lake's OCSF records) as objects, a row group at a time; nulls left out. */
async function* parquetEvents(stream: Readable, what: string): AsyncGenerator<Raw> {
  const buf = await whole(stream, what);
  const file = buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength) as ArrayBuffer;
  let metadata;
  try {
    metadata = parquetMetadata(file);
  } catch (err) {
    throw new VendorError('invalid_response', `${what}: not a Parquet file (${(err as Error).message})`);
  }
  let rowStart = 0;
  for (const group of metadata.row_groups) {
    const rowEnd = rowStart + Number(group.num_rows);
    const rows = await parquetReadObjects({ file, metadata, rowStart, rowEnd, compressors: COMPRESSORS });
    for (const row of rows) yield jsonSafe(row) as Raw;
    rowStart = rowEnd;
  }
}

/** The events of one object, in order, read as the layout says. */
export async function* objectEvents(body: Readable, layout: Layout | 'generic', what: string): AsyncGenerator<Raw> {
  const stream = await decoded(body);
  switch (layout) {
    case 'cloudtrail':
    case 'json':
      yield* documentEvents((await whole(stream, what)).toString('utf8'));
      return;
    case 'vpc_flow':
      yield* flowEvents(stream);
      return;
    case 'security_lake':
      yield* parquetEvents(stream, what);
      return;
    case 'ndjson':
      yield* ndjsonEvents(lines(stream));
      return;
    case 'text':
      yield* textEvents(stream);
      return;
    default:
      yield* genericEvents(stream, what);
  }
}
