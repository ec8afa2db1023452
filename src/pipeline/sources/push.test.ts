import { describe, expect, it } from 'vitest';
import { chunkEvents, isStreamName, parsePushBody } from './push.js';

/** The accepted events, parsed from the texts that are queued. */
const eventsOf = (r: { texts: string[] }) => r.texts.map((t) => JSON.parse(t) as unknown);
const parse = (body: string | Buffer, maxDepth = 32) =>
  parsePushBody(Buffer.isBuffer(body) ? body : Buffer.from(body, 'utf8'), { maxDepth });

describe('parsePushBody: format detection', () => {
  it('reads an empty or blank body as no events', () => {
    for (const body of ['', '   \n\t\r\n', '\ufeff  ']) {
      const r = parse(body);
      expect(r).toMatchObject({ format: 'empty', texts: [], errors: [] });
    }
  });

  it('reads one compact object as one event', () => {
    const r = parse('{"a":1,"b":"x"}');
    expect(r.format).toBe('object');
    expect(eventsOf(r)).toEqual([{ a: 1, b: 'x' }]);
    expect(r.lines).toEqual([1]);
    expect(r.sizes).toEqual([15]);
  });

  it('reads a pretty-printed object as ONE event, not as broken NDJSON lines', () => {
    const body = JSON.stringify({ user: { name: 'ann', roles: ['a', 'b'] }, action: 'login' }, null, 2);
    expect(body.split('\n').length).toBeGreaterThan(5);
    const r = parse(`\n  ${body}\n\n`);
    expect(r.format).toBe('object');
    expect(eventsOf(r)).toEqual([{ user: { name: 'ann', roles: ['a', 'b'] }, action: 'login' }]);
    expect(r.errors).toEqual([]);
  });

  it('reads a compact or pretty-printed array as one event per element', () => {
    const items = [{ a: 1 }, { b: [1, 2, { c: 'd,]}' }] }, { e: 'with "quotes" and \\ backslash' }];
    for (const body of [JSON.stringify(items), JSON.stringify(items, null, 4)]) {
      const r = parse(body);
      expect(r.format).toBe('array');
      expect(eventsOf(r)).toEqual(items);
      expect(r.lines).toEqual([1, 2, 3]);
      expect(r.errors).toEqual([]);
    }
  });

  it('gives each array element its exact byte size as received', () => {
    const r = parse('[ {"a":"é"} ,{"b":2}]');
    expect(r.sizes).toEqual([Buffer.byteLength('{"a":"é"}'), 7]);
  });

  it('reads an empty array as no events', () => {
    expect(parse('[]')).toMatchObject({ format: 'array', texts: [], errors: [] });
    expect(parse('[ \n ]')).toMatchObject({ format: 'array', texts: [], errors: [] });
  });

  it('reads NDJSON line by line, skipping blank lines and CRLF endings', () => {
    const r = parse('{"n":1}\r\n\r\n{"n":2}\n   \n{"n":3}');
    expect(r.format).toBe('ndjson');
    expect(eventsOf(r)).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }]);
    expect(r.lines).toEqual([1, 3, 5]);
    expect(r.sizes).toEqual([7, 7, 7]);
  });

  it('reads lines that are arrays as NDJSON (more than one document), rejecting each', () => {
    const r = parse('[1]\n[2]');
    expect(r.format).toBe('ndjson');
    expect(r.errors).toEqual([
      { line: 1, reason: 'not a JSON object (an array)' },
      { line: 2, reason: 'not a JSON object (an array)' },
    ]);
  });
});

