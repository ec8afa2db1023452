import { describe, expect, it } from 'vitest';
import type { NormalizedRecord } from '../envelope.js';
import { compileRecordCondition, CONDITION_LIMITS, type RouteProblem } from './conditions.js';

function rec(ocsf: Record<string, unknown>, over: Partial<NormalizedRecord> = {}): NormalizedRecord {
  return {
    id: '0190a000-0000-7000-8000-000000000001',
    organization_id: 7,
    integration_id: 42,
    stream: 'audit',
    received_at: '2024-01-01T00:00:00Z',
    mapping_version_id: 'mv1',
    valid: true,
    ocsf,
    ...over,
  };
}

const EVENT = {
  class_uid: 3002,
  severity_id: 4,
  time: 1_700_000_000_000,
  message: 'User alice@example.com logged in',
  actor: { user: { name: 'alice', groups: ['admins', 'dev'] } },
  src_endpoint: { ip: '10.1.2.3' },
  dst_endpoint: { ip: '2001:db8::5' },
  observables: [
    { name: 'ip', value: '203.0.113.9' },
    { name: 'user', value: 'alice' },
  ],
  flag: false,
  nothing: null,
};

function check(cond: unknown, ocsf: Record<string, unknown> = EVENT, over: Partial<NormalizedRecord> = {}): boolean {
  const problems: RouteProblem[] = [];
  const pred = compileRecordCondition(cond, problems);
  expect(problems).toEqual([]);
  return pred!(rec(ocsf, over));
}

function problemsOf(cond: unknown): RouteProblem[] {
  const problems: RouteProblem[] = [];
  expect(compileRecordCondition(cond, problems)).toBeUndefined();
  return problems;
}

