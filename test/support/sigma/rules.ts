// The pinned SigmaHQ rules (third_party/sigma, DRL 1.1) and how Weir's Sigma import takes them:
// per logsource, how many rules compile, and why the others are refused, grouped by the kind of
// reason and by the field refused, so that the next field worth mapping can be read off the
// table. Used by test/sigma/acceptance.test.ts and bench/sigma.ts.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { compileSigma, SigmaError, type SigmaCompiled } from '../../../src/pipeline/detect/sigma/compile.js';
import type { SigmaLogsource } from '../../../src/pipeline/detect/sigma/logsource-types.js';
import { findLogsource } from '../../../src/pipeline/detect/sigma/logsources.js';

export interface Logsource {
  category?: string;
  product?: string;
  service?: string;
}

export interface PinnedRule {
  /** Relative to third_party/sigma (`rules/windows/...`). */
  path: string;
  text: string;
  logsource: Logsource;
}

const ROOT = fileURLToPath(new URL('../../../third_party/sigma/', import.meta.url));
const KEYS = ['category', 'product', 'service'] as const;

function ymlFiles(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...ymlFiles(full));
    else if (e.isFile() && e.name.endsWith('.yml')) out.push(full);
  }
  return out;
}

/** The logsource of a rule's text: the first YAML document that names one; `{}` when none does or the text is not YAML. */
function logsourceOf(text: string): Logsource {
  try {
    for (const doc of parseAllDocuments(text)) {
      const ls = (doc.toJS() as { logsource?: unknown } | null)?.logsource;
      if (typeof ls !== 'object' || ls === null) continue;
      const out: Logsource = {};
      for (const k of KEYS) {
        const v = (ls as Record<string, unknown>)[k];
        if (typeof v === 'string') out[k] = v;
      }
      return out;
    }
  } catch {
    // The compiler reports the rule's YAML; here it only has no logsource.
  }
  return {};
}

let cached: PinnedRule[] | undefined;

/** Every `.yml` rule under third_party/sigma/rules, sorted by path; read and parsed once per process. */
export function pinnedRules(): PinnedRule[] {
  cached ??= ymlFiles(path.join(ROOT, 'rules'))
    .sort()
    .map((full) => {
      const text = readFileSync(full, 'utf8');
      return { path: path.relative(ROOT, full).split(path.sep).join('/'), text, logsource: logsourceOf(text) };
    });
  return cached;
}

/** `category/product/service`, an absent part written `-`. */
export function logsourceKey(ls: Logsource): string {
  return KEYS.map((k) => ls[k] || '-').join('/');
}

/** The logsource as the compiler words it in its reasons (`category: x, product: y`). */
function wordedLogsource(ls: Logsource): string {
  return (
    KEYS.filter((k) => ls[k])
      .map((k) => `${k}: ${ls[k]}`)
      .join(', ') || '(empty)'
  );
}

/**
 * The kind of a refusal: the reason with the rule's logsource written `<logsource>`, quoted
 * names `"…"`, parenthesized lists `(…)` and numbers `N`, so that rules refused for the same
 * thing on different fields or values count together.
 */
export function reasonClass(reason: string, ls: Logsource = {}): string {
  const worded = wordedLogsource(ls);
  let r = reason.split(worded).join('<logsource>');
  r = r.replace(/"(?:[^"\\]|\\.)*"/g, '"…"');
  // Innermost groups first (folded to a mark no group contains), so nested parentheses fold too.
  for (let prev = ''; prev !== r;) {
    prev = r;
    r = r.replace(/\([^()]*\)/g, '\u0000');
  }
  return r.replace(/\b\d+(?:\.\d+)?\b/g, 'N').replaceAll('\u0000', '(…)');
}

/** The field a refusal names (`the field "X" ...`), if any. */
export function refusedField(reason: string): string | undefined {
  return /^the field "((?:[^"\\]|\\.)*)"/.exec(reason)?.[1];
}

export interface RuleResult {
  rule: PinnedRule;
  key: string;
  /** The logsource entry the rule's logsource finds; undefined when Weir documents none. */
  entry: SigmaLogsource | undefined;
  compiled?: SigmaCompiled;
  error?: SigmaError;
}

export interface LogsourceAcceptance {
  key: string;
  /** False when Weir documents no such logsource: its rules are counted, not compiled, and left out of the rates. */
  documented: boolean;
  /** The rules of this logsource (compiled when documented). */
  tried: number;
  accepted: number;
  /** Reason class -> rules refused for it, most first. */
  refused: Map<string, number>;
  /** Field refused (`the field "X"`) -> rules, most first. */
  fields: Map<string, number>;
}

export interface AcceptanceReport {
  /** Per logsource key, sorted by rules tried (most first). */
  logsources: LogsourceAcceptance[];
  rules: RuleResult[];
  /** Over documented logsources only. */
  tried: number;
  accepted: number;
  /** Rules, and logsource keys, Weir documents no mapping for. */
  undocumentedRules: number;
  undocumentedLogsources: number;
  /** Over documented logsources, most first. */
  refused: Map<string, number>;
  fields: Map<string, number>;
}

const bump = (m: Map<string, number>, k: string): void => {
  m.set(k, (m.get(k) ?? 0) + 1);
};
const sorted = (m: Map<string, number>): Map<string, number> =>
  new Map([...m].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])));

