// Weir's Sigma import on the pinned SigmaHQ rules (third_party/sigma, DRL 1.1): per logsource
// Weir documents, the rules tried, accepted and the rate, with the top refusal reasons (grouped
// by kind: names, numbers and lists left out); the totals over documented logsources; the
// logsources Weir does not document; and the fields whose refusal costs the most rules, the
// ones worth mapping next. No timing: test/sigma/acceptance.test.ts holds the floor.
//
//   npx tsx bench/sigma.ts [--reasons 3] [--fields 30] [--logsource <key>]
// `--logsource category/product/service` (parts `-` when absent) also lists that logsource's
// refused rules, one line each with the location and the reason.
import { parseArgs } from 'node:util';
import { acceptance, formatAcceptance, pinnedRules } from '../test/support/sigma/rules.js';

const { values } = parseArgs({
  options: {
    reasons: { type: 'string', default: '3' },
    fields: { type: 'string', default: '30' },
    logsource: { type: 'string' },
  },
});

const started = performance.now();
const rules = pinnedRules();
const report = acceptance(rules);
const ms = performance.now() - started;

console.log(
  `${rules.length} pinned SigmaHQ rules (third_party/sigma), read and compiled in ${(ms / 1000).toFixed(1)} s\n`,
);
console.log(formatAcceptance(report, { reasons: Number(values.reasons), fields: Number(values.fields) }));

if (values.logsource) {
  const refused = report.rules.filter((r) => r.key === values.logsource && r.error);
  console.log(`\nrefused rules of ${values.logsource} (${refused.length}):`);
  for (const r of refused) console.log(`  ${r.rule.path}\n    ${r.error!.location}: ${r.error!.reason}`);
}