describe('route conditions: operators', () => {
  it('null matches everything', () => {
    expect(check(null)).toBe(true);
  });

  it('eq and ne are strict', () => {
    expect(check({ field: 'class_uid', op: 'eq', value: 3002 })).toBe(true);
    expect(check({ field: 'class_uid', op: 'eq', value: '3002' })).toBe(false);
    expect(check({ field: 'actor.user.name', op: 'eq', value: 'alice' })).toBe(true);
    expect(check({ field: 'flag', op: 'eq', value: false })).toBe(true);
    expect(check({ field: 'nothing', op: 'eq', value: null })).toBe(true);
    expect(check({ field: 'class_uid', op: 'ne', value: 3002 })).toBe(false);
    expect(check({ field: 'missing', op: 'ne', value: 1 })).toBe(true);
  });

  it('in and not_in', () => {
    expect(check({ field: 'severity_id', op: 'in', value: [3, 4, 5] })).toBe(true);
    expect(check({ field: 'severity_id', op: 'in', value: [1, 2] })).toBe(false);
    expect(check({ field: 'severity_id', op: 'not_in', value: [1, 2] })).toBe(true);
    expect(check({ field: 'severity_id', op: 'not_in', value: [4] })).toBe(false);
  });

  it('prefix, suffix, contains (string and list)', () => {
    expect(check({ field: 'message', op: 'prefix', value: 'User ' })).toBe(true);
    expect(check({ field: 'message', op: 'suffix', value: 'in' })).toBe(true);
    expect(check({ field: 'message', op: 'suffix', value: 'out' })).toBe(false);
    expect(check({ field: 'message', op: 'contains', value: 'logged' })).toBe(true);
    expect(check({ field: 'actor.user.groups', op: 'contains', value: 'admins' })).toBe(true);
    expect(check({ field: 'actor.user.groups', op: 'contains', value: 'adm' })).toBe(false);
    expect(check({ field: 'class_uid', op: 'prefix', value: '30' })).toBe(false);
  });

  it('regex runs on RE2, unanchored', () => {
    expect(check({ field: 'message', op: 'regex', value: '[a-z]+@example\\.com' })).toBe(true);
    expect(check({ field: 'message', op: 'regex', value: '^logged' })).toBe(false);
    expect(check({ field: 'class_uid', op: 'regex', value: '3' })).toBe(false);
    // Backreferences are not RE2: refused at validation, not at run time.
    expect(problemsOf({ field: 'message', op: 'regex', value: '(a)\\1' })[0]!.path).toBe('condition.value');
  });

  it('exists and not_exists (null, "" and [] count as absent)', () => {
    expect(check({ field: 'actor.user.name', op: 'exists' })).toBe(true);
    expect(check({ field: 'nothing', op: 'exists' })).toBe(false);
    expect(check({ field: 'actor.user.uid', op: 'not_exists' })).toBe(true);
    expect(check({ field: 'actor.user.name', op: 'not_exists', value: null })).toBe(false);
    expect(check({ field: 'e', op: 'exists' }, { e: '' })).toBe(false);
    expect(check({ field: 'e', op: 'not_exists' }, { e: [] })).toBe(true);
    expect(check({ field: 'e', op: 'exists' }, { e: 0 })).toBe(true);
  });

  it('cidr: one range, a list, IPv6, a bare address, non-IP values', () => {
    expect(check({ field: 'src_endpoint.ip', op: 'cidr', value: '10.0.0.0/8' })).toBe(true);
    expect(check({ field: 'src_endpoint.ip', op: 'cidr', value: ['192.168.0.0/16', '172.16.0.0/12'] })).toBe(false);
    expect(check({ field: 'dst_endpoint.ip', op: 'cidr', value: ['10.0.0.0/8', '2001:db8::/32'] })).toBe(true);
    expect(check({ field: 'src_endpoint.ip', op: 'cidr', value: '10.1.2.3' })).toBe(true);
    expect(check({ field: 'message', op: 'cidr', value: '0.0.0.0/0' })).toBe(false);
    expect(check({ field: 'ip', op: 'cidr', value: '10.0.0.0/8' }, { ip: '::ffff:10.9.9.9' })).toBe(true);
    expect(check({ field: 'ip', op: 'cidr', value: '127.0.0.0/8' }, { ip: '127.1' })).toBe(false);
  });

  it('gt, gte, lt, lte compare numbers and numeric text (one rule with mappings, docs/conditions.md)', () => {
    expect(check({ field: 'severity_id', op: 'gt', value: 3 })).toBe(true);
    expect(check({ field: 'severity_id', op: 'gte', value: 4 })).toBe(true);
    expect(check({ field: 'severity_id', op: 'lt', value: 4 })).toBe(false);
    expect(check({ field: 'severity_id', op: 'lte', value: 4 })).toBe(true);
    expect(check({ field: 's', op: 'gt', value: 1 }, { s: '5' })).toBe(true);
    expect(check({ field: 's', op: 'gt', value: 1 }, { s: 'five' })).toBe(false);
    expect(check({ field: 's', op: 'lt', value: 1 }, { s: '' })).toBe(false);
    expect(check({ field: 's', op: 'eq', value: 5 }, { s: '5' })).toBe(false);
  });

  it('[n] and [*] paths: any element matches; negatives hold when none does', () => {
    expect(check({ field: 'observables[*].value', op: 'cidr', value: '203.0.113.0/24' })).toBe(true);
    expect(check({ field: 'observables[*].name', op: 'eq', value: 'user' })).toBe(true);
    expect(check({ field: 'observables[*].name', op: 'ne', value: 'user' })).toBe(false);
    expect(check({ field: 'observables[*].name', op: 'ne', value: 'host' })).toBe(true);
    expect(check({ field: 'observables[1].name', op: 'eq', value: 'user' })).toBe(true);
    expect(check({ field: 'observables[0].name', op: 'eq', value: 'user' })).toBe(false);
    expect(check({ field: 'observables[*].uid', op: 'exists' })).toBe(false);
    expect(check({ field: 'observables[*].uid', op: 'not_exists' })).toBe(true);
  });

  it('envelope fields', () => {
    expect(check({ field: 'envelope.integration_id', op: 'eq', value: 42 })).toBe(true);
    expect(check({ field: 'envelope.stream', op: 'in', value: ['audit', 'signin'] })).toBe(true);
    expect(check({ field: 'envelope.organization_id', op: 'eq', value: 8 })).toBe(false);
    expect(check({ field: 'envelope.valid', op: 'eq', value: false }, EVENT, { valid: false })).toBe(true);
  });

  it('all, any, not', () => {
    const hi = { field: 'severity_id', op: 'gte', value: 4 };
    const auth = { field: 'class_uid', op: 'eq', value: 3002 };
    const net = { field: 'class_uid', op: 'eq', value: 4001 };
    expect(check({ all: [hi, auth] })).toBe(true);
    expect(check({ all: [hi, auth, net] })).toBe(false);
    expect(check({ any: [net, auth] })).toBe(true);
    expect(check({ any: [net, { not: auth }, { not: hi }] })).toBe(false);
    expect(check({ not: { any: [net] } })).toBe(true);
    expect(check({ all: [auth] })).toBe(true);
  });

  it('does not read inherited members', () => {
    expect(check({ field: 'toString', op: 'exists' }, {})).toBe(false);
    expect(check({ field: 'a.constructor', op: 'exists' }, { a: {} })).toBe(false);
  });
});

