// What enrichment costs the one pass, in process, on one core: the pass (parse, map,
// validate, enrich, plan one catch-all route, serialize; pipeline/pass/pass.ts runPass) over
// batches of the firewall events (bench/fixtures/firewall.ts), with three policies on and
// with none, alternating in the same run:
//   - GeoIP (the shipped database) on src_endpoint.ip → location.country, autonomous_system;
//   - a 100,000-row exact table on actor.user.name → enrichments[] (department, manager);
//   - a CIDR table (10,000 networks of /8 to /32) on dst_endpoint.ip → enrichments[].
// The tables cross to the pass as a worker thread gets them (encoded bytes in shared memory,
// built once); building is outside the timed runs and reported apart.
//
//   npx tsx bench/enrich-pass.ts [--events 100000] [--batch 1000] [--runs 7]
import { parseArgs } from 'node:util';
import { createValidator, ocsfCatalog } from '../src/ocsf/index.js';
import type { IngestBatch } from '../src/pipeline/envelope.js';
import { enrichHook, type EnrichmentJob } from '../src/pipeline/enrich/live.js';
import { defaultGeoip } from '../src/pipeline/enrich/geoip.js';
import { encodeTable } from '../src/pipeline/enrich/table.js';
import type { Row } from '../src/pipeline/enrich/types.js';
import { compileMapping } from '../src/pipeline/normalize/compile.js';
import { runPass, type PassContext } from '../src/pipeline/pass/pass.js';
import { compileRoutes } from '../src/pipeline/route/compile.js';
import { FIREWALL_MAPPING, firewallLines } from './fixtures/firewall.js';

const { values } = parseArgs({
  options: {
    events: { type: 'string', default: '100000' },
    batch: { type: 'string', default: '1000' },
    runs: { type: 'string', default: '7' },
  },
});
const total = Number(values.events);
const batchSize = Number(values.batch);
const runs = Number(values.runs);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

function shared(bytes: Uint8Array): Uint8Array {
  const view = new Uint8Array(new SharedArrayBuffer(bytes.length));
  view.set(bytes);
  return view;
}

const USERS = [
  'alice.martin',
  'bob.nguyen',
  'carol.smith',
  'dave.okafor',
  'erin.kowalski',
  'frank.li',
  'grace.moreau',
  'svc-backup',
];
const userRows: Row[] = USERS.map((u, i) => ({ user: `corp\\${u}`, department: `dept-${i}`, manager: `manager-${i}` }));
for (let i = 0; userRows.length < 100_000; i++)
  userRows.push({
    user: `corp\\user-${String(i).padStart(6, '0')}`,
    department: `dept-${i % 40}`,
    manager: `manager-${i % 500}`,
  });
const cidrRows: Row[] = [];
for (let i = 0; cidrRows.length < 10_000; i++) {
  const bits = [8, 12, 16, 20, 24, 28, 32][i % 7]!;
  const a = (i * 2654435761) >>> 0;
  const masked = bits === 32 ? a : (a & (~0 << (32 - bits))) >>> 0;
  cidrRows.push({
    net: `${masked >>> 24}.${(masked >>> 16) & 255}.${(masked >>> 8) & 255}.${masked & 255}/${bits}`,
    zone: `zone-${i % 30}`,
    owner: `team-${i % 12}`,
  });
}

const built = performance.now();
const job: EnrichmentJob = {
  fingerprint: 'bench',
  policies: [
    {
      id: 'geo',
      version: 1,
      definition: {
        name: 'geo',
        order: 1,
        condition: null,
        key: 'src_endpoint.ip',
        lookup: { source_id: 'builtin-geoip' },
        output: {
          fields: {
            'src_endpoint.location.country': 'country_code',
            'src_endpoint.autonomous_system.number': 'asn',
            'src_endpoint.autonomous_system.name': 'as_org',
          },
        },
        on_miss: 'continue',
      },
    },
    {
      id: 'users',
      version: 1,
      definition: {
        name: 'users',
        order: 2,
        condition: null,
        key: 'actor.user.name',
        lookup: { table_id: 'users' },
        output: { enrichment: { name: 'user', type: 'directory' } },
        on_miss: 'continue',
      },
    },
    {
      id: 'nets',
      version: 1,
      definition: {
        name: 'nets',
        order: 3,
        condition: null,
        key: 'dst_endpoint.ip',
        lookup: { table_id: 'nets' },
        output: { enrichment: { name: 'network', type: 'cidr' } },
        on_miss: 'continue',
      },
    },
  ],
  refs: {
    geo: { kind: 'geoip' },
    users: { kind: 'table', blob: 'users-v1' },
    nets: { kind: 'table', blob: 'nets-v1' },
  },
  blobs: {
    'users-v1': shared(
      encodeTable({ key_column: 'user', match: 'exact', columns: ['user', 'department', 'manager'], rows: userRows }),
    ),
    'nets-v1': shared(
      encodeTable({ key_column: 'net', match: 'cidr', columns: ['net', 'zone', 'owner'], rows: cidrRows }),
    ),
  },
};
defaultGeoip().get('8.8.8.8');
const enrich = enrichHook(1, job)!;
enrich([]); // compiles and builds the tables
const buildMs = performance.now() - built;

