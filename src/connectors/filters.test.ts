import { describe, expect, it } from 'vitest';
import { compileCollectionFilters, normalizeCollectionFilters, validateCollectionFilters } from './filters.js';

describe('collection filters', () => {
  it('passes everything when there are no filters', () => {
    for (const raw of [null, undefined, {}, { streams: null, exclude: [] }]) {
      const f = compileCollectionFilters(raw);
      expect(f.streamEnabled('system_log')).toBe(true);
      expect(f.drops({ eventType: 'x' })).toBe(false);
    }
  });

  it('limits collection to the listed streams', () => {
    const f = compileCollectionFilters({ streams: ['system_log'] });
    expect(f.streamEnabled('system_log')).toBe(true);
    expect(f.streamEnabled('audit')).toBe(false);
    expect(compileCollectionFilters({ streams: [] }).streamEnabled('system_log')).toBe(false);
  });

  it('drops a raw event matching any exclude condition, addressing vendor fields', () => {
    const f = compileCollectionFilters({
      exclude: [
        { field: 'eventType', op: 'in', value: ['user.session.access_admin_app', 'system.heartbeat'] },
        {
          all: [
            { field: 'client.ipAddress', op: 'cidr', value: '10.0.0.0/8' },
            { field: 'outcome.result', op: 'eq', value: 'SUCCESS' },
          ],
        },
        { field: 'actor.alternateId', op: 'regex', value: '^svc-.*@example\\.com$' },
      ],
    });
    expect(f.drops({ eventType: 'system.heartbeat' })).toBe(true);
    expect(
      f.drops({ eventType: 'user.login', client: { ipAddress: '10.1.2.3' }, outcome: { result: 'SUCCESS' } }),
    ).toBe(true);
    expect(
      f.drops({ eventType: 'user.login', client: { ipAddress: '10.1.2.3' }, outcome: { result: 'FAILURE' } }),
    ).toBe(false);
    expect(f.drops({ eventType: 'user.login', actor: { alternateId: 'svc-backup@example.com' } })).toBe(true);
    expect(f.drops({ eventType: 'user.login', actor: { alternateId: 'alice@example.com' } })).toBe(false);
    // Evaluation reuses a shell record: a later event is never judged by an earlier one.
    expect(f.drops({})).toBe(false);
  });

  it('reports every problem with its location in the body', () => {
    const problems = validateCollectionFilters(
      {
        streams: ['system_log', 'nope', 3],
        exclude: [
          { field: 'a', op: 'regex', value: '(' },
          { all: [{ field: 'b', op: 'gt', value: 'x' }] },
          { field: 'envelope.stream', op: 'eq', value: 's' },
          null,
        ],
        extra: 1,
      },
      ['system_log'],
    );
    expect(problems.map((p) => p.location).sort()).toEqual([
      'body/exclude/0/value',
      'body/exclude/1/all/0/value',
      'body/exclude/2/field',
      'body/exclude/3',
      'body/extra',
      'body/streams/1',
      'body/streams/2',
    ]);
    for (const p of problems) expect(typeof p.message).toBe('string');
  });

  it('rejects non-objects and oversized lists', () => {
    expect(validateCollectionFilters([])[0]?.location).toBe('body');
    expect(validateCollectionFilters({ streams: 'system_log' })[0]?.location).toBe('body/streams');
    expect(
      validateCollectionFilters({ exclude: Array.from({ length: 51 }, () => ({ field: 'a', op: 'exists' })) })[0]
        ?.location,
    ).toBe('body/exclude');
    expect(validateCollectionFilters({ streams: null, exclude: [{ field: 'a', op: 'exists' }] })).toEqual([]);
  });

  it('refuses to compile a stored document that does not validate', () => {
    expect(() => compileCollectionFilters({ exclude: [{ field: 'a', op: 'bogus' }] })).toThrow(
      /invalid collection filters/,
    );
  });

  it('normalizes stored documents to the canonical shape', () => {
    expect(normalizeCollectionFilters(null)).toEqual({ streams: null, exclude: [] });
    expect(normalizeCollectionFilters({ streams: ['a'] })).toEqual({ streams: ['a'], exclude: [] });
  });
});
