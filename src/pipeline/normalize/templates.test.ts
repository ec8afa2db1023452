import { describe, expect, it } from 'vitest';
import { formatSegments, type PathSegment } from './paths.js';
import { compileTemplate, TemplateSyntaxError } from './templates.js';

const ev = {
  actor: { name: 'ana', id: 7 },
  ok: false,
  tags: ['a', 'b'],
  obj: { k: 'v' },
  'x.y': 'dotted',
  'a|b': 'piped',
  empty: '',
};

describe('templates', () => {
  it.each([
    ['plain text', 'plain text'],
    ['{actor.name} logged in', 'ana logged in'],
    ['user {actor.id}: {ok}', 'user 7: false'],
    ['{tags}', 'a, b'],
    ['{obj}', '{"k":"v"}'],
    ['{missing}!', '!'],
    ['{missing|nobody} did it', 'nobody did it'],
    ['{empty|fallback}', 'fallback'],
    ['{actor.name|x}', 'ana'],
    ['{missing|a|b}', 'a|b'],
    ['{["x.y"]}', 'dotted'],
    ['{["a|b"]|none}', 'piped'],
    ['{{literal}} {actor.name}', '{literal} ana'],
    ['}}{{', '}{'],
    ['{ actor.name }', 'ana'],
    ['{@}', JSON.stringify(ev)],
  ])('%j -> %j', (template, expected) => {
    expect(compileTemplate(template)(ev)).toBe(expected);
  });

  it('reports the paths it reads', () => {
    const seen: PathSegment[][] = [];
    compileTemplate('{a.b} {c[*].d|-}', (s) => seen.push(s));
    expect(seen.map(formatSegments)).toEqual(['a.b', 'c[].d']);
  });

  it.each([
    ['{unclosed', 'unclosed {'],
    ['stray } brace', 'unmatched }'],
    ['{a..b}', 'placeholder at character 1: empty key'],
    ['{}', 'empty'],
    ['x'.repeat(5000), 'limited to 4096'],
  ])('rejects %j', (template, message) => {
    expect(() => compileTemplate(template)).toThrow(TemplateSyntaxError);
    expect(() => compileTemplate(template)).toThrow(message);
  });
});
