// The corpus of real events (test/corpus/README.md): every sample maps, as the pipeline maps
// it, to exactly the OCSF its reviewed expected file holds; every built-in source has samples;
// every sample file names where it came from. The per-source figures are printed (the same
// table as `weir test test/corpus --summary`).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { mappingResolver, runSampleFile, summaryTable, sampleFiles, type CorpusOptions } from '../../src/cli/corpus.js';
import { createValidator, ocsfCatalog } from '../../src/ocsf/index.js';
import { BUILTIN_MAPPINGS } from '../../src/pipeline/normalize/builtin/index.js';
import type { SourceTally } from '../../src/pipeline/normalize/corpus.js';

const ROOT = import.meta.dirname;

const files = sampleFiles(ROOT);
const validator = createValidator(ocsfCatalog());
const validate = (e: Record<string, unknown>) => validator.validate(e);
const resolve = mappingResolver([]);
const options: CorpusOptions = { verbose: false, update: false, summary: true };
const tallies = new Map<string, SourceTally>();

describe('the corpus of real events', () => {
  it.each(files.map((f) => [path.relative(ROOT, f), f] as const))('%s maps to its expected OCSF', (_name, file) => {
    const report = runSampleFile(file, resolve, validate, options, tallies);
    expect(report, 'the folder names a built-in mapping or the file has an expected file').toBeDefined();
    expect(report!.problems).toEqual([]);
    const failures = report!.failures.map((f) => `line ${f.line}: ${f.messages.join('; ')}`);
    expect(failures).toEqual([]);
  });

  it("names the origin and licence of every sample file in its folder's SOURCES.md", () => {
    for (const file of files) {
      const sources = path.join(path.dirname(file), 'SOURCES.md');
      let text = '';
      try {
        text = readFileSync(sources, 'utf8');
      } catch {
        // reported below
      }
      expect(text, `${path.relative(ROOT, sources)} exists`).not.toBe('');
      expect(text.includes(path.basename(file)), `${path.relative(ROOT, sources)} names ${path.basename(file)}`).toBe(
        true,
      );
      expect(/licen[cs]e/i.test(text), `${path.relative(ROOT, sources)} names a licence`).toBe(true);
    }
  });

  it('prints the figures per source', () => {
    if (tallies.size > 0) console.log(['', ...summaryTable(tallies)].join('\n'));
    const known = new Set(BUILTIN_MAPPINGS.map((b) => `${b.platform}/${b.stream}`));
    for (const source of tallies.keys())
      expect(known.has(source), `${source} is a built-in platform/stream`).toBe(true);
  });
});
