// What evaluating detection rules costs per event, in process: the Okta fixtures normalized by
// the built-in mapping (10,000 events), evaluated by the compiled rules of
// bench/fixtures/detection-rules.ts (--rules, default 100) and by none (vendor findings only),
// alternating, median of --runs; the mapping's own cost per event beside it for scale.
// The whole pass with and without rules: bench/pipeline.ts --rules-ab.
//   npx tsx bench/detect.ts [--rules 100] [--runs 7]
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { ocsfCatalog } from '../src/ocsf/index.js';
import { compileDetection, type CompiledDetection } from '../src/pipeline/detect/evaluate.js';
import type { RuleDefinition } from '../src/pipeline/detect/rules.js';
import type { NormalizedRecord } from '../src/pipeline/envelope.js';
import { builtinMapping } from '../src/pipeline/normalize/builtin/index.js';
import { compileMapping } from '../src/pipeline/normalize/compile.js';
import { benchRules } from './fixtures/detection-rules.js';

const { values } = parseArgs({
  options: { rules: { type: 'string', default: '100' }, runs: { type: 'string', default: '7' } },
});
const ROOT = path.resolve(import.meta.dirname, '..');
const mapping = compileMapping(builtinMapping('okta', 'system_log')!.document, ocsfCatalog());
const raw = JSON.parse(readFileSync(path.join(ROOT, 'src/connectors/okta/fixtures/system_log.json'), 'utf8')) as Record<
  string,
  unknown
>[];
const records: NormalizedRecord[] = [];
for (let i = 0; i < 1000; i++) {
  for (const [j, r] of raw.entries()) {
    const out = mapping.map(r, { receivedAtMs: 0 });
    if (!out.ok) throw new Error(`fixture ${j}: ${out.detail}`);
    records.push({
      id: `${i}-${j}`,
      organization_id: 1,
      integration_id: 1,
      stream: 'system_log',
      received_at: new Date().toISOString(),
      mapping_version_id: 'v',
      valid: true,
      ocsf: out.event,
    });
  }
}
const rules = benchRules(Number(values.rules)).map((r, i) => ({
  id: `r${i}`,
  name: r.name,
  version: 1,
  definition: r.definition as unknown as RuleDefinition,
}));
const withRules = compileDetection({ fingerprint: 'bench', rules });
const none = compileDetection({ fingerprint: '', rules: [] });
const usPerEvent = (d: CompiledDetection) => {
  const start = process.hrtime.bigint();
  for (let i = 0; i < 5; i++) d.evaluate(records);
  return Number(process.hrtime.bigint() - start) / 1e3 / (5 * records.length);
};
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
usPerEvent(withRules);
usPerEvent(none);
const a: number[] = [];
const b: number[] = [];
for (let k = 0; k < Number(values.runs); k++) {
  a.push(usPerEvent(withRules));
  b.push(usPerEvent(none));
}
const mapStart = process.hrtime.bigint();
for (let i = 0; i < 1000; i++) for (const r of raw) mapping.map(r, { receivedAtMs: 0 });
const mapUs = Number(process.hrtime.bigint() - mapStart) / 1e3 / (1000 * raw.length);
console.log(`node ${process.version}; ${records.length.toLocaleString('en-US')} Okta events; median of ${values.runs}`);
console.log(
  `${rules.length} rules: ${median(a).toFixed(2)} µs per event; none: ${median(b).toFixed(2)} µs per event; the Okta mapping: ${mapUs.toFixed(1)} µs per event`,
);