describe('parsePushBody: per-line errors', () => {
  it('reports a bad NDJSON line with its line number and keeps the others', () => {
    const r = parse('{"ok":1}\n{"broken":\n{"ok":2}\n');
    expect(eventsOf(r)).toEqual([{ ok: 1 }, { ok: 2 }]);
    expect(r.errors).toEqual([{ line: 2, reason: 'invalid JSON' }]);
  });

  it('rejects values that are not objects, naming their kind', () => {
    const r = parse('42\n"text"\nnull\ntrue\n[1,2]\n{"fine":true}');
    expect(eventsOf(r)).toEqual([{ fine: true }]);
    expect(r.errors.map((e) => e.reason)).toEqual([
      'not a JSON object (a number)',
      'not a JSON object (a string)',
      'not a JSON object (null)',
      'not a JSON object (a boolean)',
      'not a JSON object (an array)',
    ]);
  });

  it('rejects array elements that are not objects, by 1-based index', () => {
    const r = parse('[{"a":1}, 2, [3], {"b":}, {"c":3}]');
    expect(r.format).toBe('array');
    expect(eventsOf(r)).toEqual([{ a: 1 }, { c: 3 }]);
    expect(r.errors).toEqual([
      { line: 2, reason: 'not a JSON object (a number)' },
      { line: 3, reason: 'not a JSON object (an array)' },
      { line: 4, reason: 'invalid JSON' },
    ]);
  });

  it('reports blank array elements', () => {
    const r = parse('[{"a":1},,{"b":2},]');
    expect(eventsOf(r)).toHaveLength(2);
    expect(r.errors).toEqual([
      { line: 2, reason: 'empty element' },
      { line: 4, reason: 'empty element' },
    ]);
  });

  it('refuses prototype-poisoning keys', () => {
    const r = parse('{"__proto__":{"admin":true}}\n{"constructor":{"prototype":{"x":1}}}\n{"a":1}');
    expect(eventsOf(r)).toEqual([{ a: 1 }]);
    expect(r.errors).toEqual([
      { line: 1, reason: 'forbidden key (__proto__ or constructor.prototype)' },
      { line: 2, reason: 'forbidden key (__proto__ or constructor.prototype)' },
    ]);
    expect(({} as Record<string, unknown>).admin).toBeUndefined();
  });

  it('refuses a __proto__ key spelt with escapes', () => {
    const r = parse(String.raw`{"\u005f_proto__":{"admin":true}}` + '\n{"a":1}');
    expect(eventsOf(r)).toEqual([{ a: 1 }]);
    expect(r.errors).toEqual([{ line: 1, reason: 'forbidden key (__proto__ or constructor.prototype)' }]);
  });

  it('enforces the depth limit per event, not counting the wrapping array', () => {
    const deep = (n: number) => '{"a":'.repeat(n) + '1' + '}'.repeat(n);
    expect(parse(deep(4), 4).errors).toEqual([]);
    expect(parse(deep(5), 4).errors).toEqual([{ line: 1, reason: 'nested deeper than 4 levels' }]);
    expect(parse(`[${deep(4)}, ${deep(5)}]`, 4).errors).toEqual([{ line: 2, reason: 'nested deeper than 4 levels' }]);
    expect(parse(`${deep(4)}\n${deep(5)}`, 4).errors).toEqual([{ line: 2, reason: 'nested deeper than 4 levels' }]);
  });

  it('does not count brackets inside strings as nesting', () => {
    const r = parse('{"s":"[[[[[[{{{{{{"}', 2);
    expect(r.errors).toEqual([]);
  });

  it('refuses a line with invalid UTF-8 and keeps valid ones', () => {
    const bad = Buffer.concat([Buffer.from('{"a":"'), Buffer.from([0xc3, 0x28]), Buffer.from('"}\n{"b":"ü"}')]);
    const r = parse(bad);
    expect(eventsOf(r)).toEqual([{ b: 'ü' }]);
    expect(r.errors).toEqual([{ line: 1, reason: 'not valid UTF-8' }]);
  });

  it('refuses events PostgreSQL cannot store (\u0000, unpaired surrogates) and keeps the rest', () => {
    const lines = [
      String.raw`{"a":"x\u0000y"}`,
      String.raw`{"k\u0000":1}`,
      String.raw`{"a":"\ud800"}`,
      String.raw`{"a":"\udc00x"}`,
      String.raw`{"a":"\ud83d\ude00 \u00e9 \\u0000 \\\\"}`,
      String.raw`{"a":"plain"}`,
    ];
    const r = parse(lines.join('\n'));
    expect(eventsOf(r)).toEqual([{ a: '\u{1F600} é \\u0000 \\\\' }, { a: 'plain' }]);
    expect(r.errors.map((e) => e.line)).toEqual([1, 2, 3, 4]);
    expect(r.errors[0]?.reason).toMatch(/cannot be stored/);
  });

  it('never echoes the content in a reason', () => {
    const r = parse('{"secret":"hunter2"\n not json hunter2\n');
    expect(r.errors.length).toBeGreaterThan(0);
    for (const e of r.errors) expect(e.reason).not.toMatch(/hunter2/);
  });

  it('reads an unbalanced first object as NDJSON so later lines still count', () => {
    const r = parse('{"a":\n{"b":1}\n');
    expect(r.format).toBe('ndjson');
    expect(eventsOf(r)).toEqual([{ b: 1 }]);
    expect(r.errors).toEqual([{ line: 1, reason: 'invalid JSON' }]);
  });

  it('reads a balanced but malformed single document as one rejected event', () => {
    const r = parse('{\n  "a": 1,\n  "b": \n}');
    expect(r.format).toBe('object');
    expect(r.errors).toEqual([{ line: 1, reason: 'invalid JSON' }]);
  });
});

describe('chunkEvents', () => {
  it('splits by event count', () => {
    expect(chunkEvents([1, 1, 1, 1, 1], 2, 1000)).toEqual([
      { start: 0, end: 2, bytes: 2 },
      { start: 2, end: 4, bytes: 2 },
      { start: 4, end: 5, bytes: 1 },
    ]);
  });

  it('splits by bytes, giving an oversized event a chunk of its own', () => {
    expect(chunkEvents([40, 40, 40, 500, 10], 100, 100)).toEqual([
      { start: 0, end: 2, bytes: 80 },
      { start: 2, end: 3, bytes: 40 },
      { start: 3, end: 4, bytes: 500 },
      { start: 4, end: 5, bytes: 10 },
    ]);
  });

  it('makes no chunk for no events', () => {
    expect(chunkEvents([], 10, 10)).toEqual([]);
  });
});

describe('isStreamName', () => {
  it('accepts safe names and refuses the rest', () => {
    for (const ok of ['system_log', 'a', 'A.b-c_1', 'x'.repeat(64)]) expect(isStreamName(ok)).toBe(true);
    for (const bad of ['', '_x', '.hidden', 'a/b', 'a b', 'x'.repeat(65), 'é']) expect(isStreamName(bad)).toBe(false);
  });
});

describe('parsePushBody with a declared format', () => {
  const opts = { maxDepth: 32 };
  it('ndjson reads every line even when the body is one document', () => {
    const body = Buffer.from('{"a":1,\n"b":2}');
    expect(parsePushBody(body, opts).texts).toHaveLength(1);
    const lines = parsePushBody(body, { ...opts, format: 'ndjson' });
    expect(lines.format).toBe('ndjson');
    expect(lines.texts).toHaveLength(0);
    expect(lines.errors.map((e) => e.line)).toEqual([1, 2]);
  });

  it('json parses nothing when the body is not one document', () => {
    const out = parsePushBody(Buffer.from('{"a":1}\n{"a":2}\n'), { ...opts, format: 'json' });
    expect(out).toMatchObject({ format: 'not_a_document', texts: [], errors: [] });
    expect(parsePushBody(Buffer.from('[{"a":1}]'), { ...opts, format: 'json' }).texts).toHaveLength(1);
  });
});
