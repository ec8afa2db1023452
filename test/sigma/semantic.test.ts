// Every pinned SigmaHQ rule (third_party/sigma) that Weir's Sigma import accepts is checked for
// real, end to end: an event built from the rule's own detection (test/support/sigma/generate.ts,
// judged by the independent reference matcher, matcher.ts), written in the vendor's raw form
// (skeletons.ts) and pushed through the built-in mapping, must fire the compiled rule; and for
// each filter of the rule, the same event with values that make the filter hold must not.
// A failure names the rule, the raw event, the OCSF event and the compiled condition, so that
// it can be told whether the compiler, the logsource table or the mapping is wrong.
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { compileDetection } from '../../src/pipeline/detect/evaluate.js';
import { checkRule } from '../../src/pipeline/detect/rules.js';
import { compileSigma, SigmaError, type SigmaCompiled } from '../../src/pipeline/detect/sigma/compile.js';
import type { SigmaLogsource, SigmaVariant } from '../../src/pipeline/detect/sigma/logsource-types.js';
import { findLogsource } from '../../src/pipeline/detect/sigma/logsources.js';
import type { NormalizedRecord } from '../../src/pipeline/envelope.js';
import { generate, namedFields, type Generated, type Pad } from '../support/sigma/generate.js';
import { matches, parseDetection, type Json, type ParsedDetection, type SigmaEvent } from '../support/sigma/matcher.js';
import { logsourceKey, pinnedRules } from '../support/sigma/rules.js';
import {
  buildRaw,
  entryOf,
  mappingOf,
  rankVariants,
  variantHas,
  type Built,
  type Raw,
} from '../support/sigma/skeletons.js';

/**
 * At most this many accepted rules may go unchecked because no event could be built for them
 * (each is listed with the reason). Measured 1 on the pinned set: proc_creation_win_xwizard_
 * runwizard_com_object_exec.yml asks CommandLine to equal `RunWizard` and to hold a GUID, which
 * no value does. A few more are allowed for rules a later pin adds that cannot be satisfied as
 * written or whose only source is a text format not built here (Cisco ASA).
 */
const MAX_NOT_GENERATED = 5;

const show = (x: unknown) => JSON.stringify(x);

let seq = 0;
const record = (ocsf: Raw): NormalizedRecord => ({
  id: `0190a0b0-0000-7000-8000-${String(++seq).padStart(12, '0')}`,
  organization_id: 1,
  integration_id: 1,
  stream: 's',
  received_at: new Date(0).toISOString(),
  mapping_version_id: 'v',
  valid: true,
  ocsf,
});

interface Row {
  /** Compiled, but refused by the checks every rule definition goes through (the API's answer is 422). */
  overLimits: number;
  accepted: number;
  checked: number;
  fired: number;
  negatives: number;
  held: number;
  /** Checks through the other sources of the variant and the other variants (each also checks the negatives). */
  otherSources: number;
  notGenerated: number;
  failures: number;
}

interface Failure {
  path: string;
  /** What went wrong: the positive did not fire, a negative fired, the mapping refused the event. */
  kind: 'positive did not fire' | 'negative fired' | 'mapping failed';
  detail: string;
}

/** Sysmon's Hashes list around a generated `ALGO=value` part, so that the list stays a list of hashes. */
const HASHES_PAD: Pad = {
  before: 'MD5=00000000000000000000000000000000,',
  between: ',',
  after: ',SHA1=0000000000000000000000000000000000000000',
  fill: '0',
};
/** A registry value's full path: a key before the generated text, as Sysmon's TargetObject always has. */
const REGVALUE_PAD: Pad = { before: 'HKU\\S-1-5-21-1000\\SOFTWARE\\Sample\\x', between: 'x', after: 'x', fill: 'x' };

/** The pad of a field's generated values: inside a hashes list, other hashes; a registry value, under a key. */
function padFor(v: SigmaVariant) {
  return (field: string) => {
    const compose = entryOf(v, field)?.[1].compose;
    return compose === 'hashes' ? HASHES_PAD : compose === 'regvalue' ? REGVALUE_PAD : undefined;
  };
}

/** Can a plain value of the field occur in the variant's events (an enum value the variant marks `false` cannot)? */
function allowValue(v: SigmaVariant) {
  return (field: string, value: unknown) => {
    const values = entryOf(v, field)?.[1].values;
    return !values || typeof value !== 'string' || values[value.toLowerCase()] !== false;
  };
}

