// A MaxMind DB uploaded by a user (GeoLite2/GeoIP2 City, Country or ASN, DB-IP lite, or an
// ip-location-db style file with flat fields), answering with the GEO columns. The file is
// checked once, at upload, so that a bad one is refused with a message (MmdbError → 422)
// rather than failing event after event on a worker.
import { Reader, type Response } from 'mmdb-lib';
import ipaddr from 'ipaddr.js';
import { ipv4Text, parseAddress } from './ip.js';
import type { Cell, Lookup, Row } from './types.js';

export class MmdbError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MmdbError';
  }
}

export interface MmdbInfo {
  database_type: string;
  build_epoch: string; // ISO 8601
  ip_version: 4 | 6;
  node_count: number;
}

// The metadata section starts after this marker, within the last 128 KiB (MaxMind DB spec 2.0).
const METADATA_MARKER = Buffer.from([0xab, 0xcd, 0xef, ...Buffer.from('MaxMind.com')]);
const METADATA_MAX = 128 * 1024;
/** Decoded records kept per reader (by data offset); cleared when full, as a City DB holds millions. */
const RECORD_CACHE_SIZE = 10_000;

function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** The mmdb-lib reader of checked bytes (MmdbError otherwise), with a bounded record cache. */
export function openMmdbReader(bytes: Uint8Array): Reader<Response> {
  const db = asBuffer(bytes);
  const tail = Math.max(0, db.length - METADATA_MAX);
  if (db.length < METADATA_MARKER.length || db.lastIndexOf(METADATA_MARKER) < tail) {
    throw new MmdbError('not a MaxMind DB (.mmdb) file: its metadata marker is missing');
  }
  const cache = new Map<string | number, unknown>();
  let reader: Reader<Response>;
  try {
    reader = new Reader<Response>(db, {
      cache: {
        get: (k) => cache.get(k),
        set: (k, v) => {
          if (cache.size >= RECORD_CACHE_SIZE) cache.clear();
          cache.set(k, v);
        },
      },
    });
  } catch (e) {
    throw new MmdbError(`the MaxMind DB metadata cannot be read: ${(e as Error).message}`);
  }
  const m = reader.metadata;
  if (m.binaryFormatMajorVersion !== 2)
    throw new MmdbError(`MaxMind DB format ${m.binaryFormatMajorVersion} is not supported (2 is)`);
  if (m.ipVersion !== 4 && m.ipVersion !== 6) throw new MmdbError(`the database declares IP version ${m.ipVersion}`);
  if (![24, 28, 32].includes(m.recordSize))
    throw new MmdbError(`the database declares a record size of ${m.recordSize} bits`);
  if (m.searchTreeSize + 16 > db.length)
    throw new MmdbError('the file is truncated: its search tree is larger than the file');
  try {
    // A walk of the tree and a decode: a corrupt tree or data section fails here, not per event.
    reader.get('1.1.1.1');
    reader.get('8.8.8.8');
    if (m.ipVersion === 6) reader.get('2001:4860:4860::8888');
  } catch (e) {
    throw new MmdbError(`the MaxMind DB is corrupt: ${(e as Error).message}`);
  }
  return reader;
}

export function mmdbInfo(bytes: Uint8Array): MmdbInfo {
  const m = openMmdbReader(bytes).metadata;
  return {
    database_type: m.databaseType,
    build_epoch: m.buildEpoch.toISOString(),
    ip_version: m.ipVersion as 4 | 6,
    node_count: m.nodeCount,
  };
}

type Rec = Record<string, unknown>;
const obj = (v: unknown): Rec | undefined =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Rec) : undefined;
const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
const en = (v: unknown): string | undefined => str(obj(obj(v)?.names)?.en);

/** "AS15169", "15169" or 15169 → 15169 (ipinfo-style files write the AS as text). */
function asNumber(v: unknown): number | undefined {
  if (typeof v === 'number') return Number.isInteger(v) && v >= 0 ? v : undefined;
  const m = typeof v === 'string' ? /^(?:AS)?(\d{1,10})$/i.exec(v) : null;
  return m ? Number(m[1]) : undefined;
}

