// Object keys. Every key is a function of the batch's envelope ids, never of the clock at
// send time: a batch sent again after a lost answer or a killed dispatcher overwrites the
// same objects instead of adding duplicates (the engine delivers at least once).
import { createHash } from 'node:crypto';
import type { SinkBatch } from '../types.js';

/**
 * The batch's time: the earliest creation time carried by its envelope ids (UUIDv7, so
 * when Weir accepted the event). Ids of another version (tests, imports) fall back to the
 * earliest OCSF `time` of the events, then to `fallback`.
 */
export function batchTime(batch: SinkBatch, fallback: () => number = Date.now): number {
  let min = Infinity;
  for (const id of batch.ids) {
    if (id.length === 36 && id[14] === '7') {
      const ms = parseInt(id.slice(0, 8) + id.slice(9, 13), 16);
      if (ms < min) min = ms;
    }
  }
  if (min !== Infinity) return min;
  for (const e of batch.events()) {
    const t = e.time;
    if (typeof t === 'number' && Number.isFinite(t) && t < min) min = t;
  }
  return min !== Infinity ? min : fallback();
}

/** First 16 hex digits of sha256 over the ids, in order. */
export function idsDigest(ids: readonly string[]): string {
  const h = createHash('sha256');
  for (let i = 0; i < ids.length; i++) h.update(i === 0 ? ids[i]! : `\n${ids[i]}`);
  return h.digest('hex').slice(0, 16);
}

const pad = (n: number, w = 2) => String(n).padStart(w, '0');

/** 20240115T120000Z */
export function compactUtc(ms: number): string {
  const d = new Date(ms);
  return `${d.getUTCFullYear()}${pad(d.getUTCMonth() + 1)}${pad(d.getUTCDate())}T${pad(d.getUTCHours())}${pad(d.getUTCMinutes())}${pad(d.getUTCSeconds())}Z`;
}

/** 20240115: Security Lake's eventDay partition value. */
export function eventDay(ms: number): string {
  const d = new Date(ms);
  return `${d.getUTCFullYear()}${pad(d.getUTCMonth() + 1)}${pad(d.getUTCDate())}`;
}

/** "weir" -> "weir/", "/a/b/" -> "a/b/", "" -> "": the prefix is a folder. */
export function normalizePrefix(prefix: string): string {
  const p = prefix.replace(/^\/+/, '');
  return p === '' || p.endsWith('/') ? p : `${p}/`;
}

/** `<prefix>year=YYYY/month=MM/day=DD/hour=HH/<UTC ts>-<digest>.ndjson.gz` (hive-style partitions). */
export function ndjsonKey(prefix: string, timeMs: number, digest: string): string {
  const d = new Date(timeMs);
  return `${normalizePrefix(prefix)}year=${d.getUTCFullYear()}/month=${pad(d.getUTCMonth() + 1)}/day=${pad(d.getUTCDate())}/hour=${pad(d.getUTCHours())}/${compactUtc(timeMs)}-${digest}.ndjson.gz`;
}

export interface SecurityLakeTarget {
  source_name: string;
  source_version?: string;
  account_id: string;
}

/** Characters Security Lake accepts in a custom source name (and what stays safe in a key). */
const SOURCE_CHARS = /[^\w\-.:]/g;

/**
 * The custom source name for one OCSF class: `{class_uid}` and `{class_name}` are replaced,
 * so one destination can feed one custom source per class (Security Lake wants one class
 * per source).
 */
export function sourceName(template: string, classUid: number, className: string): string {
  return template
    .replaceAll('{class_uid}', String(classUid))
    .replaceAll('{class_name}', className)
    .replace(SOURCE_CHARS, '_');
}

/** `ext/<source>/[<version>/]region=<r>/accountId=<a>/eventDay=<YYYYMMDD>/<UTC ts>-<digest>.gz.parquet` */
export function securityLakeKey(
  target: SecurityLakeTarget,
  source: string,
  region: string,
  day: string,
  timeMs: number,
  digest: string,
): string {
  const version = target.source_version ? `${target.source_version.replace(SOURCE_CHARS, '_')}/` : '';
  return `ext/${source}/${version}region=${region}/accountId=${target.account_id.replace(/[^\w+=,.@:-]/g, '_')}/eventDay=${day}/${compactUtc(timeMs)}-${digest}.gz.parquet`;
}
