// The built-in mappings on the corpus of real events (test/corpus): per source, the figures
// of issue 26 (events, delivered valid, Base Event, quarantined, class and activity as the
// reviewed expected files say), the cost of the normalization stage per event, and the cost of
// the engine's pruning of incomplete objects (decision 0056): the mapping alone (`map()` on
// parsed events, no validation or serialization, which would differ: without pruning some
// events are invalid and quarantined) with pruning against without, in alternating rounds.
//
//   npx tsx bench/corpus.ts [--runs 7] [--batch 1000] [--events 20000]
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { v7 as uuidv7 } from 'uuid';
import { mappingResolver, sampleFiles, runSampleFile, summaryTable, type CorpusOptions } from '../src/cli/corpus.js';
import { createValidator, ocsfCatalog } from '../src/ocsf/index.js';
import { BUILTIN_MAPPINGS } from '../src/pipeline/normalize/builtin/index.js';
import { compileMapping } from '../src/pipeline/normalize/compile.js';
import { readSample, type SourceTally } from '../src/pipeline/normalize/corpus.js';
import { normalizeBatch } from '../src/pipeline/normalize/stage.js';
import type { CompiledMapping } from '../src/pipeline/normalize/types.js';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '7' },
    batch: { type: 'string', default: '1000' },
    events: { type: 'string', default: '20000' },
  },
});
const runs = Number(values.runs);
const batchSize = Number(values.batch);
const perRound = Number(values.events);
const root = path.resolve(import.meta.dirname, '../test/corpus');
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

// 1. The figures: every sample through `weir test`'s own runner.
const validator = createValidator(ocsfCatalog());
const validate = (e: Record<string, unknown>) => validator.validate(e);
const tallies = new Map<string, SourceTally>();
const options: CorpusOptions = { verbose: false, update: false, summary: true };
const resolve = mappingResolver([]);
const files = sampleFiles(root);
for (const f of files) runSampleFile(f, resolve, validate, options, tallies);
console.log(`corpus: ${files.length} sample files (test/corpus)\n`);
console.log(summaryTable(tallies).join('\n'));

// 2. The stage's cost per event, pruning on (A) and off (B).
interface Source {
  name: string;
  lines: string[];
  parsed: Record<string, unknown>[];
  ids: string[];
  a: CompiledMapping;
  b: CompiledMapping;
}
const bySource = new Map<string, string[]>();
for (const f of files) {
  const source = path.relative(root, path.dirname(f));
  const events = readSample(f, readFileSync(f, 'utf8')).events.map((e) => JSON.stringify(e));
  bySource.set(source, [...(bySource.get(source) ?? []), ...events]);
}
const sources: Source[] = [];
for (const [name, events] of bySource) {
  const b = BUILTIN_MAPPINGS.find((m) => `${m.platform}/${m.stream}` === name);
  if (!b || events.length === 0) continue;
  const lines = Array.from({ length: batchSize }, (_, i) => events[i % events.length]!);
  sources.push({
    name,
    lines,
    parsed: lines.map((l) => JSON.parse(l) as Record<string, unknown>),
    ids: lines.map(() => uuidv7()),
    a: compileMapping(b.document, ocsfCatalog()),
    b: compileMapping(b.document, ocsfCatalog(), { prune: false }),
  });
}
const receivedAt = new Date().toISOString();
function stage(s: Source, compiled: CompiledMapping): number {
  const res = normalizeBatch(
    {
      id: uuidv7(),
      organization_id: 1,
      integration_id: 1,
      platform: 'bench',
      stream: 'bench',
      received_at: receivedAt,
      source: 'push',
      ids: s.ids,
      events: s.lines,
      bytes: 0,
    },
    { mapping: { versionId: '0190d1c2-0000-7000-8000-000000000000', compiled }, validate, policy: 'strict' },
  );
  return res.normalized;
}
const mapCtx = { receivedAtMs: Date.now() };
function mapAll(s: Source, compiled: CompiledMapping): void {
  for (const e of s.parsed) compiled.map(e, mapCtx);
}
/** Microseconds per event over `perRound` events of the source. */
function round(fn: () => void): number {
  const batches = Math.max(1, Math.round(perRound / batchSize));
  const start = process.hrtime.bigint();
  for (let i = 0; i < batches; i++) fn();
  return Number(process.hrtime.bigint() - start) / 1e3 / (batches * batchSize);
}
console.log(
  `\nnode ${process.version}; per event, median of ${runs} rounds of ~${perRound} events; the A/B rounds alternate\n`,
);
console.log(
  `${'source'.padEnd(40)} ${'stage µs'.padStart(9)} ${'map A: prune'.padStart(12)} ${'map B: none'.padStart(12)} ${'A/B'.padStart(6)}`,
);
const all = { stage: [] as number[], a: [] as number[], b: [] as number[] };
for (const s of sources) {
  for (let w = 0; w < 3; w++) {
    stage(s, s.a);
    mapAll(s, s.a);
    mapAll(s, s.b);
  }
  const st: number[] = [];
  const a: number[] = [];
  const b: number[] = [];
  for (let r = 0; r < runs; r++) {
    st.push(round(() => stage(s, s.a)));
    if (r % 2 === 0) {
      a.push(round(() => mapAll(s, s.a)));
      b.push(round(() => mapAll(s, s.b)));
    } else {
      b.push(round(() => mapAll(s, s.b)));
      a.push(round(() => mapAll(s, s.a)));
    }
  }
  all.stage.push(median(st));
  all.a.push(median(a));
  all.b.push(median(b));
  console.log(
    `${s.name.padEnd(40)} ${median(st).toFixed(1).padStart(9)} ${median(a).toFixed(2).padStart(12)} ${median(b).toFixed(2).padStart(12)} ${(median(a) / median(b)).toFixed(3).padStart(6)}`,
  );
}
const sum = (xs: number[]) => xs.reduce((n, x) => n + x, 0);
console.log(
  `${'all sources (sum of medians)'.padEnd(40)} ${sum(all.stage).toFixed(1).padStart(9)} ${sum(all.a).toFixed(2).padStart(12)} ${sum(all.b).toFixed(2).padStart(12)} ${(sum(all.a) / sum(all.b)).toFixed(3).padStart(6)}`,
);
console.log(
  `pruning costs ${(sum(all.a) - sum(all.b)).toFixed(2)} µs over ${all.a.length} sources' events, ${((100 * (sum(all.a) - sum(all.b))) / sum(all.stage)).toFixed(1)}% of the stage`,
);
