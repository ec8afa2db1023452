// Throughput of the normalization stage alone, in process, on one core: what a worker does
// with one ingest batch between taking it from the queue and writing it. Per batch of
// --batch events: JSON.parse of the batch's events (as a queue hands them over), then
// normalizeBatch (map with the compiled mapping, OCSF validation, NDJSON serialization of
// the normalized records with their envelope). No database: that is the end-to-end figure.
//
// Mappings: the built-in ones (src/pipeline/normalize/builtin) on their connectors'
// fixtures (src/connectors/<platform>/fixtures/<stream>.json), cycled to fill a batch;
// without built-ins, a document of this file on the Okta fixture. The reference loop is
// plain Node on the same texts: JSON.parse + a 15-field hand-written map + JSON.stringify.
//
// The firewall case (bench/fixtures/firewall.ts): ~715-byte firewall traffic events, 1,000
// distinct ones a batch, mapped by the document a user would publish for (organization,
// custom, firewall): 15 fields to OCSF Network Activity. Its reference maps the same 15
// fields into the same OCSF shape by hand. The script fails before measuring if any
// firewall event comes out quarantined or invalid (the project's OCSF validator).
// The passthrough case: the firewall case's OCSF output pushed back in on a stream that is
// already OCSF (no mapping: each event passes through as itself, validated and serialized).
// --only firewall|builtin|passthrough runs one group (passthrough: with the firewall case).
//
//   npm run bench:normalize -- [--events 100000] [--runs 5] [--batch 1000] [--only firewall|builtin|passthrough]
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { v7 as uuidv7 } from 'uuid';
import { createValidator, ocsfCatalog } from '../src/ocsf/index.js';
import type { IngestBatch } from '../src/pipeline/envelope.js';
import { compileMapping } from '../src/pipeline/normalize/compile.js';
import { ocsfPassthrough } from '../src/pipeline/normalize/passthrough.js';
import { normalizeBatch, type StageContext } from '../src/pipeline/normalize/stage.js';
import type { CompiledMapping, MappingDocument } from '../src/pipeline/normalize/types.js';
import {
  FIREWALL_MAPPING,
  FIREWALL_PLATFORM,
  FIREWALL_STREAM,
  firewallLines,
  firewallReferenceMap,
} from './fixtures/firewall.js';

const { values } = parseArgs({
  options: {
    events: { type: 'string', default: '100000' },
    runs: { type: 'string', default: '5' },
    batch: { type: 'string', default: '1000' },
    only: { type: 'string', default: '' },
  },
});
const total = Number(values.events);
const runs = Number(values.runs);
const batchSize = Number(values.batch);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
const root = new URL('../', import.meta.url);

interface Case {
  name: string;
  compiled: CompiledMapping;
  /** One batch's events as a JSON array (the reference's input). */
  text: string;
  /** The same events as the queue carries them: the JSON text of each (the stage's input). */
  lines: string[];
  ids: string[];
  bytesPerEvent: number;
  /** The plain-Node reference for this case (JSON.parse + 15-field map + JSON.stringify); the generic one by default. */
  reference?: (c: Case) => number;
  /** An already-OCSF stream's passthrough (no mapping version, no drift sample). */
  passthrough?: true;
}

// Used only when no built-in mappings exist yet.
const FALLBACK: { platform: string; stream: string; document: MappingDocument } = {
  platform: 'okta',
  stream: 'system_log',
  document: {
    product: { name: 'Okta', vendor_name: 'Okta' },
    defaults: [
      { target: 'metadata.uid', from: 'uuid' },
      { target: 'time', from: 'published', cast: 'timestamp' },
      { target: 'message', from: 'displayMessage' },
      { target: 'src_endpoint.ip', from: 'client.ipAddress', cast: 'ip', on_error: 'skip' },
      { target: 'actor.user.uid', from: 'actor.id' },
      { target: 'actor.user.name', from: 'actor.alternateId' },
    ],
    rules: [
      {
        name: 'sessions',
        when: { path: 'eventType', prefix: 'user.session.' },
        class_uid: 3002,
        activity_id: { from: 'eventType', lookup: { map: { 'user.session.start': 1, 'user.session.end': 2 } } },
        set: [
          { target: 'user.uid', from: 'actor.id' },
          { target: 'user.name', from: 'actor.alternateId' },
          { target: 'status_id', from: 'outcome.result', lookup: { map: { SUCCESS: 1, FAILURE: 2 }, default: 99 } },
        ],
      },
      { name: 'other', class_uid: 6003, activity_id: 99, set: [{ target: 'api.operation', from: 'eventType' }] },
    ],
  },
};

