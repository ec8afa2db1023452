// Cost of the enrichment lookups the one pass makes per event (pipeline/enrich): building an
// exact and a CIDR table of 1k, 100k and 1M rows, a wildcard table of 1,000 patterns, and the
// shipped GeoIP; heap the index adds (the rows themselves exist before); median ns per lookup
// over --lookups lookups of 200,000 distinct keys (half made to hit), which do not all stay in
// the CPU caches, and of 1,000 of them repeating, which do.
//   node --expose-gc --import tsx bench/enrich-lookup.ts [--lookups 1000000] [--runs 5]
import { defaultGeoip } from '../src/pipeline/enrich/geoip.js';
import { buildTable, decodeTable, encodeTable } from '../src/pipeline/enrich/table.js';
import type { Lookup, MatchKind, Row, TableData } from '../src/pipeline/enrich/types.js';

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}

const LOOKUPS = arg('lookups', 1_000_000);
const RUNS = arg('runs', 5);
const DISTINCT = 200_000;

const gc = (globalThis as { gc?: () => void }).gc ?? (() => undefined);
const heap = () => {
  gc();
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
};
const mb = (bytes: number) => `${(bytes / 1048576).toFixed(1)} MB`;
const ms = (t0: number) => `${(performance.now() - t0).toFixed(0)} ms`;

let seed = 1;
const rnd = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0);
const ip4 = (n: number) => `${n >>> 24}.${(n >>> 16) & 255}.${(n >>> 8) & 255}.${n & 255}`;

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

let sink = 0;
function nsPerLookup(lookup: Lookup, keys: string[], count = LOOKUPS): number {
  const n = keys.length;
  for (let i = 0; i < Math.min(n, 100_000); i++) if (lookup.get(keys[i]!) !== undefined) sink++;
  const runs: number[] = [];
  for (let r = 0; r < RUNS; r++) {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < count; i++) if (lookup.get(keys[i % n]!) !== undefined) sink++;
    runs.push(Number(process.hrtime.bigint() - t0) / count);
  }
  return median(runs);
}

function table(match: MatchKind, rows: Row[]): TableData {
  return { key_column: 'k', match, columns: ['k', 'owner', 'level'], rows };
}

/** Build cost and heap, then ns/lookup over 200k distinct keys and over 1,000 of them repeating. */
function report(label: string, data: TableData, keys: string[], count = LOOKUPS): void {
  const t0 = performance.now();
  buildTable(data);
  const build = ms(t0);
  // Heap from a second build: the first flattens the rows' concatenated key strings, which
  // frees memory and made the index look smaller than it is.
  const before = heap();
  const lookup = buildTable(data);
  const added = heap() - before;
  const hits = keys.reduce((n, k) => n + (lookup.get(k) ? 1 : 0), 0);
  const ns = nsPerLookup(lookup, keys, count);
  const hot = nsPerLookup(lookup, keys.slice(0, 1000));
  console.log(
    `${label.padEnd(32)} build ${build.padStart(8)}  index +${mb(added).padStart(9)}  ${ns.toFixed(0).padStart(6)} ns (200k keys)  ${hot.toFixed(0).padStart(4)} ns (1k keys)  ${((100 * hits) / keys.length).toFixed(0)}% hits`,
  );
}

function exactCase(rows: number): void {
  const data = table(
    'exact',
    Array.from({ length: rows }, (_, i) => ({ k: `user${i}@corp.example`, owner: `team${i % 40}`, level: i % 5 })),
  );
  const keys = Array.from({ length: DISTINCT }, (_, i) =>
    i % 2 === 0 ? `user${rnd() % rows}@corp.example` : `nobody${i}@corp.example`,
  );
  report(`exact, ${rows.toLocaleString('en-US')} rows`, data, keys);
  if (rows === 1_000_000) {
    let t0 = performance.now();
    const bytes = encodeTable(data);
    const enc = ms(t0);
    t0 = performance.now();
    decodeTable(bytes);
    console.log(`  encodeTable ${enc}, decodeTable ${ms(t0)}, ${mb(bytes.byteLength)} encoded`);
  }
}

