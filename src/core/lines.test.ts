import { describe, expect, it } from 'vitest';
import { bufferLines, ndjsonBytes } from './lines.js';

describe('lines in buffers', () => {
  it('writes lines as NDJSON bytes and reads them back, multi-byte characters included', () => {
    const lines = ['{"a":1}', '{"b":"é🙂"}', '', '{"c":"\\n"}'];
    const buf = ndjsonBytes(lines);
    expect(buf.toString('utf8')).toBe(lines.join('\n'));
    expect(bufferLines(buf)).toEqual(lines);
  });

  it('reads from an offset, and nothing from an empty buffer', () => {
    expect(bufferLines(Buffer.from('head\nx\ny'), 5)).toEqual(['x', 'y']);
    expect(bufferLines(Buffer.alloc(0))).toEqual([]);
    expect(ndjsonBytes([]).length).toBe(0);
  });
});
