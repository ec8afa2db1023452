// `weir test <dir|file>...`: runs mapping documents' test cases offline, for CI (like
// `vector test`). Every `*.json` file under a directory is a mapping document; each is
// checked as publication checks it, then its cases run as the live pipeline would map
// them under a strict OCSF policy. Nothing talks to a server.
// Exit status: 0 every document valid and every case passing, 1 otherwise, 2 usage error.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { createValidator, ocsfCatalog } from '../ocsf/index.js';
import { runCases, type CaseResult } from '../pipeline/normalize/cases.js';
import { compileMapping, validateMappingDocument } from '../pipeline/normalize/compile.js';
import type { MappingDocument } from '../pipeline/normalize/types.js';
import { CliError } from './api.js';

const MAX_FILES = 10_000;

function documentFiles(target: string): string[] {
  let stat;
  try {
    stat = statSync(target);
  } catch {
    throw new CliError(`${target}: no such file or directory`, 2);
  }
  if (stat.isFile()) return [target];
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory() && !entry.name.startsWith('.') && entry.name !== 'node_modules') walk(full);
      else if (entry.isFile() && entry.name.endsWith('.json')) out.push(full);
      if (out.length > MAX_FILES) throw new CliError(`${target}: more than ${MAX_FILES} JSON files`, 2);
    }
  };
  walk(target);
  return out;
}

interface FileOutcome {
  problems?: string[];
  cases?: CaseResult[];
}

function testFile(file: string, validate: (e: Record<string, unknown>) => ReturnType<ReturnType<typeof createValidator>['validate']>): FileOutcome {
  let doc: unknown;
  try {
    doc = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    return { problems: [`not JSON: ${(err as Error).message}`] };
  }
  const problems = validateMappingDocument(doc, ocsfCatalog());
  if (problems.length > 0) return { problems: problems.map((p) => `${p.at}: ${p.message}`) };
  const d = doc as MappingDocument;
  return { cases: runCases(d, compileMapping(d, ocsfCatalog()), validate) };
}

export function testMappings(targets: string[], options: { verbose: boolean }, print: (line: string) => void): number {
  if (targets.length === 0) throw new CliError('usage: weir test <dir|file>... (see weir test --help)', 2);
  const files = targets.flatMap(documentFiles);
  if (files.length === 0) throw new CliError(`no *.json mapping document under ${targets.join(', ')}`, 2);
  const validator = createValidator(ocsfCatalog());
  const validate = (e: Record<string, unknown>) => validator.validate(e);
  let invalid = 0;
  let passed = 0;
  let failed = 0;
  for (const file of files) {
    const outcome = testFile(file, validate);
    if (outcome.problems) {
      invalid++;
      print(`${file}: invalid document`);
      for (const p of outcome.problems) print(`    ${p}`);
      continue;
    }
    const cases = outcome.cases ?? [];
    const bad = cases.filter((c) => !c.ok);
    passed += cases.length - bad.length;
    failed += bad.length;
    print(`${file}: ${cases.length === 0 ? 'no test cases' : `${cases.length} case${cases.length > 1 ? 's' : ''}, ${bad.length === 0 ? 'all passed' : `${bad.length} failed`}`}`);
    for (const c of cases) {
      if (c.ok && !options.verbose) continue;
      print(`  ${c.ok ? 'ok  ' : 'FAIL'} ${JSON.stringify(c.name)} (/tests/${c.index})`);
      for (const f of c.failures) print(`         ${f}`);
    }
  }
  const summary = `${files.length} document${files.length > 1 ? 's' : ''}, ${passed + failed} cases: ${passed} passed, ${failed} failed`;
  print(invalid > 0 ? `${summary}; ${invalid} invalid document${invalid > 1 ? 's' : ''}` : summary);
  return invalid > 0 || failed > 0 ? 1 : 0;
}
