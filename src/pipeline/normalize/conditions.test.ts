import { describe, expect, it } from 'vitest';
import { compileMappingCondition, MAX_REGEX_LENGTH } from './conditions.js';
import type { MappingProblem } from './types.js';

const ev = {
  type: 'user.session.start',
  code: 4624,
  codeText: '4624',
  empty: '',
  nul: null,
  ok: true,
  tags: ['admin', 'vpn'],
  hops: [{ ip: '192.0.2.1' }, { ip: '198.51.100.2' }],
  obj: { a: 1 },
};

function compile(cond: unknown) {
  const problems: MappingProblem[] = [];
  const pred = compileMappingCondition(cond, { problems }, '/when');
  return { pred, problems };
}

function holds(cond: unknown): boolean {
  const { pred, problems } = compile(cond);
  expect(problems).toEqual([]);
  return pred!(ev);
}

describe('conditions', () => {
  it.each([
    [{ path: 'type', eq: 'user.session.start' }, true],
    [{ path: 'code', eq: 4624 }, true],
    [{ path: 'code', eq: '4624' }, false],
    [{ path: 'codeText', eq: 4624 }, false],
    [{ path: 'obj', eq: { a: 1 } }, true],
    [{ path: 'obj', ne: { a: 1 } }, false],
    [{ path: 'type', ne: 'x' }, true],
    [{ path: 'missing', ne: 'x' }, true],
    [{ path: 'code', in: [4624, 4625] }, true],
    [{ path: 'type', in: ['a', 'b'] }, false],
    [{ path: 'type', prefix: 'user.session.' }, true],
    [{ path: 'type', suffix: '.start' }, true],
    [{ path: 'type', contains: 'session' }, true],
    [{ path: 'code', contains: '46' }, false],
    [{ path: 'type', matches: '^user\\.(session|auth)\\.' }, true],
    [{ path: 'type', matches: '(?i)USER' }, true],
    [{ path: 'type', matches: '^session' }, false],
    [{ path: 'type', exists: true }, true],
    [{ path: 'empty', exists: true }, false],
    [{ path: 'nul', exists: false }, true],
    [{ path: 'missing', exists: false }, true],
    [{ path: 'ok', exists: true }, true],
    [{ path: 'code', gt: 4000 }, true],
    [{ path: 'codeText', gte: 4624 }, true],
    [{ path: 'code', lt: 4624 }, false],
    [{ path: 'code', lte: 4624 }, true],
    [{ path: 'type', gt: 1 }, false],
    [{ path: 'empty', lt: 1 }, false],
    // lists: any element
    [{ path: 'tags[*]', eq: 'vpn' }, true],
    [{ path: 'hops[*].ip', prefix: '198.51.' }, true],
    [{ path: 'hops[*].ip', eq: '203.0.113.1' }, false],
    [{ path: 'hops[*].ip', ne: '192.0.2.1' }, false],
    [{ path: 'hops[*].ip', ne: '203.0.113.1' }, true],
    [{ path: 'hops[*].port', exists: true }, false],
    [{ path: 'hops[*].port', exists: false }, true],
    [{ path: 'hops[*].ip', exists: false }, false],
    [{ path: 'tags', eq: ['admin', 'vpn'] }, true],
    // combinators
    [
      {
        all: [
          { path: 'code', eq: 4624 },
          { path: 'ok', eq: true },
        ],
      },
      true,
    ],
    [
      {
        all: [
          { path: 'code', eq: 4624 },
          { path: 'ok', eq: false },
        ],
      },
      false,
    ],
    [
      {
        all: [
          { path: 'code', eq: 4624 },
          { path: 'ok', eq: true },
          { path: 'type', exists: true },
        ],
      },
      true,
    ],
    [
      {
        any: [
          { path: 'code', eq: 1 },
          { path: 'ok', eq: true },
        ],
      },
      true,
    ],
    [
      {
        any: [
          { path: 'code', eq: 1 },
          { path: 'ok', eq: false },
          { path: 'x', exists: true },
        ],
      },
      false,
    ],
    [{ not: { path: 'code', eq: 1 } }, true],
    [{ all: [] }, true],
    [{ any: [] }, false],
  ])('%j -> %s', (cond, expected) => {
    expect(holds(cond)).toBe(expected);
  });

  it.each([
    [null, '/when', 'a condition is an object'],
    [{ eq: 1 }, '/when', 'needs a path'],
    [{ path: 'a' }, '/when', 'needs one operator'],
    [{ path: 'a', eq: 1, ne: 2 }, '/when', 'one operator per condition'],
    [{ path: 'a', equals: 1 }, '/when', 'unknown condition key "equals"'],
    [{ path: 'a..b', eq: 1 }, '/when/path', 'invalid path'],
    [{ path: 'a', in: 'x' }, '/when/in', 'must be a list'],
    [{ path: 'a', in: [{}] }, '/when/in', 'must list strings'],
    [{ path: 'a', prefix: 1 }, '/when/prefix', 'must be a string'],
    [{ path: 'a', matches: '(' }, '/when/matches', 'invalid regular expression'],
    [{ path: 'a', matches: '(?<=x)y' }, '/when/matches', 'invalid regular expression'],
    [{ path: 'a', matches: 'a'.repeat(MAX_REGEX_LENGTH + 1) }, '/when/matches', 'limited to 512'],
    [{ path: 'a', exists: 'yes' }, '/when/exists', 'true or false'],
    [{ path: 'a', gt: '5' }, '/when/gt', 'must be a number'],
    [{ all: {} }, '/when/all', 'must be a list'],
    [{ all: [{ path: 'a', eq: 1 }, { path: 'b' }] }, '/when/all/1', 'needs one operator'],
    [{ not: { any: [{ path: 'a', lt: 'x' }] } }, '/when/not/any/0/lt', 'must be a number'],
    [{ all: [], path: 'a' }, '/when', 'stand alone'],
  ])('reports %j at %s', (cond, at, message) => {
    const { pred, problems } = compile(cond);
    expect(pred).toBeUndefined();
    expect(problems).toHaveLength(1);
    expect(problems[0]!.at).toBe(at);
    expect(problems[0]!.message).toContain(message);
  });

  it('reports every problem of a combinator at once', () => {
    const { problems } = compile({
      any: [
        { path: 'a', gt: 'x' },
        { path: '', eq: 1 },
      ],
    });
    expect(problems.map((p) => p.at)).toEqual(['/when/any/0/gt', '/when/any/1/path']);
  });

  it('limits nesting', () => {
    let cond: unknown = { path: 'a', eq: 1 };
    for (let i = 0; i < 20; i++) cond = { not: cond };
    expect(compile(cond).problems[0]!.message).toContain('nest at most');
  });

  it('runs patterns that backtrack catastrophically in linear time (RE2)', () => {
    const { pred } = compile({ path: 's', matches: '^(a+)+$' });
    const started = performance.now();
    expect(pred!({ s: `${'a'.repeat(5000)}!` })).toBe(false);
    expect(performance.now() - started).toBeLessThan(1000);
  });
});

describe('conditions in the one form (docs/conditions.md)', () => {
  it.each([
    [{ field: 'type', op: 'prefix', value: 'user.session.' }, true],
    [{ field: 'codeText', op: 'gte', value: 4624 }, true],
    [{ field: 'hops[*].ip', op: 'cidr', value: '198.51.100.0/24' }, true],
    [{ field: 'hops[?ip=192.0.2.1].ip', op: 'exists' }, true],
    [{ field: 'tags', op: 'contains', value: 'vpn' }, true],
    [{ field: 'empty', op: 'not_exists' }, true],
    [
      {
        all: [
          { path: 'code', eq: 4624 },
          { field: 'type', op: 'regex', value: '^user\\.' },
        ],
      },
      true,
    ],
  ])('%j -> %s', (cond, expected) => {
    expect(holds(cond)).toBe(expected);
  });

  it('reports at the keys of the one form', () => {
    const { problems } = compile({
      any: [
        { field: 'a..b', op: 'eq', value: [1] },
        { field: 'a', op: 'matches', value: 'x' },
      ],
    });
    expect(problems.map((p) => p.at)).toEqual(['/when/any/0/field', '/when/any/0/value', '/when/any/1/op']);
    expect(problems[0]!.message).toContain('invalid path');
  });
});
