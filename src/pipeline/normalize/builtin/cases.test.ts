// Every built-in mapping's own test cases (its `tests`, docs/mappings.md, Test cases) pass,
// as publication and `weir test` run them.
import { describe, expect, it } from 'vitest';
import { createValidator, ocsfCatalog } from '../../../ocsf/index.js';
import { runCases } from '../cases.js';
import { compileMapping } from '../compile.js';
import { BUILTIN_MAPPINGS, builtinMapping } from './index.js';

const validator = createValidator(ocsfCatalog());

describe('built-in mapping test cases', () => {
  it('okta.system_log carries cases: exact, by field and a quarantine', () => {
    const tests = builtinMapping('okta', 'system_log')?.document.tests ?? [];
    expect(tests.length).toBeGreaterThanOrEqual(5);
    expect(tests.some((c) => c.output) && tests.some((c) => c.expect) && tests.some((c) => c.quarantine)).toBe(true);
  });

  for (const m of BUILTIN_MAPPINGS) {
    it(`${m.platform}.${m.stream}: every case passes`, () => {
      const results = runCases(m.document, compileMapping(m.document, ocsfCatalog()), (e) => validator.validate(e));
      expect(results.filter((r) => !r.ok)).toEqual([]);
    });
  }
});
