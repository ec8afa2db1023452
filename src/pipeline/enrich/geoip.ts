// The GeoIP database Weir ships, so that GeoIP enrichment works on a fresh install with no
// account and no download: country from ip-location-db's geo-whois-asn-country mmdb, AS number
// and organization from ip-location-db's asn CSV files. Both are npm packages pinned in
// package.json (their data is refreshed by upgrading them). Loaded once per thread, on first use.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { Reader, Response } from 'mmdb-lib';
import { isReserved, parseAddress, parseIPv4 } from './ip.js';
import { openMmdbReader } from './mmdb.js';
import type { Lookup, Row } from './types.js';

/** Every column a GeoIP or uploaded mmdb source can produce; each row holds those it found. */
export const GEO_COLUMNS = [
  'country_code', // ISO 3166-1 alpha-2
  'country',
  'continent_code',
  'region',
  'city',
  'postal_code',
  'lat',
  'long',
  'asn',
  'as_org',
  'isp',
] as const;
export type GeoColumn = (typeof GEO_COLUMNS)[number];

/** What the licences of the shipped data ask to be shown where GeoIP results are (CC BY 4.0). */
export const GEOIP_ATTRIBUTION =
  'Country data: ip-location-db geo-whois-asn-country (CC0 1.0), from statistics data by the Number Resource ' +
  'Organization (NRO, nro.net), licensed CC BY 4.0. AS data: ip-location-db asn, created from the RouteViews ' +
  'database (routeviews.org), NRO statistics data (nro.net) and the DB-IP IP to ASN Lite database ' +
  '(IP Geolocation by DB-IP, https://db-ip.com), each licensed CC BY 4.0, with modifications.';

const COUNTRY_PKG = '@ip-location-db/geo-whois-asn-country-mmdb';
const ASN_PKG = '@ip-location-db/asn';
const require = createRequire(import.meta.url);
const pkgDir = (pkg: string) => dirname(require.resolve(`${pkg}/package.json`));

export function geoipVersion(): {
  country: { package: string; version: string };
  asn: { package: string; version: string };
} {
  const version = (pkg: string) =>
    (JSON.parse(readFileSync(join(pkgDir(pkg), 'package.json'), 'utf8')) as { version: string }).version;
  return {
    country: { package: COUNTRY_PKG, version: version(COUNTRY_PKG) },
    asn: { package: ASN_PKG, version: version(ASN_PKG) },
  };
}

/** Sorted, non-overlapping AS ranges in typed arrays; org names deduplicated (~80k of ~500k ranges). */
export interface AsnRanges {
  v4Start: Uint32Array;
  v4End: Uint32Array;
  v4Asn: Uint32Array;
  v4Org: Uint32Array;
  v6Start: BigUint64Array; // hi, lo pairs
  v6End: BigUint64Array;
  v6Asn: Uint32Array;
  v6Org: Uint32Array;
  orgs: string[];
}

// ip-location-db CSV lines: start,end,asn,org, the org RFC 4180-quoted when it holds a comma or
// a quote. Scanned as bytes: decoding 30 MB of UTF-8 to one string and splitting it took longer
// than everything else together. Field offsets go into `f` (start/end pairs), reused per line.
function eachLine(buf: Buffer, each: (f: Int32Array) => void): void {
  const f = new Int32Array(8);
  const n = buf.length;
  let i = 0;
  while (i < n) {
    let field = 0;
    f[0] = i;
    while (i < n && field < 3) {
      if (buf[i] === 44) {
        f[field * 2 + 1] = i;
        field++;
        f[field * 2] = i + 1;
      }
      i++;
    }
    let eol = buf.indexOf(10, i);
    if (eol < 0) eol = n;
    f[7] = eol > i && buf[eol - 1] === 13 ? eol - 1 : eol;
    if (field === 3) each(f);
    i = eol + 1;
  }
}

function digits(buf: Buffer, s: number, e: number): number {
  let v = 0;
  for (let i = s; i < e; i++) v = v * 10 + (buf[i]! - 48);
  return v;
}

/** Dedupes org names by their raw bytes (as latin1 text, a cheap exact key), decoding each once. */
function orgTable() {
  const orgs: string[] = [];
  const index = new Map<string, number>();
  return {
    orgs,
    of(b: Buffer, s: number, e: number): number {
      const raw = b.toString('latin1', s, e);
      let k = index.get(raw);
      if (k === undefined) {
        let text = b.toString('utf8', s, e);
        if (text.startsWith('"')) text = text.slice(1, -1).replaceAll('""', '"');
        k = orgs.push(text) - 1;
        index.set(raw, k);
      }
      return k;
    },
  };
}

function lineCount(buf: Buffer): number {
  let n = 0;
  for (let i = buf.indexOf(10); i >= 0; i = buf.indexOf(10, i + 1)) n++;
  return buf.length > 0 && buf[buf.length - 1] !== 10 ? n + 1 : n;
}