async function mappings(): Promise<{ platform: string; stream: string; document: MappingDocument }[]> {
  try {
    const mod = (await import('../src/pipeline/normalize/builtin/index.js' as string)) as {
      BUILTIN_MAPPINGS?: { platform: string; stream: string; document: object }[];
    };
    if (mod.BUILTIN_MAPPINGS?.length)
      return mod.BUILTIN_MAPPINGS.map((b) => ({ ...b, document: b.document as MappingDocument }));
  } catch {
    // not written yet
  }
  console.log('(no built-in mappings found: using the fallback document on the Okta fixture)');
  return [FALLBACK];
}

async function cases(): Promise<Case[]> {
  const catalog = ocsfCatalog();
  const out: Case[] = [];
  for (const m of await mappings()) {
    let fixture: Record<string, unknown>[];
    try {
      fixture = JSON.parse(
        await readFile(new URL(`src/connectors/${m.platform}/fixtures/${m.stream}.json`, root), 'utf8'),
      ) as Record<string, unknown>[];
    } catch {
      console.log(`(skipped ${m.platform}/${m.stream}: no fixture)`);
      continue;
    }
    const events = Array.from({ length: batchSize }, (_, i) => fixture[i % fixture.length]!);
    const text = JSON.stringify(events);
    out.push({
      name: `${m.platform}/${m.stream}`,
      compiled: compileMapping(m.document, catalog),
      text,
      lines: events.map((e) => JSON.stringify(e)),
      ids: events.map(() => uuidv7()),
      bytesPerEvent: Buffer.byteLength(text) / events.length,
    });
  }
  return out;
}

/** The firewall case: `batchSize` distinct generated events, the published-by-a-user mapping. */
function firewallCase(): Case {
  const lines = firewallLines(0, batchSize);
  const text = `[${lines.join(',')}]`;
  return {
    name: `${FIREWALL_PLATFORM}/${FIREWALL_STREAM} (fixture)`,
    compiled: compileMapping(FIREWALL_MAPPING, ocsfCatalog()),
    text,
    lines,
    ids: lines.map(() => uuidv7()),
    bytesPerEvent: Buffer.byteLength(text) / lines.length,
    reference: firewallReference,
  };
}

/** The passthrough case: the firewall case's OCSF events as a sender of OCSF pushes them. */
function passthroughCase(firewall: Case): Case {
  const lines = firewall.lines.map((line) => {
    const r = firewall.compiled.map(JSON.parse(line) as Record<string, unknown>, { receivedAtMs: Date.now() });
    if (!r.ok) throw new Error(`firewall event did not map: ${r.detail}`);
    return JSON.stringify(r.event);
  });
  const text = `[${lines.join(',')}]`;
  return {
    name: 'already OCSF (passthrough)',
    compiled: ocsfPassthrough(ocsfCatalog()),
    text,
    lines,
    ids: lines.map(() => uuidv7()),
    bytesPerEvent: Buffer.byteLength(text) / lines.length,
    passthrough: true,
  };
}

const validator = createValidator(ocsfCatalog());
const receivedAt = new Date().toISOString();

/** Fails loudly unless every event of the case maps without a problem and validates with zero issues. */
function checkValid(c: Case): void {
  const events = JSON.parse(c.text) as Record<string, unknown>[];
  for (const [i, e] of events.entries()) {
    const r = c.compiled.map(e, { receivedAtMs: Date.now() });
    if (!r.ok) throw new Error(`${c.name}: event ${i} did not map: ${r.kind} ${r.detail}`);
    const issues = validator.validate(r.event);
    if (issues.length > 0) throw new Error(`${c.name}: event ${i} is not valid OCSF: ${JSON.stringify(issues)}`);
  }
  const res = runStage(c);
  if (res.normalized !== events.length || res.quarantined.size > 0) {
    throw new Error(
      `${c.name}: the stage normalized ${res.normalized} of ${events.length} events, quarantined ${JSON.stringify([...res.quarantined])}`,
    );
  }
}

/**
 * The one call of the stage, as the one pass makes it for one ingest batch: the texts as
 * queued in, each parsed, mapped, validated and its OCSF event serialized once.
 */
function runStage(c: Case): { normalized: number; quarantined: Map<string, number>; bytes: number } {
  const batch: IngestBatch = {
    id: uuidv7(),
    organization_id: 1,
    integration_id: 1,
    platform: 'bench',
    stream: 'bench',
    received_at: receivedAt,
    source: 'push',
    ids: c.ids,
    events: c.lines,
    bytes: c.text.length,
  };
  const ctx: StageContext = {
    mapping: c.passthrough
      ? { versionId: null, compiled: c.compiled, passthrough: true }
      : { versionId: '0190d1c2-0000-7000-8000-000000000000', compiled: c.compiled },
    validate: (e) => validator.validate(e),
    policy: 'strict',
  };
  const res = normalizeBatch(batch, ctx);
  const quarantined = new Map<string, number>();
  for (const q of res.quarantined) quarantined.set(q.error_kind, (quarantined.get(q.error_kind) ?? 0) + 1);
  return { normalized: res.normalized, quarantined, bytes: res.texts.reduce((n, t) => n + t.length, 0) };
}

