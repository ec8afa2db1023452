// `weir test <dir|file>...`: runs mapping documents' test cases offline, for CI (like
// `vector test`). Every `*.json` file under a directory is a mapping document; each is
// checked as publication checks it, then its cases run as the live pipeline would map
// them under a strict OCSF policy. Sample files (`*.ndjson`, `*.txt`) beside a
// `<name>.expected.json` are a corpus of real events (test/corpus/README.md, src/cli/corpus.ts):
// each event is mapped and compared with the output expected. Nothing talks to a server.
// Exit status: 0 every document valid, every case and sample as expected, 1 otherwise, 2 usage error.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { createValidator, ocsfCatalog } from '../ocsf/index.js';
import { runCases, type CaseResult } from '../pipeline/normalize/cases.js';
import { compileMapping, validateMappingDocument } from '../pipeline/normalize/compile.js';
import type { MappingDocument } from '../pipeline/normalize/types.js';
import { CliError } from './api.js';
import {
  isSampleFile,
  mappingResolver,
  printSample,
  runSampleFile,
  summaryTable,
  type CorpusOptions,
} from './corpus.js';
import type { SourceTally } from '../pipeline/normalize/corpus.js';

const MAX_FILES = 10_000;

interface Found {
  documents: string[];
  samples: string[];
}

export function documentFiles(target: string): Found {
  let stat;
  try {
    stat = statSync(target);
  } catch {
    throw new CliError(`${target}: no such file or directory`, 2);
  }
  if (stat.isFile())
    return isSampleFile(target) ? { documents: [], samples: [target] } : { documents: [target], samples: [] };
  const out: string[] = [];
  const samples: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory() && !entry.name.startsWith('.') && entry.name !== 'node_modules') walk(full);
      else if (entry.isFile() && entry.name.endsWith('.expected.json')) continue;
      else if (entry.isFile() && entry.name.endsWith('.json')) out.push(full);
      else if (entry.isFile() && isSampleFile(entry.name)) samples.push(full);
      if (out.length + samples.length > MAX_FILES) throw new CliError(`${target}: more than ${MAX_FILES} files`, 2);
    }
  };
  walk(target);
  return { documents: out, samples };
}

export interface FileOutcome {
  problems?: string[];
  cases?: CaseResult[];
  doc?: MappingDocument;
}

export function testFile(
  file: string,
  validate: (e: Record<string, unknown>) => ReturnType<ReturnType<typeof createValidator>['validate']>,
): FileOutcome {
  let doc: unknown;
  try {
    doc = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    return { problems: [`not JSON: ${(err as Error).message}`] };
  }
  const problems = validateMappingDocument(doc, ocsfCatalog());
  if (problems.length > 0) return { problems: problems.map((p) => `${p.at}: ${p.message}`) };
  const d = doc as MappingDocument;
  return { cases: runCases(d, compileMapping(d, ocsfCatalog()), validate), doc: d };
}

export function testMappings(
  targets: string[],
  options: { verbose: boolean } & Partial<CorpusOptions>,
  print: (line: string) => void,
): number {
  if (targets.length === 0) throw new CliError('usage: weir test <dir|file>... (see weir test --help)', 2);
  const found = targets.map(documentFiles);
  const files = found.flatMap((f) => f.documents);
  const sampleFiles = found.flatMap((f) => f.samples);
  if (files.length === 0 && sampleFiles.length === 0)
    throw new CliError(`no *.json mapping document or sample file under ${targets.join(', ')}`, 2);
  const validator = createValidator(ocsfCatalog());
  const validate = (e: Record<string, unknown>) => validator.validate(e);
  let invalid = 0;
  let passed = 0;
  let failed = 0;
  const docs: MappingDocument[] = [];
  for (const file of files) {
    const outcome = testFile(file, validate);
    if (outcome.problems) {
      invalid++;
      print(`${file}: invalid document`);
      for (const p of outcome.problems) print(`    ${p}`);
      continue;
    }
    if (outcome.doc) docs.push(outcome.doc);
    const cases = outcome.cases ?? [];
    const bad = cases.filter((c) => !c.ok);
    passed += cases.length - bad.length;
    failed += bad.length;
    print(
      `${file}: ${cases.length === 0 ? 'no test cases' : `${cases.length} case${cases.length > 1 ? 's' : ''}, ${bad.length === 0 ? 'all passed' : `${bad.length} failed`}`}`,
    );
    for (const c of cases) {
      if (c.ok && !options.verbose) continue;
      print(`  ${c.ok ? 'ok  ' : 'FAIL'} ${JSON.stringify(c.name)} (/tests/${c.index})`);
      for (const f of c.failures) print(`         ${f}`);
    }
  }
  const lines: string[] = [];
  if (files.length > 0) {
    const summary = `${files.length} document${files.length > 1 ? 's' : ''}, ${passed + failed} cases: ${passed} passed, ${failed} failed`;
    lines.push(invalid > 0 ? `${summary}; ${invalid} invalid document${invalid > 1 ? 's' : ''}` : summary);
  }
  const corpusOptions: CorpusOptions = {
    verbose: options.verbose,
    update: options.update ?? false,
    summary: options.summary ?? false,
  };
  const corpusFailed =
    sampleFiles.length > 0 ? testSamples(sampleFiles, docs, validate, corpusOptions, print, lines) : 0;
  for (const l of lines) print(l);
  return invalid > 0 || failed > 0 || corpusFailed > 0 ? 1 : 0;
}

/** Runs the corpus samples; returns how many samples failed. */
function testSamples(
  sampleFiles: string[],
  docs: MappingDocument[],
  validate: (e: Record<string, unknown>) => ReturnType<ReturnType<typeof createValidator>['validate']>,
  options: CorpusOptions,
  print: (line: string) => void,
  lines: string[],
): number {
  const resolve = mappingResolver(docs);
  const tallies = new Map<string, SourceTally>();
  let samples = 0;
  let bad = 0;
  let events = 0;
  let differ = 0;
  for (const file of sampleFiles) {
    const report = runSampleFile(file, resolve, validate, options, tallies);
    if (!report) continue;
    samples++;
    events += report.events;
    differ += report.failures.length;
    if (!printSample(report, options, print)) bad++;
  }
  if (samples === 0) return 0;
  if (options.summary) lines.push(...summaryTable(tallies));
  const head = `corpus: ${tallies.size} source${tallies.size === 1 ? '' : 's'}, ${samples} sample file${samples === 1 ? '' : 's'}, ${events} events`;
  if (options.update) lines.push(`${head}: expected output written`);
  else
    lines.push(
      `${head}: ${events - differ} as expected, ${differ} differ${bad > 0 ? ` (${bad} file${bad === 1 ? '' : 's'} failing)` : ''}`,
    );
  return bad;
}