describe('route conditions: validation', () => {
  it('names the path of every problem', () => {
    const problems = problemsOf({
      all: [
        { field: 'class_uid', op: 'eq', value: 1 },
        { field: 'x', op: 'between', value: 1 },
        { field: 'y', op: 'in', value: 'abc' },
        {
          any: [
            { field: 'a..b', op: 'exists' },
            { field: 'z', op: 'cidr', value: ['10.0.0.0/8', 'nope'] },
          ],
        },
      ],
    });
    expect(problems.map((p) => p.path)).toEqual([
      'condition.all[1].op',
      'condition.all[2].value',
      'condition.all[3].any[0].field',
      'condition.all[3].any[1].value',
    ]);
    expect(problems[3]!.message).toContain('item 1');
    for (const p of problems) expect(typeof p.message).toBe('string');
  });

  it('refuses malformed nodes', () => {
    expect(problemsOf('class_uid = 1')[0]!.path).toBe('condition');
    expect(problemsOf({ all: [] })[0]!.path).toBe('condition.all');
    expect(problemsOf({ all: [{ field: 'a', op: 'exists' }], any: [] })[0]!.message).toMatch(/stand alone/);
    expect(problemsOf({ field: 'a', op: 'eq', value: 1, extra: true })[0]!.path).toBe('condition.extra');
    expect(problemsOf({ op: 'eq', value: 1 })[0]!.path).toBe('condition.field');
    expect(problemsOf({ field: 'a', op: 'eq', value: { x: 1 } })[0]!.path).toBe('condition.value');
    expect(problemsOf({ field: 'a', op: 'exists', value: true })[0]!.path).toBe('condition.value');
    expect(problemsOf({ field: 'a', op: 'gt', value: '5' })[0]!.path).toBe('condition.value');
    expect(problemsOf({ field: 'envelope.tenant', op: 'exists' })[0]!.message).toMatch(/envelope\.stream/);
    expect(problemsOf({ field: 'a[?x=1].b', op: 'exists' })[0]!.path).toBe('condition.field');
    expect(problemsOf({ field: 'a', op: 'regex', value: 'x'.repeat(CONDITION_LIMITS.regexLength + 1) })).toHaveLength(
      1,
    );
  });

  it('limits depth and size', () => {
    let deep: unknown = { field: 'a', op: 'exists' };
    for (let i = 0; i < CONDITION_LIMITS.depth; i++) deep = { not: deep };
    expect(problemsOf(deep)[0]!.message).toMatch(/nest at most 16/);
    const wide = { any: Array.from({ length: CONDITION_LIMITS.nodes }, () => ({ field: 'a', op: 'exists' })) };
    const problems = problemsOf(wide);
    expect(problems).toHaveLength(1);
    expect(problems[0]!.message).toMatch(/at most 200 nodes/);
    let ok: unknown = { field: 'a', op: 'exists' };
    for (let i = 0; i < CONDITION_LIMITS.depth - 1; i++) ok = { not: ok };
    expect(compileRecordCondition(ok, [])).toBeDefined();
  });
});