const pick = (o: unknown, path: string): unknown =>
  path
    .split('.')
    .reduce<unknown>(
      (v, k) => (v !== null && typeof v === 'object' ? (v as Record<string, unknown>)[k] : undefined),
      o,
    );
const FIELDS = Array.from({ length: 15 }, (_, i) => `f${i}`);

/** The reference: what any Node service does at least with a batch of JSON events. */
function reference(c: Case): number {
  const events = JSON.parse(c.text) as Record<string, unknown>[];
  const keys = Object.keys(events[0] ?? {});
  let out = '';
  for (const e of events) {
    const o: Record<string, unknown> = {};
    for (let i = 0; i < FIELDS.length; i++) o[FIELDS[i]!] = pick(e, keys[i % keys.length] ?? 'x');
    out = out === '' ? JSON.stringify(o) : `${out}\n${JSON.stringify(o)}`;
  }
  return out.length;
}

/** The firewall reference: the same 15 fields into the same OCSF shape, by hand. */
function firewallReference(c: Case): number {
  const events = JSON.parse(c.text) as Record<string, unknown>[];
  let out = '';
  for (const e of events) {
    const line = JSON.stringify(firewallReferenceMap(e));
    out = out === '' ? line : `${out}\n${line}`;
  }
  return out.length;
}

const referenceOf = (c: Case): number => (c.reference ?? reference)(c);

/** Median events/s (wall clock, this single thread) over `runs` runs of `total` events. */
function measure(fn: (c: Case) => unknown, list: Case[]): number {
  const batches = Math.max(1, Math.round(total / batchSize));
  for (let i = 0; i < Math.max(20, batches / 5); i++) fn(list[i % list.length]!); // warm-up
  const rates: number[] = [];
  for (let r = 0; r < runs; r++) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < batches; i++) fn(list[i % list.length]!);
    rates.push((batches * batchSize) / (Number(process.hrtime.bigint() - start) / 1e9));
  }
  return median(rates);
}

const fmt = (n: number) => Math.round(n).toLocaleString('en-US').padStart(9);
const builtins = values.only === 'firewall' || values.only === 'passthrough' ? [] : await cases();
const firewall = values.only === 'builtin' ? undefined : firewallCase();
if (firewall) checkValid(firewall);
const passthrough = firewall && values.only !== 'firewall' ? passthroughCase(firewall) : undefined;
if (passthrough) checkValid(passthrough);
const list = [...builtins, ...(firewall ? [firewall] : []), ...(passthrough ? [passthrough] : [])];
if (list.length === 0) throw new Error('nothing to measure');
console.log(
  `node ${process.version}; ${runs} runs of ~${total} events in batches of ${batchSize}, median events/s (wall clock, one thread)\n`,
);
console.log(
  `${'mapping'.padEnd(34)} ${'bytes/ev'.padStart(8)} ${'out B/ev'.padStart(8)} ${'ok'.padStart(5)}  ${'stage ev/s'.padStart(9)}  ${'ref ev/s'.padStart(9)}  ratio`,
);
for (const c of list) {
  const probe = runStage(c);
  const kinds = [...probe.quarantined].map(([k, n]) => `${k} ${n}`).join(', ');
  const rate = measure(runStage, [c]);
  const ref = measure(referenceOf, [c]);
  const outPerEvent = probe.normalized ? probe.bytes / probe.normalized : 0;
  console.log(
    `${c.name.padEnd(34)} ${fmt(c.bytesPerEvent).slice(1).padStart(8)} ${fmt(outPerEvent).slice(1).padStart(8)} ${`${Math.round((100 * probe.normalized) / batchSize)}%`.padStart(5)}  ${fmt(rate)}  ${fmt(ref)}  ${(rate / ref).toFixed(2)}${kinds ? `   quarantined: ${kinds}` : ''}`,
  );
}
if (builtins.length > 0) {
  // The built-ins only, as before the firewall case existed (comparable with earlier figures).
  const all = measure(runStage, builtins);
  const allRef = measure(referenceOf, builtins);
  console.log(
    `\n${'built-in mappings, round robin'.padEnd(58)} ${fmt(all)}  ${fmt(allRef)}  ${(all / allRef).toFixed(2)}`,
  );
  console.log(
    all >= 100_000
      ? 'target met: >= 100k events/s per core'
      : 'BELOW the 100k events/s per core target: profile with node --cpu-prof',
  );
}
