// How a normalized batch is stored (normalized_batches.events): the NDJSON of its records,
// gzipped (level 1, on the thread pool) and base64-encoded. A batch of 500 events is 1-2 MB
// of NDJSON; compressed it is about 15 times smaller, which the embedded database writes
// several times faster and PostgreSQL logs and ships with less I/O (bench/README.md).
import { promisify } from 'node:util';
import { gunzip, gzip } from 'node:zlib';
import type { NormalizedRecord } from './envelope.js';

const gzipAsync = promisify(gzip);
const gunzipAsync = promisify(gunzip);

export async function encodeRecords(ndjson: string): Promise<string> {
  if (ndjson === '') return '';
  return (await gzipAsync(ndjson, { level: 1 })).toString('base64');
}

export async function decodeRecords(stored: string): Promise<string> {
  if (stored === '') return '';
  return (await gunzipAsync(Buffer.from(stored, 'base64'))).toString('utf8');
}

/** The records of a stored batch. */
export async function readRecords(stored: string): Promise<NormalizedRecord[]> {
  const ndjson = await decodeRecords(stored);
  return ndjson === '' ? [] : ndjson.split('\n').map((line) => JSON.parse(line) as NormalizedRecord);
}
