import { describe, expect, it } from 'vitest';
import { csvCell, csvChunks, csvRow } from './csv.js';

describe('CSV out', () => {
  it('quotes fields with commas, quotes and line breaks (RFC 4180)', () => {
    expect(csvCell('plain')).toBe('plain');
    expect(csvCell('a,b')).toBe('"a,b"');
    expect(csvCell('say "hi"')).toBe('"say ""hi"""');
    expect(csvCell('two\nlines')).toBe('"two\nlines"');
    expect(csvCell('cr\rhere')).toBe('"cr\rhere"');
    expect(csvRow(['a', 1, null, undefined, true])).toBe('a,1,,,true\r\n');
  });

  it('defuses spreadsheet formulas in text cells, not in numbers', () => {
    expect(csvCell('=SUM(A1:A2)')).toBe("'=SUM(A1:A2)");
    expect(csvCell('+1')).toBe("'+1");
    expect(csvCell('-cmd')).toBe("'-cmd");
    expect(csvCell('@import')).toBe("'@import");
    expect(csvCell('\tx')).toBe("'\tx");
    expect(csvCell('=HYPERLINK("http://x","y")')).toBe('"\'=HYPERLINK(""http://x"",""y"")"');
    expect(csvCell(-5)).toBe('-5');
    expect(csvCell('a=b')).toBe('a=b');
  });

  it('writes dates as RFC 3339 UTC', () => {
    expect(csvCell(new Date(Date.UTC(2026, 0, 2, 3, 4, 5)))).toBe('2026-01-02T03:04:05.000Z');
  });

  it('yields bounded chunks, header first, as rows arrive', async () => {
    async function* rows() {
      for (let i = 0; i < 1000; i++) yield { n: i, s: 'x'.repeat(50) };
    }
    const chunks: string[] = [];
    for await (const c of csvChunks(['n', 's'], rows(), (r) => [r.n, r.s], 4096)) chunks.push(c);
    expect(chunks.length).toBeGreaterThan(10);
    for (const c of chunks.slice(0, -1)) expect(c.length).toBeLessThan(4096 + 100);
    const text = chunks.join('');
    expect(text.startsWith('n,s\r\n0,')).toBe(true);
    expect(text.split('\r\n').length).toBe(1002);
  });
});
