// Detection rules in the pass: definitions checked whole, rules indexed by class, hits per
// event, per group and per threshold window, vendor findings picked out, and the Detection
// Finding a match emits valid against the official OCSF schema.
import { describe, expect, it } from 'vitest';
import { officialCatalog } from '../../../test/support/ocsf-official.js';
import { createValidator } from '../../ocsf/index.js';
import type { NormalizedRecord } from '../envelope.js';
import { compileDetection, MAX_FINDINGS_PER_RULE_BATCH, vendorFinding } from './evaluate.js';
import { ruleFinding } from './finding.js';
import { detectHook } from './live.js';
import { checkRule, requiredClasses, type RuleSpec } from './rules.js';

const T0 = Date.parse('2026-11-26T10:00:00Z');
let seq = 0;
function rec(ocsf: Record<string, unknown>): NormalizedRecord {
  return {
    id: `0190a0b0-0000-7000-8000-${String(++seq).padStart(12, '0')}`,
    organization_id: 1,
    integration_id: 1,
    stream: 's',
    received_at: new Date(T0).toISOString(),
    mapping_version_id: 'v',
    valid: true,
    ocsf,
  };
}
const failedLogin = (user: string, minute: number) =>
  rec({
    class_uid: 3002,
    activity_id: 1,
    status_id: 2,
    time: T0 + minute * 60_000,
    user: { name: user },
    src_endpoint: { ip: '203.0.113.9' },
  });
const bruteForce: RuleSpec = {
  id: 'r-bf',
  name: 'Brute force',
  version: 3,
  definition: {
    condition: {
      all: [
        { field: 'class_uid', op: 'eq', value: 3002 },
        { field: 'status_id', op: 'eq', value: 2 },
      ],
    },
    severity_id: 4,
    group_by: ['user.name'],
    threshold: { count: 10, window_seconds: 300 },
    mitre: { tactics: ['TA0006'], techniques: ['T1110.001'] },
  },
};

describe('rule definitions', () => {
  it('are checked whole, each problem located, unknown fields with the closest name', () => {
    const problems = checkRule({
      condition: { field: 'user.nmae', op: 'eq', value: 'x' },
      severity_id: 9,
      group_by: ['observables[*].value', 'src_endpoint.ipp'],
      threshold: { count: 0, window_seconds: 999_999_999 },
      mitre: { tactics: ['credential access'] },
      extra: 1,
    });
    expect(problems.map((p) => p.location).sort()).toEqual(
      [
        'definition.condition.field',
        'definition.extra',
        'definition.group_by[0]',
        'definition.group_by[1]',
        'definition.mitre.tactics[0]',
        'definition.severity_id',
        'definition.threshold.count',
        'definition.threshold.window_seconds',
      ].sort(),
    );
    expect(problems.find((p) => p.location === 'definition.condition.field')?.closest).toBe('user.name');
    expect(checkRule(bruteForce.definition)).toEqual([]);
  });

  it('name the classes they can match', () => {
    expect([...requiredClasses(bruteForce.definition.condition)!]).toEqual([3002]);
    expect(requiredClasses({ field: 'class_uid', op: 'in', value: [1007, 4001] })).toEqual(new Set([1007, 4001]));
    expect(requiredClasses({ any: [{ field: 'class_uid', op: 'eq', value: 1 }] })).toBeNull();
  });
});