/** Compiles every rule whose logsource Weir documents, and counts what is accepted and why the rest is refused. */
export function acceptance(rules: readonly PinnedRule[]): AcceptanceReport {
  const by = new Map<string, LogsourceAcceptance>();
  const results: RuleResult[] = [];
  const refused = new Map<string, number>();
  const fields = new Map<string, number>();
  for (const rule of rules) {
    const key = logsourceKey(rule.logsource);
    const entry = findLogsource(rule.logsource);
    let row = by.get(key);
    if (!row)
      by.set(
        key,
        (row = { key, documented: entry !== undefined, tried: 0, accepted: 0, refused: new Map(), fields: new Map() }),
      );
    row.tried++;
    if (!entry) {
      results.push({ rule, key, entry });
      continue;
    }
    try {
      const compiled = compileSigma(rule.text);
      row.accepted++;
      results.push({ rule, key, entry, compiled });
    } catch (e) {
      if (!(e instanceof SigmaError))
        throw new Error(`${rule.path}: compileSigma threw ${String(e)}, not a SigmaError`);
      const cls = reasonClass(e.reason, rule.logsource);
      bump(row.refused, cls);
      bump(refused, cls);
      const field = refusedField(e.reason);
      if (field !== undefined) {
        bump(row.fields, field);
        bump(fields, field);
      }
      results.push({ rule, key, entry, error: e });
    }
  }
  const logsources = [...by.values()]
    .map((r) => ({ ...r, refused: sorted(r.refused), fields: sorted(r.fields) }))
    .sort((a, b) => b.tried - a.tried || a.key.localeCompare(b.key));
  const documented = logsources.filter((r) => r.documented);
  const undocumented = logsources.filter((r) => !r.documented);
  return {
    logsources,
    rules: results,
    tried: documented.reduce((n, r) => n + r.tried, 0),
    accepted: documented.reduce((n, r) => n + r.accepted, 0),
    undocumentedRules: undocumented.reduce((n, r) => n + r.tried, 0),
    undocumentedLogsources: undocumented.length,
    refused: sorted(refused),
    fields: sorted(fields),
  };
}

const pct = (a: number, n: number): string => (n === 0 ? '-' : `${((100 * a) / n).toFixed(1)}%`);
const cut = (s: string, n: number): string => (s.length <= n ? s : `${s.slice(0, n - 1)}…`);

/**
 * The acceptance table as text: per documented logsource the rules tried, accepted, the rate
 * and the top refusal reasons; the totals; the undocumented logsources in one line each (most
 * rules first, at most `undocumented`); and the `fields` most refused fields.
 */
export function formatAcceptance(
  r: AcceptanceReport,
  opts: { reasons?: number; fields?: number; undocumented?: number } = {},
): string {
  const reasons = opts.reasons ?? 3;
  const lines: string[] = [];
  const documented = r.logsources.filter((l) => l.documented);
  const width = Math.max(9, ...documented.map((l) => l.key.length));
  lines.push(
    `${'logsource'.padEnd(width)}  ${'tried'.padStart(5)}  ${'acc.'.padStart(5)}  ${'rate'.padStart(6)}  top refusals`,
  );
  for (const l of documented) {
    const top = [...l.refused].slice(0, reasons).map(([c, n]) => `${n}× ${cut(c, 110)}`);
    lines.push(
      `${l.key.padEnd(width)}  ${String(l.tried).padStart(5)}  ${String(l.accepted).padStart(5)}  ${pct(l.accepted, l.tried).padStart(6)}  ${top[0] ?? ''}`,
    );
    for (const t of top.slice(1)) lines.push(`${''.padEnd(width + 24)}  ${t}`);
  }
  lines.push(
    `${'TOTAL (documented)'.padEnd(width)}  ${String(r.tried).padStart(5)}  ${String(r.accepted).padStart(5)}  ${pct(r.accepted, r.tried).padStart(6)}`,
  );
  lines.push('');
  lines.push(`undocumented: ${r.undocumentedRules} rules in ${r.undocumentedLogsources} logsources (not in the rates)`);
  const undoc = r.logsources.filter((l) => !l.documented).slice(0, opts.undocumented ?? 15);
  if (undoc.length)
    lines.push(
      `  ${undoc.map((l) => `${l.key} ${l.tried}`).join(', ')}${r.undocumentedLogsources > undoc.length ? ', …' : ''}`,
    );
  lines.push('');
  lines.push(`top refusal reasons (documented logsources):`);
  for (const [c, n] of [...r.refused].slice(0, 10)) lines.push(`${String(n).padStart(5)}  ${cut(c, 160)}`);
  const nf = opts.fields ?? 30;
  lines.push('');
  lines.push(`top ${nf} refused fields (rules refused for the field, over documented logsources):`);
  for (const [f, n] of [...r.fields].slice(0, nf)) {
    const where = r.logsources
      .filter((l) => l.fields.has(f))
      .map((l) => `${l.key} ${l.fields.get(f)}`)
      .join(', ');
    lines.push(`${String(n).padStart(5)}  ${f.padEnd(28)}  ${cut(where, 120)}`);
  }
  return lines.join('\n');
}