// Networks of mixed lengths (/16, /24, /28, /32 IPv4 and /48, /64 IPv6), as an asset or
// threat-intel table has; the lookup probes one map per distinct length present (6 here).
function cidrCase(rows: number): void {
  const nets: { n: number; len: number }[] = [];
  const data = table(
    'cidr',
    Array.from({ length: rows }, (_, i) => {
      const kind = i % 10;
      if (kind === 9) return { k: `2001:db8:${(i >>> 16) & 0xffff}:${i & 0xffff}::/64`, owner: 'v6', level: 6 };
      if (kind === 8) return { k: `2001:db8:${i & 0xffff}::/48`, owner: 'v6', level: 5 };
      const len = [16, 24, 24, 24, 28, 32, 32, 32][kind]!;
      const n = (rnd() & (len === 0 ? 0 : (0xffffffff << (32 - len)) >>> 0)) >>> 0;
      nets.push({ n, len });
      return { k: `${ip4(n)}/${len}`, owner: `site${i % 300}`, level: len };
    }),
  );
  const keys = Array.from({ length: DISTINCT }, (_, i) => {
    if (i % 2 === 1) return ip4(rnd()); // mostly misses in a sparse random table
    const net = nets[rnd() % nets.length]!;
    return ip4((net.n | (rnd() & ((1 << (32 - net.len)) - 1 || 0))) >>> 0);
  });
  report(`cidr, ${rows.toLocaleString('en-US')} rows`, data, keys);
}

function wildcardCase(): void {
  const rows: Row[] = [];
  for (let i = 0; i < 1000; i++) {
    const k = [`*.domain${i}.example`, `host-${i}-*.corp`, `srv??-${i}.corp`, `*-${i}.cdn.example`][i % 4]!;
    rows.push({ k, owner: `team${i % 40}`, level: i % 5 });
  }
  const data = table('wildcard', rows);
  const keys = Array.from({ length: DISTINCT }, (_, i) => {
    const j = rnd() % 1000;
    if (i % 2 === 1) return `www${i}.nomatch${j}.example`;
    return [
      `www${i}.domain${j}.example`,
      `host-${j}-${i}.corp`,
      `srv${(i % 90) + 10}-${j}.corp`,
      `edge${i}-${j}.cdn.example`,
    ][j % 4]!;
  });
  // 200k distinct values defeat the memo (4,096 answers): each lookup tries the patterns.
  report('wildcard, 1,000 patterns', data, keys, 100_000);
}

function geoipCase(): void {
  const before = heap();
  const t0 = performance.now();
  const geo = defaultGeoip();
  geo.get('8.8.8.8');
  const load = ms(t0);
  const added = heap() - before;
  console.log(`default GeoIP: load ${load}, heap +${mb(added)}, ${geo.size.toLocaleString('en-US')} AS ranges`);
  const v4 = Array.from({ length: DISTINCT }, () => ip4(rnd()));
  const v6 = Array.from(
    { length: DISTINCT },
    () => `2a0${rnd() % 10}:${(rnd() & 0xffff).toString(16)}:${(rnd() & 0xffff).toString(16)}::1`,
  );
  const hits = v4.reduce((n, k) => n + (geo.get(k) ? 1 : 0), 0);
  console.log(
    `  IPv4: ${nsPerLookup(geo, v4).toFixed(0)} ns (200k keys)  ${nsPerLookup(geo, v4.slice(0, 1000)).toFixed(0)} ns (1k keys)  ${((100 * hits) / v4.length).toFixed(0)}% hits`,
  );
  console.log(
    `  IPv6: ${nsPerLookup(geo, v6).toFixed(0)} ns (200k keys)  ${nsPerLookup(geo, v6.slice(0, 1000)).toFixed(0)} ns (1k keys)`,
  );
}

console.log(`Node ${process.version}, ${LOOKUPS.toLocaleString('en-US')} lookups x ${RUNS} runs, median`);
for (const rows of [1_000, 100_000, 1_000_000]) exactCase(rows);
for (const rows of [1_000, 100_000, 1_000_000]) cidrCase(rows);
wildcardCase();
geoipCase();
if (sink < 0) console.log(sink);
