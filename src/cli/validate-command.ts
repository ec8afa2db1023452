// `weir validate <file|dir>...`: checks configuration offline (no server, no database), for CI
// and before an import or a publication. A file whose `format` is "weir.config-bundle" is a
// configuration bundle: checked as the import's first gate checks it (format, version, shape,
// names unique per kind, mapping histories), then each mapping document and detection rule in
// it as their modules would. Any other JSON file is a mapping document: its schema, its compile
// and its own test cases (the checks `weir test` runs). A directory: every *.json file under it
// (sample corpora, *.expected.json and non-JSON files are left to `weir test`).
// One line per file, `OK` or `INVALID` with each error and its location under it.
// Exit status: 0 every file valid, 1 any invalid, 2 usage error.
import { readFileSync } from 'node:fs';
import { isAppError } from '../core/errors.js';
import { checkDocument } from '../modules/config-bundle/document.js';
import { BUNDLE_FORMAT, type ConfigBundle } from '../modules/config-bundle/schema.js';
import { createValidator, ocsfCatalog } from '../ocsf/index.js';
import { readRuleText } from '../pipeline/detect/rule-text.js';
import { checkRule } from '../pipeline/detect/rules.js';
import { runCases } from '../pipeline/normalize/cases.js';
import { compileMapping, validateMappingDocument } from '../pipeline/normalize/compile.js';
import type { MappingDocument } from '../pipeline/normalize/types.js';
import { CliError } from './api.js';
import { documentFiles, testFile } from './test-command.js';

type Json = Record<string, unknown>;
type Validate = (e: Json) => ReturnType<ReturnType<typeof createValidator>['validate']>;

interface Verdict {
  what: string;
  errors: string[];
  note?: string;
}

/** A bundle error's location as a JSON pointer into the file (the API says body/document/...). */
const pointer = (location: string) => location.replace(/^body\/document/, '') || '/';

function bundleErrors(doc: Json, validate: Validate): Verdict {
  const what = 'configuration bundle';
  let bundle: ConfigBundle;
  try {
    bundle = checkDocument(doc);
  } catch (err) {
    if (!isAppError(err)) throw err;
    const listed = (err.details.errors ?? []) as { location: string; message: string }[];
    return {
      what,
      errors: listed.length ? listed.map((e) => `${pointer(e.location)}: ${e.message}`) : [err.message],
    };
  }
  const errors: string[] = [];
  let cases = 0;
  bundle.mappings.forEach((m, i) => {
    const before = errors.length;
    const documents: [string, unknown][] = [
      ...(m.document ? ([[`/mappings/${i}/document`, m.document]] as [string, unknown][]) : []),
      ...(m.versions ?? []).map((v, j): [string, unknown] => [`/mappings/${i}/versions/${j}/document`, v.document]),
    ];
    for (const [at, d] of documents)
      for (const p of validateMappingDocument(d, ocsfCatalog())) errors.push(`${at}${p.at}: ${p.message}`);
    if (!m.document || errors.length > before) return;
    const d = m.document as unknown as MappingDocument;
    for (const c of runCases(d, compileMapping(d, ocsfCatalog()), validate)) {
      cases++;
      if (!c.ok)
        errors.push(`/mappings/${i}/document/tests/${c.index} ${JSON.stringify(c.name)}: ${c.failures.join('; ')}`);
    }
  });
  (bundle.detection_rules ?? []).forEach((r, i) => {
    // A condition in the text form is read as the server reads it: the tree is checked, with the
    // text's line and column on a problem.
    const text = readRuleText(r.definition);
    const problems = text.syntax ? [text.syntax] : text.place(checkRule(text.definition));
    for (const p of problems)
      errors.push(
        `/detection_rules/${i} (${r.name}) ${p.location}: ${p.message}${p.closest ? ` (closest known field: ${p.closest})` : ''}`,
      );
  });
  const objects = Object.values(bundle).filter(Array.isArray).flat().length;
  return {
    what,
    errors,
    note: `${objects} object${objects === 1 ? '' : 's'}${cases ? `, ${cases} mapping test case${cases === 1 ? '' : 's'} passed` : ''}`,
  };
}

function fileVerdict(file: string, validate: Validate): Verdict {
  let doc: unknown;
  try {
    doc = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    return { what: 'file', errors: [`not JSON: ${(err as Error).message}`] };
  }
  if (typeof doc === 'object' && doc !== null && !Array.isArray(doc) && (doc as Json).format === BUNDLE_FORMAT)
    return bundleErrors(doc as Json, validate);
  const outcome = testFile(file, validate);
  if (outcome.problems) return { what: 'mapping document', errors: outcome.problems };
  const cases = outcome.cases ?? [];
  const failed = cases.filter((c) => !c.ok);
  return {
    what: 'mapping document',
    errors: failed.map((c) => `/tests/${c.index} ${JSON.stringify(c.name)}: ${c.failures.join('; ')}`),
    note: cases.length
      ? `${cases.length - failed.length} of ${cases.length} test case${cases.length === 1 ? '' : 's'} passed`
      : 'no test cases',
  };
}

export function validateFiles(targets: string[], print: (line: string) => void): number {
  if (targets.length === 0) throw new CliError('usage: weir validate <file|dir>... (see weir validate --help)', 2);
  const files = targets.flatMap((t) => documentFiles(t).documents);
  if (files.length === 0) throw new CliError(`no *.json file under ${targets.join(', ')}`, 2);
  const validator = createValidator(ocsfCatalog());
  const validate: Validate = (e) => validator.validate(e);
  let invalid = 0;
  for (const file of files) {
    const v = fileVerdict(file, validate);
    if (v.errors.length === 0) {
      print(`${file}: OK (${v.what}${v.note ? `, ${v.note}` : ''})`);
      continue;
    }
    invalid++;
    print(`${file}: INVALID (${v.what}${v.note ? `, ${v.note}` : ''})`);
    for (const e of v.errors) print(`    ${e}`);
  }
  print(`${files.length} file${files.length === 1 ? '' : 's'}: ${files.length - invalid} valid, ${invalid} invalid`);
  return invalid > 0 ? 1 : 0;
}
