// The published field mapping of Sigma logsources to OCSF (docs/sigma.md has the same tables):
// for each logsource, the OCSF classes its events are in and which built-in mapping rules
// produce them, and the OCSF path each Sigma field name reads there (logsource-types.ts). Every
// path is checked against the compiled OCSF catalog, and every field against what the built-in
// mappings write, by the tests. A field not listed is refused, never guessed.
import type { SigmaLogsource } from './logsource-types.js';
import { CLOUD_LOGSOURCES } from './logsources-cloud.js';
import { ENDPOINT_LOGSOURCES } from './logsources-endpoint.js';
import { NETWORK_LOGSOURCES } from './logsources-network.js';
import { WINDOWS_LOGSOURCES } from './logsources-windows.js';

export type { SigmaField, SigmaLogsource, SigmaVariant } from './logsource-types.js';

export const LOGSOURCES: readonly SigmaLogsource[] = [
  ...ENDPOINT_LOGSOURCES,
  ...WINDOWS_LOGSOURCES,
  ...CLOUD_LOGSOURCES,
  ...NETWORK_LOGSOURCES,
];

/** The logsource entry of a rule's logsource: every key the entry names must match, and the rule may name no key the entry lacks. */
export function findLogsource(ls: {
  category?: string;
  product?: string;
  service?: string;
}): SigmaLogsource | undefined {
  const keys = ['category', 'product', 'service'] as const;
  // The most specific entry first: an entry naming category + product beats one naming the category only.
  const candidates = LOGSOURCES.filter((e) => keys.every((k) => e[k] === undefined || e[k] === ls[k]?.toLowerCase()));
  const fits = candidates.filter((e) =>
    keys.every((k) => ls[k] === undefined || e[k] !== undefined || (k !== 'category' && e.category !== undefined)),
  );
  return fits.sort(
    (a, b) => keys.filter((k) => b[k] !== undefined).length - keys.filter((k) => a[k] !== undefined).length,
  )[0];
}
