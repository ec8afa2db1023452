import { describe, expect, it } from 'vitest';
import {
  applyPatch,
  decodeTable,
  encodeTable,
  parseTableCsv,
  TableError,
  tableFromJson,
  TABLE_LIMITS,
  validateTable,
} from './table.js';
import type { Row, TableData } from './types.js';

describe('parseTableCsv', () => {
  it('reads the header and RFC 4180 quoting; cells stay strings', () => {
    const t = parseTableCsv(
      '\uFEFFip,owner,note\r\n10.0.0.1,"Ops, Paris","say ""hi""\nthere"\n10.0.0.2,0012,\n\n',
      'ip',
      'cidr',
    );
    expect(t.columns).toEqual(['ip', 'owner', 'note']);
    expect(t.rows).toEqual([
      { ip: '10.0.0.1', owner: 'Ops, Paris', note: 'say "hi"\nthere' },
      { ip: '10.0.0.2', owner: '0012', note: '' },
    ]);
    expect(t).toMatchObject({ key_column: 'ip', match: 'cidr' });
  });

  it('throws a TableError with the line for a record of the wrong length or broken quoting', () => {
    expect(() => parseTableCsv('a,b\n1,2\n3\n', 'a', 'exact')).toThrow(TableError);
    try {
      parseTableCsv('a,b\n1,2\n3\n', 'a', 'exact');
    } catch (e) {
      expect((e as TableError).at).toBe('line 3');
    }
    expect(() => parseTableCsv('a,b\n"1,2\n', 'a', 'exact')).toThrow(TableError);
  });

  it('refuses an empty file, an unnamed or a repeated column', () => {
    expect(() => parseTableCsv('', 'a', 'exact')).toThrow(/empty/);
    expect(() => parseTableCsv('a,,c\n1,2,3', 'a', 'exact')).toThrow(/columns\[1\]/);
    expect(() => parseTableCsv('a,b,a\n1,2,3', 'a', 'exact')).toThrow(/twice/);
  });
});

describe('tableFromJson', () => {
  it('takes the union of the keys as columns, in order of appearance, and keeps types', () => {
    const t = tableFromJson(
      [
        { user: 'a', n: 1 },
        { user: 'b', vip: true },
      ],
      'user',
      'exact',
    );
    expect(t.columns).toEqual(['user', 'n', 'vip']);
    expect(t.rows[1]).toEqual({ user: 'b', vip: true });
  });

  it('refuses what is not an array of objects', () => {
    expect(() => tableFromJson({ a: 1 }, 'a', 'exact')).toThrow(/array/);
    expect(() => tableFromJson([{ a: 1 }, 3], 'a', 'exact')).toThrow(/rows\[1\]/);
  });
});

const table = (rows: unknown[], key = 'k', match: TableData['match'] = 'exact', columns?: string[]): TableData => {
  const t = tableFromJson(rows, key, match);
  return columns ? { ...t, columns } : t;
};

describe('validateTable', () => {
  it('accepts a good table', () => {
    expect(
      validateTable(
        table([
          { k: 'a', v: 1 },
          { k: 2, v: null },
        ]),
      ),
    ).toEqual([]);
  });

  it('locates every problem', () => {
    const rows = [
      { k: 'ok', v: 1 },
      { v: 2 },
      { k: '', v: 3 },
      { k: 'x'.repeat(1025) },
      { k: 'b', v: { nested: true } },
      { k: true },
      { k: 'c', 'odd name': [1] },
    ];
    expect(validateTable(table(rows))).toEqual([
      { at: 'rows[1].k', message: 'the row has no key' },
      { at: 'rows[2].k', message: 'the row has no key' },
      { at: 'rows[3].k', message: 'a key is limited to 1024 characters' },
      { at: 'rows[4].v', message: 'a cell is a string, a finite number, a boolean or null' },
      { at: 'rows[5].k', message: 'a key is a string or a number' },
      { at: 'rows[6]["odd name"]', message: 'a cell is a string, a finite number, a boolean or null' },
    ]);
  });

  it('reports a missing key column, a cell outside the columns and too many columns', () => {
    const t = table([{ k: 'a', extra: 1 }], 'id', 'exact', ['k', ...Array.from({ length: 64 }, (_, i) => `c${i}`)]);
    const problems = validateTable(t);
    expect(problems.map((p) => p.at)).toEqual(['key_column', 'columns', 'rows[0].extra']);
    expect(problems[1]!.message).toMatch(/at most 64 columns/);
  });

  it('checks networks of a cidr table', () => {
    const t = table(
      [
        { k: '10.0.0.0/8' },
        { k: '2001:db8::/32' },
        { k: '1.2.3.4' },
        { k: '10.0.0.0/33' },
        { k: '127.1' },
        { k: 'host' },
      ],
      'k',
      'cidr',
    );
    expect(validateTable(t).map((p) => p.at)).toEqual(['rows[3].k', 'rows[4].k', 'rows[5].k']);
  });

  it('lists at most 100 problems and counts the rest', () => {
    const problems = validateTable(
      table(
        Array.from({ length: 250 }, () => ({ v: 1, k: null })),
        'k',
      ),
    );
    expect(problems).toHaveLength(TABLE_LIMITS.problems + 1);
    expect(problems.at(-1)).toEqual({ at: 'rows', message: 'and 150 more problems' });
  });

  it('refuses more rows than the limit without walking them', () => {
    const t: TableData = {
      key_column: 'k',
      match: 'exact',
      columns: ['k'],
      rows: new Array<Row>(TABLE_LIMITS.rows + 1),
    };
    expect(validateTable(t)).toEqual([
      { at: 'rows', message: 'a table has at most 2,000,000 rows (this one has 2,000,001)' },
    ]);
  });
});