/**
 * Any record to the GEO columns it has (geoip.ts GEO_COLUMNS): MaxMind's nested fields first,
 * then the flat ones of ip-location-db, DB-IP and ipinfo files. Columns without a value are
 * left out rather than null, so a Country DB adds no empty city.
 */
export function flattenRecord(rec: unknown): Row | undefined {
  const r = obj(rec);
  if (!r) return undefined;
  const traits = obj(r.traits);
  const loc = obj(r.location);
  const subdivisions = Array.isArray(r.subdivisions) ? r.subdivisions : [];
  const out: Record<string, Cell | undefined> = {
    country_code: str(obj(r.country)?.iso_code) ?? str(obj(r.registered_country)?.iso_code) ?? str(r.country_code),
    country:
      en(r.country) ??
      en(r.registered_country) ??
      str(r.country_name) ??
      (typeof r.country === 'string' ? str(r.country) : undefined),
    continent_code:
      str(obj(r.continent)?.code) ??
      str(r.continent_code) ??
      (typeof r.continent === 'string' ? str(r.continent) : undefined),
    region: en(subdivisions[0]) ?? str(r.state1) ?? str(r.region) ?? str(r.subdivision),
    city: en(r.city) ?? str(r.city),
    postal_code: str(obj(r.postal)?.code) ?? str(r.postcode) ?? str(r.postal_code),
    lat: num(loc?.latitude) ?? num(r.latitude),
    long: num(loc?.longitude) ?? num(r.longitude),
    asn: asNumber(r.autonomous_system_number) ?? asNumber(traits?.autonomous_system_number) ?? asNumber(r.asn),
    as_org:
      str(r.autonomous_system_organization) ??
      str(traits?.autonomous_system_organization) ??
      str(r.as_name) ??
      str(r.as_org),
    isp: str(r.isp) ?? str(traits?.isp),
  };
  const row: Row = {};
  let any = false;
  for (const k in out) {
    const v = out[k];
    if (v !== undefined) {
      row[k] = v;
      any = true;
    }
  }
  return any ? row : undefined;
}

/** The address text the reader is given: IPv4-mapped IPv6 as IPv4, IPv6 normalized. */
function readerAddress(s: string, ipVersion: number): string | undefined {
  const a = parseAddress(s);
  if (!a) return undefined;
  if (a.v === 4) return ipv4Text(a.n);
  // mmdb-lib answers an IPv6 address from an IPv4-only tree with the record of unrelated bits.
  return ipVersion === 6 ? new ipaddr.IPv6(a.parts).toString() : undefined;
}

class MmdbLookup implements Lookup {
  // Decoded records are shared through the reader's cache, so the flat row is remembered per record.
  private readonly flat = new WeakMap<object, Row | null>();
  constructor(
    private readonly reader: Reader<Response>,
    readonly size: number,
  ) {}

  get(key: string): Row | undefined {
    const ip = readerAddress(key, this.reader.metadata.ipVersion);
    if (ip === undefined) return undefined;
    let rec: unknown;
    try {
      rec = this.reader.get(ip); // a corrupt data section throws; that address is then a miss
    } catch {
      return undefined;
    }
    if (rec === null || typeof rec !== 'object') return undefined;
    let row = this.flat.get(rec);
    if (row === undefined) {
      row = flattenRecord(rec) ?? null;
      this.flat.set(rec, row);
    }
    return row ?? undefined;
  }
}

/**
 * An uploaded MaxMind DB as a lookup; MmdbError when the bytes are not a usable one. Every
 * address is answered as the file says, private ones included (a company's own mmdb may map
 * its internal networks). Rows are shared: callers do not modify them. Size is the node count.
 */
export function openMmdb(bytes: Uint8Array): Lookup {
  const reader = openMmdbReader(bytes);
  return new MmdbLookup(reader, reader.metadata.nodeCount);
}
