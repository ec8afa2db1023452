// Large job payloads (ingest batches: ~1 MB of JSON) travel compressed in the database
// queue. PGlite converts a 1 MB jsonb parameter in about 80 ms and a 1 MB text in about
// 30 ms, but the same batch gzipped (level 1, ~6 ms on the thread pool) and sent as
// base64 text in about 4 ms (bench/README.md, ingest). Small payloads stay readable jsonb.
// Embedded, the compressed bytes go to the body log (platform/bodylog) and the row keeps
// only their reference.
import { promisify } from 'node:util';
import { gunzip, gzip } from 'node:zlib';
import { bufferLines, ndjsonBytes } from '../../core/lines.js';

const gzipAsync = promisify(gzip);
const gunzipAsync = promisify(gunzip);
/** Large output chunks: one main-thread callback per chunk (see pipeline/batch-codec.ts). */
const ZLIB_CHUNK = 1 << 20;

/** Payloads whose JSON is at least this long are stored compressed. */
export const COMPRESS_FROM_BYTES = 16 * 1024;

export interface EncodedPayload {
  /** The JSON text for the jsonb column ('null' when compressed). */
  json: string;
  /** gzip(JSON), or null. */
  gz: Buffer | null;
}

/** The header line of a lines payload names how many lines follow under this key. */
const LINES_MARK = '__weir_lines';

/**
 * An object whose `events` is a large array of one-line strings (ingest batches: the texts
 * of the accepted events) travels as lines: a JSON header without them, then each string
 * as it is on its own line. No escaping on the way in, and each line decoded on its own on
 * the way out: JSON.stringify and JSON.parse of such a payload, and decoding it as one
 * 2 MB string, cost ~30 ms for 1,000 Okta events; this ~4 ms (bench/README.md, one pass).
 */
function linesOf(value: unknown): { meta: Record<string, unknown>; lines: string[] } | undefined {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const { events, ...meta } = value as Record<string, unknown>;
  if (!Array.isArray(events) || events.length === 0) return undefined;
  let length = 0;
  for (const e of events) {
    if (typeof e !== 'string' || e.includes('\n')) return undefined;
    length += e.length;
  }
  return length >= COMPRESS_FROM_BYTES ? { meta, lines: events as string[] } : undefined;
}

export async function encodePayload(value: unknown): Promise<EncodedPayload> {
  const lines = linesOf(value);
  if (lines) {
    const header = JSON.stringify({ ...lines.meta, [LINES_MARK]: lines.lines.length });
    return {
      json: 'null',
      gz: await gzipAsync(ndjsonBytes([header, ...lines.lines]), { level: 1, chunkSize: ZLIB_CHUNK }),
    };
  }
  const json = JSON.stringify(value === undefined ? null : value);
  if (json.length < COMPRESS_FROM_BYTES) return { json, gz: null };
  return { json: 'null', gz: await gzipAsync(json, { level: 1, chunkSize: ZLIB_CHUNK }) };
}

/** A payload from its columns: the jsonb, or gzip(JSON) as base64 text or as the bytes a body-log reference names. */
export async function decodePayload(payload: unknown, gz: string | Buffer | null): Promise<unknown> {
  if (gz === null) return payload;
  const buf = await gunzipAsync(typeof gz === 'string' ? Buffer.from(gz, 'base64') : gz, { chunkSize: ZLIB_CHUNK });
  // JSON.stringify never writes a line break: a payload with one is in the lines form.
  const lf = buf.indexOf(0x0a);
  if (lf < 0) return JSON.parse(buf.toString('utf8')) as unknown;
  const header = JSON.parse(buf.toString('utf8', 0, lf)) as Record<string, unknown>;
  const count = header[LINES_MARK];
  delete header[LINES_MARK];
  const lines = bufferLines(buf, lf + 1);
  if (lines.length !== count)
    throw new Error(`queue payload: ${lines.length} lines where its header says ${String(count)}`);
  header.events = lines;
  return header;
}