const catalog = ocsfCatalog();
const validator = createValidator(catalog);
const mapping = { versionId: 'v1', compiled: compileMapping(FIREWALL_MAPPING, catalog) };
const routes = compileRoutes([
  {
    id: 'all',
    organization_id: 1,
    name: 'all',
    position: 1,
    enabled: true,
    condition: null,
    transforms: [],
    destination_ids: ['d1'],
    final: true,
    version: 1,
  },
]);
const destinations = new Map([
  ['d1', { organization_id: 1, enabled: true, disabled_reason: null, shadow_destination_id: null, type: 'file' }],
]);
const batches: IngestBatch[] = [];
for (let start = 0; start < total; start += batchSize) {
  const events = firewallLines(start, Math.min(batchSize, total - start));
  batches.push({
    id: `b${start}`,
    organization_id: 1,
    integration_id: 1,
    platform: 'custom',
    stream: 'firewall',
    received_at: '2026-11-24T08:00:00.000Z',
    source: 'push',
    ids: events.map((_, i) => `e${start + i}`),
    events,
    bytes: 0,
  });
}

function once(withEnrichment: boolean): { seconds: number; hits: number[]; micros: number[] } {
  const ctx: PassContext = {
    mapping,
    validate: (e) => validator.validate(e),
    policy: 'strict',
    routes,
    destinations,
    lineage: false,
    ...(withEnrichment ? { enrich } : {}),
  };
  const hits = [0, 0, 0];
  const micros = [0, 0, 0];
  const started = performance.now();
  for (const batch of batches) {
    const r = runPass(batch, ctx);
    r.stage.enrichment?.forEach((c, i) => {
      hits[i]! += c.hits;
      micros[i]! += c.micros;
    });
  }
  return { seconds: (performance.now() - started) / 1000, hits, micros };
}

once(false);
once(true); // warm-up
const without: number[] = [];
const withIt: number[] = [];
let hits: number[] = [];
const policyMicros: number[][] = [[], [], []];
for (let i = 0; i < runs; i++) {
  without.push(once(false).seconds);
  const r = once(true);
  withIt.push(r.seconds);
  hits = r.hits;
  r.micros.forEach((m, j) => policyMicros[j]!.push(m / total));
}
const a = median(without);
const b = median(withIt);
console.log(
  `events ${total} in batches of ${batchSize}, ${runs} runs each, alternating; tables built in ${buildMs.toFixed(0)} ms (100,000 users, 10,000 CIDRs, GeoIP)`,
);
console.log(`hits per run: geoip ${hits[0]}, users ${hits[1]}, cidr ${hits[2]} of ${total}`);
console.log(
  `policy time (median µs/event, lookups and writes, not the larger serialization): geoip ${median(policyMicros[0]!).toFixed(2)}, users ${median(policyMicros[1]!).toFixed(2)}, cidr ${median(policyMicros[2]!).toFixed(2)}`,
);
console.log(
  `pass without enrichment: median ${(total / a).toFixed(0)} events/s (${((a * 1e6) / total).toFixed(2)} µs/event)`,
);
console.log(
  `pass with 3 policies:    median ${(total / b).toFixed(0)} events/s (${((b * 1e6) / total).toFixed(2)} µs/event)`,
);
console.log(`enrichment share of the pass: ${(((b - a) / b) * 100).toFixed(1)}% (with/without ${(b / a).toFixed(3)})`);
