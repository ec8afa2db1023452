import { describe, expect, it } from 'vitest';
import { compilePath, formatSegments, isAbsent, joinPathKey, parsePath, PathSyntaxError, readPath } from './paths.js';

const ev = {
  a: { b: { c: 1, d: [10, 20] } },
  list: [{ id: 'x', tags: ['t1', 't2'] }, { id: 'y', tags: ['t3'] }, { noid: true }],
  'x.y': { z: 'dotted' },
  'q"k': 'quoted',
  targets: [
    { type: 'AppInstance', id: 'app' },
    { type: 'User', id: 'u1' },
    { type: 'User', id: 'u2' },
  ],
  params: [
    { name: 'count', value: 3 },
    { name: 'flag', value: true },
  ],
  mixed: [
    { Type: 'GROUP', id: 'g1' },
    { type: 'user', id: 'u9' },
  ],
  single: { id: 'only' },
  nul: null,
  toString: 'own',
};

describe('source paths', () => {
  it.each([
    ['a.b.c', 1],
    ['a.b', { c: 1, d: [10, 20] }],
    ['a.b.d[1]', 20],
    ['a.b.d[-1]', 20],
    ['a.b.d[5]', undefined],
    ['list[0].id', 'x'],
    ['list[1].tags[0]', 't3'],
    ['list[*].id', ['x', 'y']],
    ['list[*].tags', ['t1', 't2', 't3']],
    ['list[*].tags[*]', ['t1', 't2', 't3']],
    ['list[*].missing', undefined],
    ['["x.y"].z', 'dotted'],
    ['["q\\"k"]', 'quoted'],
    ['targets[?type=User].id', 'u1'],
    ['targets[?type="AppInstance"].id', 'app'],
    ['targets[?type=Group].id', undefined],
    ['params[?name=count].value', 3],
    ['mixed[?type=User].id', undefined],
    ['mixed[?type~=User].id', 'u9'],
    ['mixed[?type~=group].id', 'g1'],
    ['mixed[?TYPE~="Group"].id', 'g1'],
    ['targets[?type~=user].id', 'u1'],
    ['params[?name~=FLAG].value', true],
    ['single[0].id', 'only'],
    ['single[*].id', ['only']],
    ['single[3].id', undefined],
    ['nul.x', undefined],
    ['a.b.c.d', undefined],
    ['list.id', undefined],
    ['toString', 'own'],
    ['a.toString', undefined],
    ['a.constructor', undefined],
    ['a.__proto__', undefined],
    ['missing.deeply.nested.path.here', undefined],
  ])('%s', (path, expected) => {
    expect(readPath(ev, path)).toEqual(expected);
  });

  it('unrolled and generic accessors agree', () => {
    const deep = { a: { b: { c: { d: { e: 5 } } } } };
    expect(compilePath('a.b.c.d.e')(deep)).toBe(5);
    expect(compilePath('a.b.c.d.x')(deep)).toBeUndefined();
    expect(compilePath('a')(null)).toBeUndefined();
    expect(compilePath('a.b')([1])).toBeUndefined();
  });

  it.each([
    ['', 'empty'],
    ['a..b', 'empty key'],
    ['.a', 'empty key'],
    ['a.', 'end with a dot'],
    ['a[', 'unterminated'],
    ['a[x]', 'is not an index'],
    ['a[?x]', '[?key=value]'],
    ['a["x', 'unterminated quoted key'],
    ['a]b', 'unexpected "]"'],
    ['a[0]b', 'unexpected "b"'],
  ])('rejects %j (%s)', (path, message) => {
    expect(() => parsePath(path)).toThrow(PathSyntaxError);
    expect(() => parsePath(path)).toThrow(message);
  });

  it('normalizes paths for reads and drift', () => {
    expect(formatSegments(parsePath('a.b[0].c'))).toBe('a.b[].c');
    expect(formatSegments(parsePath('a[*].b[-1]'))).toBe('a[].b[]');
    expect(formatSegments(parsePath('["x.y"].z'))).toBe('["x.y"].z');
    expect(formatSegments(parsePath('a["b c"]'))).toBe('a.b c');
    expect(joinPathKey('', 'a')).toBe('a');
    expect(joinPathKey('a', 'b.c')).toBe('a["b.c"]');
    expect(joinPathKey('a[]', 'id')).toBe('a[].id');
  });

  it('treats null, "", [] and undefined as absent', () => {
    expect([undefined, null, '', []].every(isAbsent)).toBe(true);
    expect([0, false, 'x', [0], {}].some(isAbsent)).toBe(false);
  });
});
