// The query language: the text form compiles to the one condition tree, errors say where, and
// a query is checked whole (time range, fields against OCSF with the closest name, limits).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AppError } from '../../../core/errors.js';
import { planQuery, type QueryInput } from './definition.js';
import { parseQueryText, QueryTextError } from '../../../pipeline/conditions/text.js';

const tree = (text: string) => parseQueryText(text).condition;
const NOW = new Date('2026-11-26T12:00:00Z');
const plan = (input: QueryInput) => planQuery(input, { now: NOW, maxRangeDays: 3650, maxLimit: 10_000 });
function problems(input: QueryInput) {
  try {
    plan(input);
  } catch (e) {
    if (e instanceof AppError)
      return (
        e.details as {
          errors: { location: string; message: string; closest?: string; line?: number; column?: number }[];
        }
      ).errors;
    throw e;
  }
  throw new Error('the query was accepted');
}

describe('the text form', () => {
  it('compiles the example of the issue to the tree', () => {
    expect(tree('class_uid = 3002 and status_id = 2 and actor.user.name ~ "adm*"')).toEqual({
      all: [
        { field: 'class_uid', op: 'eq', value: 3002 },
        { field: 'status_id', op: 'eq', value: 2 },
        { field: 'actor.user.name', op: 'prefix', value: 'adm' },
      ],
    });
  });

  it('gives and precedence over or, with parentheses and not', () => {
    expect(tree('a = 1 or b = 2 and not (c = 3 or d exists)')).toEqual({
      any: [
        { field: 'a', op: 'eq', value: 1 },
        {
          all: [
            { field: 'b', op: 'eq', value: 2 },
            {
              not: {
                any: [
                  { field: 'c', op: 'eq', value: 3 },
                  { field: 'd', op: 'exists' },
                ],
              },
            },
          ],
        },
      ],
    });
  });

  it('reads every operator', () => {
    expect(tree('x != "a"')).toEqual({ field: 'x', op: 'ne', value: 'a' });
    expect(tree('x >= 4 and y < -1.5')).toEqual({
      all: [
        { field: 'x', op: 'gte', value: 4 },
        { field: 'y', op: 'lt', value: -1.5 },
      ],
    });
    expect(tree("x in (1, 'two', true, null)")).toEqual({ field: 'x', op: 'in', value: [1, 'two', true, null] });
    expect(tree('x not in (1)')).toEqual({ field: 'x', op: 'not_in', value: [1] });
    expect(tree('x missing')).toEqual({ field: 'x', op: 'not_exists' });
    expect(tree('x not exists')).toEqual({ field: 'x', op: 'not_exists' });
    expect(tree('x contains "ad"')).toEqual({ field: 'x', op: 'contains', value: 'ad' });
    expect(tree('x startswith "ad" and y endswith "z"')).toEqual({
      all: [
        { field: 'x', op: 'prefix', value: 'ad' },
        { field: 'y', op: 'suffix', value: 'z' },
      ],
    });
    expect(tree('x =~ "^a.+b$"')).toEqual({ field: 'x', op: 'regex', value: '^a.+b$' });
    expect(tree('src_endpoint.ip cidr 10.0.0.0/8')).toEqual({
      field: 'src_endpoint.ip',
      op: 'cidr',
      value: '10.0.0.0/8',
    });
    expect(tree('src_endpoint.ip cidr ("10.0.0.0/8", 192.168.0.0/16)')).toEqual({
      field: 'src_endpoint.ip',
      op: 'cidr',
      value: ['10.0.0.0/8', '192.168.0.0/16'],
    });
    expect(tree('observables[*].value = alice and unmapped["x.y"] = 1')).toEqual({
      all: [
        { field: 'observables[*].value', op: 'eq', value: 'alice' },
        { field: 'unmapped["x.y"]', op: 'eq', value: 1 },
      ],
    });
  });

  it('turns a glob into the simplest operator that says it', () => {
    expect(tree('x ~ "*adm*"')).toEqual({ field: 'x', op: 'contains', value: 'adm' });
    expect(tree('x ~ "*adm"')).toEqual({ field: 'x', op: 'suffix', value: 'adm' });
    expect(tree('x ~ adm')).toEqual({ field: 'x', op: 'eq', value: 'adm' });
    expect(tree('x ~ "a?m*.x"')).toEqual({ field: 'x', op: 'regex', value: '^a.m.*\\.x$' });
    expect(tree('x ~ "*"')).toEqual({ field: 'x', op: 'exists' });
    expect(tree('x !~ "adm*"')).toEqual({ not: { field: 'x', op: 'prefix', value: 'adm' } });
  });

  it('reads quotes, escapes and keywords in any case', () => {
    expect(tree('x = "say \\"hi\\"" AND y = \'it\\\'s\' OR z = TRUE')).toEqual({
      any: [
        {
          all: [
            { field: 'x', op: 'eq', value: 'say "hi"' },
            { field: 'y', op: 'eq', value: "it's" },
          ],
        },
        { field: 'z', op: 'eq', value: true },
      ],
    });
    expect(tree('x = a && y = b || z = c')).toEqual({
      any: [
        {
          all: [
            { field: 'x', op: 'eq', value: 'a' },
            { field: 'y', op: 'eq', value: 'b' },
          ],
        },
        { field: 'z', op: 'eq', value: 'c' },
      ],
    });
  });

  it('says where a query breaks', () => {
    const at = (text: string) => {
      try {
        parseQueryText(text);
      } catch (e) {
        if (e instanceof QueryTextError) return e.problem;
      }
      throw new Error('parsed');
    };
    expect(at('class_uid = ')).toMatchObject({
      offset: 12,
      line: 1,
      column: 13,
      message: 'expected a value, found the end of the query',
    });
    expect(at('class_uid = 1 and\n (x = 2')).toMatchObject({
      line: 2,
      column: 8,
      message: 'expected ")", found the end of the query',
    });
    expect(at('x = "open')).toMatchObject({ offset: 4, message: 'a string is not closed' });
    expect(at('x > "a"')).toMatchObject({ offset: 4, message: '> compares with a number' });
    expect(at('x = 1 y = 2')).toMatchObject({
      offset: 6,
      message: 'expected "and", "or" or the end of the query, found "y"',
    });
    expect(at('and = 1')).toMatchObject({ offset: 0, message: 'expected a field name, found "and"' });
    expect(at('x = 1 # y')).toMatchObject({ offset: 6, message: 'unexpected character "#"' });
    expect(at('')).toMatchObject({ message: 'the query is empty' });
  });

  it('never throws anything but a QueryTextError, whatever the text', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 80 }), (s) => {
        try {
          parseQueryText(s);
        } catch (e) {
          expect(e).toBeInstanceOf(QueryTextError);
        }
      }),
      { numRuns: 2_000 },
    );
  });
});