type Checkable = { v: SigmaVariant; g: Extract<Generated, { ok: true }>; built: Extract<Built, { ok: true }> };

/** The rule's events in one variant, and their raw form through its best source; a reason when there are none. */
function inVariant(v: SigmaVariant, doc: Json, det: ParsedDetection): Checkable | { reason: string } {
  const g = generate(doc, {
    parsed: det,
    allowField: (f) => variantHas(v, f),
    ...(v.eventIds ? { eventIds: v.eventIds } : {}),
    allowValue: allowValue(v),
    pad: padFor(v),
  });
  if (!g.ok) return { reason: g.reason };
  const built = buildRaw(v, g.positive, undefined, (e) => matches(det, e));
  if (!built.ok) return { reason: built.reason };
  // The rule's `when` (or the skeleton) may have set a Sigma field the rule tests: the reference decides again.
  if (!matches(det, built.effective))
    return {
      reason: `the mapping rule ${JSON.stringify(built.rule)} needs values the rule excludes: ${show(built.effective)}`,
    };
  return { v, g, built };
}

/**
 * The variants of the rule's logsource, best first (the one whose event ids and fields fit an
 * unrestricted event of the rule), each with its events or the reason it has none.
 */
function variantsOf(ls: SigmaLogsource, doc: Json, det: ParsedDetection): (Checkable | { reason: string })[] {
  // With several variants, an unrestricted event tells which fits best (its EventID, its fields).
  const free: Generated = ls.variants.length > 1 ? generate(doc, { parsed: det }) : { ok: false, reason: '' };
  const probe: SigmaEvent = free.ok ? free.positive : Object.fromEntries(namedFields(doc).map((f) => [f, 'x']));
  return rankVariants(ls, probe).map((v) => inVariant(v, doc, det));
}

/** Whether the compiled rule matches an OCSF event (a hit; a threshold rule's count is not this test's business). */
function detector(compiled: SigmaCompiled): (ocsf: Raw) => boolean {
  const d = compileDetection({
    fingerprint: 'f',
    rules: [{ id: 'r', name: 'r', version: 1, definition: compiled.definition }],
  });
  return (ocsf) => d.evaluate([record(ocsf)]).hits.length > 0;
}

const COLUMNS: [keyof Row, string][] = [
  ['overLimits', 'over limits'],
  ['accepted', 'accepted'],
  ['checked', 'checked'],
  ['fired', 'fired'],
  ['negatives', 'negatives'],
  ['held', 'held'],
  ['otherSources', 'other variants and sources checked'],
  ['notGenerated', 'not generated'],
  ['failures', 'failures'],
];

