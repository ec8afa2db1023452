// Small tier: field discovery and document diffs as pure functions.
import { describe, expect, it } from 'vitest';
import { diffDocuments } from './diff.js';
import { discoverFields, MAX_FIELDS } from './fields.js';

const identity = (raw: Record<string, unknown>) => raw;

describe('discoverFields', () => {
  it('flattens objects with dots and arrays with [], counting samples per type', () => {
    const d = discoverFields(
      [{ a: { b: 1, c: [{ id: 'x' }, { id: 2 }] }, empty: {}, none: [] }, { a: { b: 'two' } }],
      new Set(),
      identity,
    );
    expect(d.samples).toBe(2);
    expect(d.fields).toEqual([
      { path: 'a.b', types: { number: 1, string: 1 }, count: 2, frequency: 1, mapped: false, example: 1 },
      { path: 'a.c[].id', types: { number: 1, string: 1 }, count: 1, frequency: 0.5, mapped: false, example: 'x' },
      { path: 'empty', types: { object: 1 }, count: 1, frequency: 0.5, mapped: false, example: {} },
      { path: 'none', types: { array: 1 }, count: 1, frequency: 0.5, mapped: false, example: [] },
    ]);
  });

  it('marks a path mapped when the mapping reads it or an ancestor, in the reads notation', () => {
    const d = discoverFields(
      [{ user: { name: 'a', id: 1 }, list: [{ ip: '1' }], 'dotted.key': 1, other: 2 }],
      new Set(['user', 'list[].ip', '["dotted.key"]']),
      identity,
    );
    expect(Object.fromEntries(d.fields.map((f) => [f.path, f.mapped]))).toEqual({
      '["dotted.key"]': true,
      'list[].ip': true,
      other: false,
      'user.id': true,
      'user.name': true,
    });
  });

  it('takes examples from the masked sample, preferring a non-null value', () => {
    const mask = (raw: Record<string, unknown>) =>
      JSON.parse(JSON.stringify(raw).replace(/secret/g, '***')) as Record<string, unknown>;
    const d = discoverFields([{ v: null }, { v: 'secret' }], new Set(), mask);
    expect(d.fields).toEqual([
      { path: 'v', types: { null: 1, string: 1 }, count: 2, frequency: 1, mapped: false, example: '***' },
    ]);
  });

  it('caps the number of distinct paths and says so', () => {
    const wide = Object.fromEntries(Array.from({ length: MAX_FIELDS + 5 }, (_, i) => [`f${i}`, i]));
    const d = discoverFields([wide], new Set(), identity);
    expect(d.fields).toHaveLength(MAX_FIELDS);
    expect(d.truncated).toBe(true);
  });

  it('answers no fields for no samples', () => {
    expect(discoverFields([], new Set(['a']), identity)).toEqual({ samples: 0, fields: [], truncated: false });
  });
});

describe('diffDocuments', () => {
  it('reports add, remove and replace as JSON pointers, arrays by index, keys escaped', () => {
    const a = { rules: [{ name: 'a' }, { name: 'b' }], 'x/y': 1, gone: true };
    const b = { rules: [{ name: 'a2' }], 'x/y': 2, added: { k: 1 } };
    expect(diffDocuments(a, b)).toEqual([
      { op: 'remove', path: '/gone', from: true },
      { op: 'replace', path: '/rules/0/name', from: 'a', to: 'a2' },
      { op: 'remove', path: '/rules/1', from: { name: 'b' } },
      { op: 'replace', path: '/x~1y', from: 1, to: 2 },
      { op: 'add', path: '/added', to: { k: 1 } },
    ]);
  });

  it('does not depend on key order', () => {
    expect(diffDocuments({ a: 1, b: { c: 1, d: 2 } }, { b: { d: 2, c: 1 }, a: 1 })).toEqual([]);
  });
});
