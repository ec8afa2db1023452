// The file half of the corpus (test/corpus/README.md, pure half in
// src/pipeline/normalize/corpus.ts): finds sample files under the folders given to `weir test`,
// resolves each folder `<platform>/<stream>` to a mapping (a document of the same run with that
// platform and stream, else the built-in), maps every event, compares with `<name>.expected.json`,
// and with --update writes that file instead.
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { OcsfIssue } from '../ocsf/types.js';
import { BUILTIN_MAPPINGS } from '../pipeline/normalize/builtin/index.js';
import { compileMapping } from '../pipeline/normalize/compile.js';
import {
  emptyTally,
  EXPECTED_SUFFIX,
  expectedEntry,
  judgeSample,
  mapSample,
  readSample,
  SAMPLE_EXTENSIONS,
  tally,
  type EventJudgement,
  type SourceTally,
} from '../pipeline/normalize/corpus.js';
import type { CompiledMapping, MappingDocument } from '../pipeline/normalize/types.js';
import { ocsfCatalog } from '../ocsf/index.js';

export interface CorpusOptions {
  verbose: boolean;
  update: boolean;
  summary: boolean;
}

export interface SampleReport {
  file: string;
  source: string;
  events: number;
  failures: { line: number; messages: string[] }[];
  problems: string[];
  updated: boolean;
}

/** Samples found by the walk: a sample file, and whether its expected file exists. */
export function isSampleFile(name: string): boolean {
  return SAMPLE_EXTENSIONS.some((ext) => name.endsWith(ext));
}

/** Every sample file below a folder, in a stable order. */
export function sampleFiles(dir: string): string[] {
  return readdirSync(dir)
    .sort()
    .flatMap((e) => {
      const full = path.join(dir, e);
      return statSync(full).isDirectory() ? sampleFiles(full) : isSampleFile(e) ? [full] : [];
    });
}

export function expectedFileOf(sample: string): string {
  const ext = SAMPLE_EXTENSIONS.find((e) => sample.endsWith(e))!;
  return `${sample.slice(0, -ext.length)}${EXPECTED_SUFFIX}`;
}

/** `<platform>/<stream>` of a sample, from the two folders that hold it. */
export function sourceOf(sample: string): string {
  const dir = path.dirname(path.resolve(sample));
  return `${path.basename(path.dirname(dir))}/${path.basename(dir)}`;
}

/** Mappings by `<platform>/<stream>`: the run's own documents first, then the built-ins. */
export function mappingResolver(docs: readonly MappingDocument[]): (source: string) => CompiledMapping | undefined {
  const catalog = ocsfCatalog();
  const byKey = new Map<string, MappingDocument>();
  for (const b of BUILTIN_MAPPINGS) byKey.set(`${b.platform}/${b.stream}`, b.document);
  for (const d of docs) if (d.platform && d.stream) byKey.set(`${d.platform}/${d.stream}`, d);
  const compiled = new Map<string, CompiledMapping | undefined>();
  return (source) => {
    if (!compiled.has(source)) {
      const doc = byKey.get(source);
      let m: CompiledMapping | undefined;
      try {
        m = doc ? compileMapping(doc, catalog) : undefined;
      } catch {
        m = undefined; // an invalid document is reported by the document pass
      }
      compiled.set(source, m);
    }
    return compiled.get(source);
  };
}

export function runSampleFile(
  file: string,
  resolve: (source: string) => CompiledMapping | undefined,
  validate: (e: Record<string, unknown>) => readonly OcsfIssue[],
  options: CorpusOptions,
  tallies: Map<string, SourceTally>,
): SampleReport | undefined {
  const source = sourceOf(file);
  const expectedFile = expectedFileOf(file);
  const hasExpected = existsSync(expectedFile);
  const mapping = resolve(source);
  // A text file beside mapping documents is not a sample unless its folder names a mapping.
  if (!mapping && !hasExpected) return undefined;
  const report: SampleReport = { file, source, events: 0, failures: [], problems: [], updated: false };
  if (!mapping) {
    report.problems.push(
      `no mapping for ${source}: the folders holding a sample name a platform and a stream (a document of this run or a built-in)`,
    );
    return report;
  }
  const sample = readSample(file, readFileSync(file, 'utf8'));
  report.problems.push(...sample.problems);
  report.events = sample.events.length;
  const outcomes = mapSample(sample.events, mapping, validate);
  let judgements: EventJudgement[] = [];
  if (options.update) {
    writeFileSync(expectedFile, `${JSON.stringify(outcomes.map(expectedEntry), null, 2)}\n`);
    report.updated = true;
    judgements = outcomes.map((_, i) => ({ line: sample.lines[i]!, ok: true, classOk: true, failures: [] }));
  } else if (!hasExpected) {
    report.problems.push(
      `no ${path.basename(expectedFile)} beside it: run weir test --update, then review what it wrote`,
    );
  } else {
    let expected: unknown;
    try {
      expected = JSON.parse(readFileSync(expectedFile, 'utf8'));
    } catch (err) {
      report.problems.push(`${path.basename(expectedFile)}: not JSON (${(err as Error).message})`);
    }
    if (expected !== undefined) {
      const judged = judgeSample(expected, outcomes, sample.lines);
      report.problems.push(...judged.problems);
      judgements = judged.judgements;
      for (const j of judgements) if (!j.ok) report.failures.push({ line: j.line, messages: j.failures });
    }
  }
  let t = tallies.get(source);
  if (!t) tallies.set(source, (t = emptyTally()));
  tally(t, outcomes, judgements);
  return report;
}

/** Prints a sample's result; returns whether it passed. */
export function printSample(r: SampleReport, options: CorpusOptions, print: (line: string) => void): boolean {
  const ok = r.failures.length === 0 && r.problems.length === 0;
  const what = r.updated ? 'expected output written' : ok ? 'all as expected' : `${r.failures.length} differ`;
  if (!ok || options.verbose || r.updated) print(`${r.file}: ${r.events} event${r.events === 1 ? '' : 's'}, ${what}`);
  for (const p of r.problems) print(`    ${p}`);
  for (const f of r.failures) {
    print(`  FAIL line ${f.line}`);
    for (const m of f.messages) print(`         ${m}`);
  }
  return ok;
}

/** The per-source table of --summary. */
export function summaryTable(tallies: ReadonlyMap<string, SourceTally>): string[] {
  const head = [
    'source',
    'events',
    'valid',
    'Base Event',
    'quarantined',
    'class+activity as expected',
    'output as expected',
  ];
  const rows = [...tallies]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([s, t]) => [s, t.events, t.valid, t.base, t.quarantined, t.classAsExpected, t.asExpected].map(String));
  const total = emptyTally();
  for (const t of tallies.values()) for (const k of Object.keys(total) as (keyof SourceTally)[]) total[k] += t[k];
  rows.push([
    'all',
    ...[total.events, total.valid, total.base, total.quarantined, total.classAsExpected, total.asExpected].map(String),
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  return [line(head), ...rows.map(line)];
}