describe('every accepted SigmaHQ rule, end to end through the built-in mappings', () => {
  it('fires on an event built from its selection and not on one its filter excludes', () => {
    const rows = new Map<string, Row>();
    const failures: Failure[] = [];
    const notGenerated: { path: string; reason: string }[] = [];
    const overLimits: { path: string; reason: string }[] = [];
    const empty = (): Row => ({
      overLimits: 0,
      accepted: 0,
      checked: 0,
      fired: 0,
      negatives: 0,
      held: 0,
      otherSources: 0,
      notGenerated: 0,
      failures: 0,
    });
    const row = (key: string) => {
      let r = rows.get(key);
      if (!r) rows.set(key, (r = empty()));
      return r;
    };

    for (const rule of pinnedRules()) {
      let compiled: SigmaCompiled;
      try {
        compiled = compileSigma(rule.text);
      } catch (e) {
        if (e instanceof SigmaError) continue;
        throw e;
      }
      const ls = findLogsource(rule.logsource)!;
      const r = row(logsourceKey(rule.logsource));
      const problems = checkRule(compiled.definition);
      if (problems.length) {
        r.overLimits++;
        overLimits.push({ path: rule.path, reason: problems.map((p) => `${p.location}: ${p.message}`).join('; ') });
        continue;
      }
      r.accepted++;
      const doc = parse(rule.text) as Json;
      const det = parseDetection(doc.detection);
      const fires = detector(compiled);
      const fail = (kind: Failure['kind'], detail: string) => {
        r.failures++;
        failures.push({
          path: rule.path,
          kind,
          detail: `${detail}\n  compiled condition: ${show(compiled.definition.condition)}`,
        });
      };

      const variants = variantsOf(ls, doc, det);
      const gen = variants.find((x): x is Checkable => 'v' in x);
      if (!gen) {
        r.notGenerated++;
        notGenerated.push({ path: rule.path, reason: (variants[0] as { reason: string }).reason });
        continue;
      }
      const check = ({ v, g, built }: Checkable): boolean => {
        const mapping = mappingOf(built.source.mapping).compiled;
        const out = built.mapped ?? mapping.map(built.raw, { receivedAtMs: 0 });
        if (!out.ok) {
          fail(
            'mapping failed',
            `sigma event: ${show(g.positive)}\n  raw (${built.source.mapping}): ${show(built.raw)}\n  ${out.kind}: ${out.detail}`,
          );
          return false;
        }
        if (!fires(out.event)) {
          fail(
            'positive did not fire',
            `sigma event: ${show(g.positive)}\n  raw (${built.source.mapping}, rule ${JSON.stringify(built.rule)}): ${show(built.raw)}\n  ocsf: ${show(out.event)}`,
          );
          return false;
        }
        for (const n of g.negatives) {
          const nb = buildRaw(v, n.event, built.source, (e) => !matches(det, e));
          if (!nb.ok || matches(det, nb.effective)) continue;
          const no = nb.mapped ?? mapping.map(nb.raw, { receivedAtMs: 0 });
          if (!no.ok) {
            fail(
              'mapping failed',
              `negative (${n.filter}) sigma event: ${show(n.event)}\n  raw (${built.source.mapping}): ${show(nb.raw)}\n  ${no.kind}: ${no.detail}`,
            );
            continue;
          }
          r.negatives++;
          if (!fires(no.event)) r.held++;
          else
            fail(
              'negative fired',
              `filter ${n.filter} holds, sigma event: ${show(n.event)}\n  raw (${built.source.mapping}, rule ${JSON.stringify(nb.rule)}): ${show(nb.raw)}\n  ocsf: ${show(no.event)}`,
            );
        }
        return true;
      };

      r.checked++;
      if (check(gen)) r.fired++;
      // Every other way the rule can match: the variant's other sources that carry every field of
      // the event (the Security log's 4688 beside Sysmon 1), and the logsource's other variants.
      for (const x of variants) {
        if (!('v' in x)) continue;
        for (const source of x.v.sources) {
          if (x === gen && source === gen.built.source) continue;
          const built =
            source === x.built.source ? x.built : buildRaw(x.v, x.g.positive, source, (e) => matches(det, e));
          if (!built.ok || !matches(det, built.effective)) continue;
          r.otherSources++;
          check({ ...x, built });
        }
      }
    }

    const total = empty();
    const lines = [`logsource | ${COLUMNS.map(([, h]) => h).join(' | ')}`];
    for (const k of [...rows.keys()].sort()) {
      const x = rows.get(k)!;
      for (const [f] of COLUMNS) total[f] += x[f];
      lines.push(`${k} | ${COLUMNS.map(([f]) => x[f]).join(' | ')}`);
    }
    lines.push(`total | ${COLUMNS.map(([f]) => total[f]).join(' | ')}`);
    console.log(`Sigma rules end to end:\n${lines.join('\n')}`);
    if (overLimits.length)
      console.log(`Compiled but over the rule limits:\n${overLimits.map((x) => `${x.path}: ${x.reason}`).join('\n')}`);
    if (notGenerated.length)
      console.log(`Not generated:\n${notGenerated.map((x) => `${x.path}: ${x.reason}`).join('\n')}`);
    if (failures.length)
      console.log(`Failures:\n${failures.map((x) => `${x.path}: ${x.kind}\n  ${x.detail}`).join('\n')}`);

    expect(total.accepted).toBeGreaterThan(0);
    expect(notGenerated.length, notGenerated.map((x) => `${x.path}: ${x.reason}`).join('\n')).toBeLessThanOrEqual(
      MAX_NOT_GENERATED,
    );
    expect(
      failures.length,
      failures
        .slice(0, 20)
        .map((x) => `${x.path}: ${x.kind}\n  ${x.detail}`)
        .join('\n'),
    ).toBe(0);
  });
});
