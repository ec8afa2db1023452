import { describe, expect, it } from 'vitest';
import { compileCondition, type CompileOptions } from './compile.js';
import type { ConditionProblem, FieldReader } from './types.js';

// A reader of dotted keys, `[*]` at the end collecting a list: enough to test the language
// apart from either caller's path syntax.
const fields: FieldReader<Record<string, unknown>> = {
  describe: 'a test path',
  field(path) {
    if (path.startsWith('bad')) return { problem: 'no such field', closest: 'good' };
    const many = path.endsWith('[*]');
    const keys = (many ? path.slice(0, -3) : path).split('.');
    return {
      many,
      get: (src) => {
        let v: unknown = src;
        for (const k of keys) v = typeof v === 'object' && v !== null ? (v as Record<string, unknown>)[k] : undefined;
        return many && (!Array.isArray(v) || v.length === 0) ? undefined : v;
      },
    };
  },
};

const EVENT = {
  n: 5,
  text: '42',
  word: 'five',
  empty: '',
  none: [],
  ips: ['10.0.0.1', '192.0.2.7'],
  tags: ['a', 'b'],
  nul: null,
};

function compile(cond: unknown, opts: Partial<CompileOptions<Record<string, unknown>>> = {}) {
  const problems: ConditionProblem[] = [];
  const pred = compileCondition(cond, { fields, ...opts }, (p) => problems.push(p));
  return { pred, problems };
}

function holds(cond: unknown, oldForm = false): boolean {
  const { pred, problems } = compile(cond, { oldForm });
  expect(problems).toEqual([]);
  return pred!(EVENT);
}