describe('evaluating a batch', () => {
  it('counts a threshold rule per group and tumbling window of event time', () => {
    const d = compileDetection({ fingerprint: 'f', rules: [bruteForce] });
    const batch = [
      ...Array.from({ length: 12 }, (_, i) => failedLogin('alice', i % 5)),
      failedLogin('alice', 7),
      failedLogin('bob', 1),
      rec({ class_uid: 3002, status_id: 1, time: T0, user: { name: 'alice' } }),
    ];
    const out = d.evaluate(batch);
    const byKey = Object.fromEntries(
      out.hits.map((h) => [`${h.group_key}@${new Date(h.window_start!).toISOString().slice(11, 16)}`, h.count]),
    );
    expect(byKey).toEqual({ '["alice"]@10:00': 12, '["alice"]@10:05': 1, '["bob"]@10:00': 1 });
    const alice = out.hits.find((h) => h.count === 12)!;
    expect(alice).toMatchObject({
      rule_id: 'r-bf',
      version: 3,
      group: { 'user.name': 'alice' },
      first_time: T0,
      last_time: T0 + 4 * 60_000,
    });
    expect(alice.event_ids).toHaveLength(12);
  });

  it('tests an event only against the rules of its class', () => {
    const network: RuleSpec = {
      id: 'r-net',
      name: 'net',
      version: 1,
      definition: { condition: { field: 'class_uid', op: 'eq', value: 4001 }, severity_id: 2 },
    };
    const out = compileDetection({ fingerprint: 'f', rules: [bruteForce, network] }).evaluate([
      failedLogin('a', 0),
      rec({ class_uid: 4001, time: T0 }),
    ]);
    expect(out.tested).toBe(2);
    expect(out.hits.map((h) => h.rule_id).sort()).toEqual(['r-bf', 'r-net']);
  });

  it('makes one hit per event without threshold or suppression, capped per batch, and one per group with suppression', () => {
    const plain: RuleSpec = {
      id: 'r-p',
      name: 'p',
      version: 1,
      definition: { condition: { field: 'status_id', op: 'eq', value: 2 }, severity_id: 3 },
    };
    const events = Array.from({ length: MAX_FINDINGS_PER_RULE_BATCH + 5 }, (_, i) => failedLogin(i % 2 ? 'a' : 'b', 0));
    const out = compileDetection({ fingerprint: 'f', rules: [plain] }).evaluate(events);
    expect(out.hits).toHaveLength(MAX_FINDINGS_PER_RULE_BATCH + 1);
    expect(out.hits.at(-1)!.count).toBe(5);
    expect(out.hits.reduce((n, h) => n + h.count, 0)).toBe(events.length);
    const suppressed = compileDetection({
      fingerprint: 'f',
      rules: [{ ...plain, definition: { ...plain.definition, group_by: ['user.name'], suppression_seconds: 3600 } }],
    }).evaluate(events);
    expect(suppressed.hits.map((h) => [h.group_key, h.count])).toEqual([
      ['["b"]', 53],
      ['["a"]', 52],
    ]);
  });

  it('picks out vendor findings by their uid', () => {
    const f = vendorFinding(
      rec({ class_uid: 2004, severity_id: 5, time: T0, finding_info: { uid: 'cs-123', title: 'Malware' } }),
    );
    expect(f).toMatchObject({ uid: 'cs-123', title: 'Malware', severity_id: 5, class_uid: 2004 });
    expect(vendorFinding(rec({ class_uid: 2002, finding_info: { uid: 'v' } }))).toBeUndefined();
    const out = compileDetection({ fingerprint: 'f', rules: [] }).evaluate([
      rec({ class_uid: 2004, finding_info: { uid: 'x' } }),
      failedLogin('a', 0),
    ]);
    expect(out.findings.map((x) => x.uid)).toEqual(['x']);
    // An organization without rules still has its vendor findings picked out.
    expect(
      detectHook(77, { fingerprint: '', rules: [] })
        ?.evaluate([rec({ class_uid: 2004, finding_info: { uid: 'y' } })])
        .findings.map((x) => x.uid),
    ).toEqual(['y']);
  });
});

describe('the Detection Finding of a match', () => {
  it('is valid OCSF 1.8.0 and says what fired, on what, with ATT&CK', () => {
    const hit = compileDetection({ fingerprint: 'f', rules: [bruteForce] }).evaluate(
      Array.from({ length: 10 }, () => failedLogin('alice', 1)),
    ).hits[0]!;
    const finding = ruleFinding({
      uid: 'det-1',
      rule: bruteForce,
      count: hit.count,
      event_ids: hit.event_ids,
      first_time: hit.first_time,
      last_time: hit.last_time,
      group: hit.group,
      sample: hit.sample,
      at: T0 + 120_000,
      weirVersion: '0.1.0',
    });
    expect(createValidator(officialCatalog()).validate(finding)).toEqual([]);
    expect(finding).toMatchObject({
      class_uid: 2004,
      type_uid: 200401,
      severity_id: 4,
      count: 10,
      finding_info: {
        uid: 'det-1',
        title: 'Brute force',
        analytic: { uid: 'r-bf', type_id: 1, version: '3' },
        related_events_count: 10,
        attacks: [{ technique: { uid: 'T1110' }, sub_technique: { uid: 'T1110.001' } }, { tactic: { uid: 'TA0006' } }],
      },
    });
    expect(String(finding.message)).toContain('user.name=alice');
  });
});
