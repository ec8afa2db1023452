// Large job payloads (ingest batches: ~1 MB of JSON) travel compressed in the database
// queue. PGlite converts a 1 MB jsonb parameter in about 80 ms and a 1 MB text in about
// 30 ms, but the same batch gzipped (level 1, ~6 ms on the thread pool) and sent as
// base64 text in about 4 ms (bench/README.md, ingest). Small payloads stay readable jsonb.
import { promisify } from 'node:util';
import { gunzip, gzip } from 'node:zlib';

const gzipAsync = promisify(gzip);
const gunzipAsync = promisify(gunzip);
/** Large output chunks: one main-thread callback per chunk (see pipeline/batch-codec.ts). */
const ZLIB_CHUNK = 1 << 20;

/** Payloads whose JSON is at least this long are stored compressed. */
export const COMPRESS_FROM_BYTES = 16 * 1024;

export interface EncodedPayload {
  /** The JSON text for the jsonb column ('null' when compressed). */
  json: string;
  /** base64(gzip(JSON)) or null. */
  gz: string | null;
}

export async function encodePayload(value: unknown): Promise<EncodedPayload> {
  const json = JSON.stringify(value === undefined ? null : value);
  if (json.length < COMPRESS_FROM_BYTES) return { json, gz: null };
  const gz = (await gzipAsync(json, { level: 1, chunkSize: ZLIB_CHUNK })).toString('base64');
  return { json: 'null', gz };
}

export async function decodePayload(payload: unknown, gz: string | null): Promise<unknown> {
  if (gz === null) return payload;
  return JSON.parse((await gunzipAsync(Buffer.from(gz, 'base64'), { chunkSize: ZLIB_CHUNK })).toString('utf8')) as unknown;
}