describe('the one condition language', () => {
  it.each([
    [{ field: 'n', op: 'gt', value: 4 }, true],
    [{ field: 'text', op: 'gte', value: 42 }, true],
    [{ field: 'word', op: 'lt', value: 100 }, false],
    [{ field: 'empty', op: 'lte', value: 0 }, false],
    [{ field: 'text', op: 'eq', value: 42 }, false],
    [{ field: 'empty', op: 'exists' }, false],
    [{ field: 'none', op: 'not_exists' }, true],
    [{ field: 'nul', op: 'exists' }, false],
    [{ field: 'n', op: 'exists' }, true],
    [{ field: 'tags', op: 'contains', value: 'a' }, true],
    [{ field: 'word', op: 'contains', value: 'iv' }, true],
    [{ field: 'ips[*]', op: 'cidr', value: '192.0.2.0/24' }, true],
    [{ field: 'ips[*]', op: 'not_in', value: ['10.0.0.1'] }, false],
    [{ field: 'missing[*]', op: 'ne', value: 'x' }, true],
    [{ field: 'missing[*]', op: 'eq', value: 'x' }, false],
    [{ field: 'word', op: 'regex', value: 'i.e' }, true],
    [{ any: [{ field: 'n', op: 'eq', value: 1 }, { not: { field: 'n', op: 'eq', value: 1 } }] }, true],
  ])('%j -> %s', (cond, expected) => {
    expect(holds(cond)).toBe(expected);
    expect(holds(cond, true)).toBe(expected);
  });

  it('reads the old mapping form only where asked, as its translation', () => {
    const pairs: [unknown, unknown][] = [
      [
        { path: 'word', matches: '^f' },
        { field: 'word', op: 'regex', value: '^f' },
      ],
      [
        { path: 'empty', exists: false },
        { field: 'empty', op: 'not_exists' },
      ],
      [
        { path: 'n', exists: true },
        { field: 'n', op: 'exists' },
      ],
      [
        { path: 'text', lt: 50 },
        { field: 'text', op: 'lt', value: 50 },
      ],
      [
        { path: 'tags', contains: 'b' },
        { field: 'tags', op: 'contains', value: 'b' },
      ],
    ];
    for (const [old, one] of pairs) expect(holds(old, true)).toBe(holds(one));
    expect(compile({ path: 'n', eq: 5 }).problems[0]).toMatchObject({
      at: ['path'],
      message: expect.stringContaining('unknown key'),
    });
  });

  it('keeps the old form lenient and the one form strict', () => {
    expect(holds({ path: 'tags', eq: ['a', 'b'] }, true)).toBe(true);
    expect(compile({ field: 'tags', op: 'eq', value: ['a', 'b'] }, { oldForm: true }).problems[0]).toMatchObject({
      at: ['value'],
    });
    expect(holds({ all: [] }, true)).toBe(true);
    expect(holds({ any: [] }, true)).toBe(false);
    expect(compile({ all: [] }).problems[0]).toMatchObject({
      at: ['all'],
      message: 'all needs a non-empty list of conditions',
    });
  });

  it('locates every problem from the root, in the form it was written', () => {
    const { pred, problems } = compile(
      {
        all: [
          { field: 'bad.x', op: 'eq', value: {} },
          { path: 'n', gt: 'x' },
          { any: [{ field: 'n', op: 'nope' }] },
          { field: 'n', op: 'regex', value: '(' },
        ],
      },
      { oldForm: true },
    );
    expect(pred).toBeUndefined();
    expect(problems.map((p) => p.at.join('/'))).toEqual([
      'all/0/field',
      'all/0/value',
      'all/1/gt',
      'all/2/any/0/op',
      'all/3/value',
    ]);
    expect(problems[0]).toMatchObject({ message: 'no such field', closest: 'good' });
    expect(problems[3]!.message).toMatch(/^op must be one of eq, ne/);
    expect(problems[4]!.message).toMatch(/RE2/);
  });

  it('compares text ignoring case where ignore_case says so, and only text', () => {
    const ev = { name: 'PowerShell.EXE', tags: ['Admin', 'ops'], n: 5 };
    const on = (cond: unknown) => {
      const { pred, problems } = compile(cond);
      expect(problems).toEqual([]);
      return pred!(ev);
    };
    const cases: [string, unknown, boolean][] = [
      ['eq', 'powershell.exe', true],
      ['ne', 'POWERSHELL.EXE', false],
      ['in', ['cmd.exe', 'POWERSHELL.exe'], true],
      ['not_in', ['cmd.exe'], true],
      ['prefix', 'power', true],
      ['suffix', '.Exe', true],
      ['contains', 'SHELL', true],
      ['regex', '^power.*exe$', true],
    ];
    for (const [op, value, expected] of cases) {
      expect(on({ field: 'name', op, value, ignore_case: true }), `${op} ignoring case`).toBe(expected);
      // Without the flag, the same tests are case-sensitive (the negative ones flip).
      expect(on({ field: 'name', op, value }), `${op} with case`).toBe(op === 'ne' || op === 'not_in');
    }
    expect(on({ field: 'tags', op: 'contains', value: 'admin', ignore_case: true })).toBe(true);
    expect(on({ field: 'name', op: 'eq', value: 'powershell.exe', ignore_case: false })).toBe(false);
    expect(compile({ field: 'n', op: 'gt', value: 1, ignore_case: true }).problems[0]).toMatchObject({
      at: ['ignore_case'],
      message: expect.stringContaining('not gt'),
    });
    expect(compile({ field: 'n', op: 'eq', value: 5, ignore_case: true }).problems[0]).toMatchObject({
      at: ['ignore_case'],
      message: expect.stringContaining('must be a string'),
    });
    expect(compile({ field: 'n', op: 'eq', value: 'x', ignore_case: 'yes' }).problems[0]).toMatchObject({
      at: ['ignore_case'],
    });
    expect(compile({ path: 'n', eq: 'x', ignore_case: true }, { oldForm: true }).problems.length).toBeGreaterThan(0);
  });

  it('needs a field, names what one is', () => {
    expect(compile({ op: 'exists' }).problems[0]).toMatchObject({
      at: ['field'],
      message: 'field is required (a test path)',
    });
  });
});
