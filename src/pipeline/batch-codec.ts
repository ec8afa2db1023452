// How a normalized batch is stored (normalized_batches.events): the NDJSON of its records,
// gzipped (level 1, on the thread pool) and base64-encoded. A batch of 500 events is 1-2 MB
// of NDJSON; compressed it is about 15 times smaller, which the embedded database writes
// several times faster and PostgreSQL logs and ships with less I/O (bench/README.md).
import { promisify } from 'node:util';
import { gunzip, gzip, gzipSync } from 'node:zlib';
import { bufferLines, ndjsonBytes } from '../core/lines.js';
import type { NormalizedRecord } from './envelope.js';

const gzipAsync = promisify(gzip);
const gunzipAsync = promisify(gunzip);
/** 1 MiB output chunks: zlib's default 16 KiB makes one main-thread callback per chunk, which doubled the CPU per event (bench/README.md, delivery). */
export const ZLIB_CHUNK = 1 << 20;

export async function encodeRecords(ndjson: string): Promise<string> {
  if (ndjson === '') return '';
  return (await gzipAsync(ndjson, { level: 1, chunkSize: ZLIB_CHUNK })).toString('base64');
}

/** encodeRecords of the lines' NDJSON. */
export async function encodeLines(lines: readonly string[]): Promise<string> {
  if (lines.length === 0) return '';
  return (await gzipAsync(ndjsonBytes(lines), { level: 1, chunkSize: ZLIB_CHUNK })).toString('base64');
}

/** encodeLines on the calling thread (a pass thread: its own core). */
export function encodeLinesSync(lines: readonly string[]): string {
  if (lines.length === 0) return '';
  return gzipSync(ndjsonBytes(lines), { level: 1, chunkSize: ZLIB_CHUNK }).toString('base64');
}

/** The gzip bytes of a stored body: base64 text, or the bytes themselves (read from the body log). */
const gzipped = (stored: string | Buffer) => (typeof stored === 'string' ? Buffer.from(stored, 'base64') : stored);

export async function decodeRecords(stored: string | Buffer): Promise<string> {
  if (stored.length === 0) return '';
  return (await gunzipAsync(gzipped(stored), { chunkSize: ZLIB_CHUNK })).toString('utf8');
}

/** The lines of a stored body (encodeLines / encodeRecords). */
export async function decodeLines(stored: string | Buffer): Promise<string[]> {
  if (stored.length === 0) return [];
  return bufferLines(await gunzipAsync(gzipped(stored), { chunkSize: ZLIB_CHUNK }));
}

/** The records of a stored batch. */
export async function readRecords(stored: string): Promise<NormalizedRecord[]> {
  const ndjson = await decodeRecords(stored);
  return ndjson === '' ? [] : ndjson.split('\n').map((line) => JSON.parse(line) as NormalizedRecord);
}