describe('a query', () => {
  it('defaults to the last 24 hours, newest first, 100 rows', () => {
    const p = plan({});
    expect(p.to).toEqual(NOW);
    expect(NOW.getTime() - p.from.getTime()).toBe(86_400_000);
    expect(p.sort).toEqual([{ field: 'time', order: 'desc' }]);
    expect(p.limit).toBe(100);
    expect(p.condition).toBeNull();
  });

  it('reads relative and absolute ranges', () => {
    expect(plan({ time: { last: '15m' } }).from).toEqual(new Date(NOW.getTime() - 900_000));
    const p = plan({ time: { from: 'now-7d', to: 'now-1d' } });
    expect(p.from).toEqual(new Date(NOW.getTime() - 7 * 86_400_000));
    expect(p.to).toEqual(new Date(NOW.getTime() - 86_400_000));
    expect(plan({ time: { from: '2026-11-20T08:00:00+01:00', to: '2026-11-21T00:00:00Z' } }).from).toEqual(
      new Date('2026-11-20T07:00:00Z'),
    );
  });

  it('refuses a bad range, each problem located', () => {
    expect(problems({ time: { from: '2026-11-20' } })).toEqual([expect.objectContaining({ location: 'time.from' })]);
    expect(problems({ time: { last: '3 days' } })).toEqual([expect.objectContaining({ location: 'time.last' })]);
    expect(problems({ time: { from: 'now-1h', to: 'now-2h' } })).toEqual([
      { location: 'time', message: 'from must be before to' },
    ]);
  });

  it('refuses an unknown field with the closest known name, in the text at its position', () => {
    const [p] = problems({ query: 'class_uid = 3002 and\n  actor.user.nmae = "x"' });
    expect(p).toMatchObject({ location: 'query', line: 2, column: 3, closest: 'actor.user.name' });
    const [w] = problems({ where: { field: 'clas_uid', op: 'eq', value: 1 } });
    expect(w).toMatchObject({ location: 'where.field', closest: 'class_uid' });
    expect(
      problems({ fields: ['time', 'severty'], sort: [{ field: 'actor.usr.name' }] }).map((x) => [
        x.location,
        x.closest,
      ]),
    ).toEqual([
      ['fields[1]', 'severity'],
      ['sort[0].field', 'actor.user.name'],
    ]);
  });

  it('checks aggregations', () => {
    const found = problems({
      time: { last: '30d' },
      aggregations: [
        { type: 'count_by', fields: ['a', 'b', 'c', 'd'] },
        { type: 'histogram', interval: '1s' },
        { type: 'top', field: 'actor.user.nam' },
      ],
    });
    expect(found.map((x) => x.location)).toEqual(
      expect.arrayContaining(['aggregations[0].fields', 'aggregations[1].interval', 'aggregations[2].field']),
    );
    expect(
      plan({
        aggregations: [
          { type: 'count' },
          { type: 'top', field: 'observables[*].value', size: 10 },
          { type: 'histogram', interval: '1h' },
        ],
      }).aggregations,
    ).toHaveLength(3);
  });

  it('accepts envelope fields and unmapped vendor fields', () => {
    expect(
      plan({ query: 'envelope.stream = "system_log" and envelope.id = "0190" and unmapped.anything = 1' }).condition,
    ).toBeTruthy();
  });

  it('takes the condition as where or as query, not both', () => {
    expect(problems({ where: { field: 'class_uid', op: 'eq', value: 1 }, query: 'class_uid = 1' })[0]!.location).toBe(
      'query',
    );
  });

  it('compiles a predicate that agrees with the text', () => {
    const p = plan({ query: 'class_uid = 3002 and actor.user.name ~ "adm*"' });
    const rec = (name: string) => ({
      id: 'x',
      organization_id: 1,
      integration_id: 1,
      stream: 's',
      received_at: '',
      mapping_version_id: '',
      valid: true,
      ocsf: { class_uid: 3002, actor: { user: { name } } },
    });
    expect(p.predicate(rec('admin'))).toBe(true);
    expect(p.predicate(rec('bob'))).toBe(false);
  });
});