describe('applyPatch', () => {
  it('deletes, replaces and appends by key, without touching the base', () => {
    const base = table([
      { k: 'a', v: 1 },
      { k: 'b', v: 2 },
      { k: 'c', v: 3 },
    ]);
    const before = structuredClone(base);
    const next = applyPatch(base, {
      delete: ['b', 'zzz'],
      upsert: [
        { k: 'c', v: 30, w: 'new' },
        { k: 'd', v: 4 },
      ],
    });
    expect(next.rows).toEqual([
      { k: 'a', v: 1 },
      { k: 'c', v: 30, w: 'new' },
      { k: 'd', v: 4 },
    ]);
    expect(next.columns).toEqual(['k', 'v', 'w']);
    expect(base).toEqual(before);
  });

  it('compares keys per match kind', () => {
    const ci = applyPatch(
      table(
        [
          { k: 'Alice', v: 1 },
          { k: 'bob', v: 2 },
        ],
        'k',
        'case_insensitive',
      ),
      { upsert: [{ k: 'ALICE', v: 9 }], delete: ['BOB'] },
    );
    expect(ci.rows).toEqual([{ k: 'ALICE', v: 9 }]);
    const cidr = applyPatch(
      table(
        [
          { k: '10.0.0.0/8', v: 1 },
          { k: '2001:db8:0::1', v: 2 },
        ],
        'k',
        'cidr',
      ),
      {
        upsert: [{ k: '10.1.2.3/8', v: 8 }],
        delete: ['2001:DB8::1/128'],
      },
    );
    expect(cidr.rows).toEqual([{ k: '10.1.2.3/8', v: 8 }]);
  });

  it('keeps one row per key (the last) and rows without a valid key for validateTable', () => {
    const next = applyPatch(table([{ k: 'a', v: 1 }, { k: 'a', v: 2 }, { v: 3 }]), { upsert: [{ v: 4 }] });
    expect(next.rows).toEqual([{ k: 'a', v: 2 }, { v: 3 }, { v: 4 }]);
    expect(validateTable(next).map((p) => p.at)).toEqual(['rows[1].k', 'rows[2].k']);
  });
});

describe('encodeTable / decodeTable', () => {
  it('round-trips types, quoting, absent cells and non-ASCII text', () => {
    const t = table([
      { k: 'a', n: 1.5, b: true, z: null, s: 'é "q"\n,' },
      { k: 'b', n: 2 },
      { k: '😀', n: -1, b: false, z: null, s: '' },
    ]);
    const back = decodeTable(encodeTable(t));
    expect(back).toEqual(t);
    expect('b' in back.rows[1]!).toBe(false);
    expect(decodeTable(encodeTable(table([], 'k', 'cidr', ['k'])))).toEqual({
      key_column: 'k',
      match: 'cidr',
      columns: ['k'],
      rows: [],
    });
  });

  it('refuses bytes that are not an encoded table', () => {
    expect(() => decodeTable(new TextEncoder().encode('{"rows":[]}'))).toThrow(/not an encoded table/);
  });

  it('handles a million rows', () => {
    const rows = Array.from({ length: 1_000_000 }, (_, i) => ({ k: `user${i}`, dept: `d${i % 50}`, level: i % 7 }));
    const t = table(rows, 'k', 'exact', ['k', 'dept', 'level']);
    const back = decodeTable(encodeTable(t));
    expect(back.rows).toHaveLength(1_000_000);
    expect(back.rows[999_999]).toEqual({ k: 'user999999', dept: 'd49', level: 999_999 % 7 });
  });
});