export function loadAsnRanges(dir = pkgDir(ASN_PKG)): AsnRanges {
  const org = orgTable();
  let current = readFileSync(join(dir, 'asn-ipv4-num.csv'));
  const n4 = lineCount(current);
  const v4Start = new Uint32Array(n4);
  const v4End = new Uint32Array(n4);
  const v4Asn = new Uint32Array(n4);
  const v4Org = new Uint32Array(n4);
  let k = 0;
  eachLine(current, (f) => {
    v4Start[k] = digits(current, f[0]!, f[1]!);
    v4End[k] = digits(current, f[2]!, f[3]!);
    v4Asn[k] = digits(current, f[4]!, f[5]!);
    v4Org[k++] = org.of(current, f[6]!, f[7]!);
  });
  // The -num file has 128-bit integers in decimal; BigInt reads them faster than IPv6 text parses.
  current = readFileSync(join(dir, 'asn-ipv6-num.csv'));
  const n6 = lineCount(current);
  const v6Start = new BigUint64Array(n6 * 2);
  const v6End = new BigUint64Array(n6 * 2);
  const v6Asn = new Uint32Array(n6);
  const v6Org = new Uint32Array(n6);
  const LO = (1n << 64n) - 1n;
  let j = 0;
  eachLine(current, (f) => {
    const bs = BigInt(current.toString('latin1', f[0]!, f[1]!));
    const be = BigInt(current.toString('latin1', f[2]!, f[3]!));
    v6Start[j * 2] = bs >> 64n;
    v6Start[j * 2 + 1] = bs & LO;
    v6End[j * 2] = be >> 64n;
    v6End[j * 2 + 1] = be & LO;
    v6Asn[j] = digits(current, f[4]!, f[5]!);
    v6Org[j++] = org.of(current, f[6]!, f[7]!);
  });
  const trim = <T extends Uint32Array | BigUint64Array>(a: T, len: number) => a.subarray(0, len) as T;
  return {
    v4Start: trim(v4Start, k),
    v4End: trim(v4End, k),
    v4Asn: trim(v4Asn, k),
    v4Org: trim(v4Org, k),
    v6Start: trim(v6Start, j * 2),
    v6End: trim(v6End, j * 2),
    v6Asn: trim(v6Asn, j),
    v6Org: trim(v6Org, j),
    orgs: org.orgs,
  };
}

/** Index of the range holding n, or -1: the last start <= n, if its end >= n. */
export function findV4(r: AsnRanges, n: number): number {
  let lo = 0;
  let hi = r.v4Start.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    if (r.v4Start[mid]! <= n) lo = mid + 1;
    else hi = mid - 1;
  }
  return hi >= 0 && r.v4End[hi]! >= n ? hi : -1;
}

export function findV6(r: AsnRanges, high: bigint, low: bigint): number {
  const s = r.v6Start;
  let lo = 0;
  let hi = r.v6Asn.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const sh = s[mid * 2]!;
    if (sh < high || (sh === high && s[mid * 2 + 1]! <= low)) lo = mid + 1;
    else hi = mid - 1;
  }
  if (hi < 0) return -1;
  const eh = r.v6End[hi * 2]!;
  return eh > high || (eh === high && r.v6End[hi * 2 + 1]! >= low) ? hi : -1;
}

const MEMO_SIZE = 4096;

class DefaultGeoip implements Lookup {
  private memo = new Map<string, Row | null>();
  constructor(
    private readonly country: Reader<Response>,
    private readonly asn: AsnRanges,
  ) {}

  get size(): number {
    return this.asn.v4Asn.length + this.asn.v6Asn.length;
  }

  get(key: string): Row | undefined {
    let hit = this.memo.get(key);
    if (hit === undefined) {
      if (key.length > 64) return undefined; // no address is that long
      if (this.memo.size >= MEMO_SIZE) this.memo.clear();
      hit = this.find(key) ?? null;
      this.memo.set(key, hit);
    }
    return hit ?? undefined;
  }

  private find(key: string): Row | undefined {
    const a = parseAddress(key);
    if (!a || isReserved(a)) return undefined;
    let i: number;
    let text: string;
    let asn: Uint32Array;
    let orgOf: Uint32Array;
    if (a.v === 4) {
      i = findV4(this.asn, a.n);
      text = parseIPv4(key) >= 0 ? key : `${a.n >>> 24}.${(a.n >>> 16) & 255}.${(a.n >>> 8) & 255}.${a.n & 255}`;
      asn = this.asn.v4Asn;
      orgOf = this.asn.v4Org;
    } else {
      const p = a.parts;
      const high = (BigInt(p[0]! * 65536 + p[1]!) << 32n) | BigInt(p[2]! * 65536 + p[3]!);
      const low = (BigInt(p[4]! * 65536 + p[5]!) << 32n) | BigInt(p[6]! * 65536 + p[7]!);
      i = findV6(this.asn, high, low);
      text = key;
      asn = this.asn.v6Asn;
      orgOf = this.asn.v6Org;
    }
    const row: Row = {};
    let cc: unknown;
    try {
      cc = (this.country.get(text) as { country_code?: unknown } | null)?.country_code;
    } catch {
      cc = undefined;
    }
    if (typeof cc === 'string' && cc !== '') row.country_code = cc;
    if (i >= 0) {
      row.asn = asn[i]!;
      row.as_org = this.asn.orgs[orgOf[i]!]!;
    }
    return row.country_code === undefined && i < 0 ? undefined : row;
  }
}

let instance: DefaultGeoip | undefined;

/**
 * The shipped GeoIP database of this thread, loaded on the first call (about a second, and
 * some 35 MB of heap: bench/README.md).
 * get(ip) answers country_code, asn and as_org (those found); undefined for text that is not
 * an address and for private, loopback, documentation and other reserved addresses. Rows are
 * shared (answers are remembered): callers do not modify them.
 */
export function defaultGeoip(): Lookup {
  if (!instance) {
    const country = openMmdbReader(readFileSync(join(pkgDir(COUNTRY_PKG), 'geo-whois-asn-country.mmdb')));
    instance = new DefaultGeoip(country, loadAsnRanges());
  }
  return instance;
}
