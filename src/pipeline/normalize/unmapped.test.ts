import { describe, expect, it } from 'vitest';
import { parsePath } from './paths.js';
import { ReadTree } from './unmapped.js';

function tree(...paths: string[]): ReadTree {
  const t = new ReadTree();
  for (const p of paths) t.add(parsePath(p));
  return t;
}

const raw = {
  id: 'e1',
  actor: { id: 'u1', name: 'ana', session: { id: 's1', mfa: true } },
  targets: [
    { id: 't1', type: 'User', extra: 1 },
    { id: 't2', type: 'App' },
  ],
  tags: ['a', 'b'],
  detail: { deep: { deeper: { value: 1 } } },
  scalar: 'x',
};

describe('unmapped', () => {
  it('keeps everything when nothing is read (the raw event itself)', () => {
    expect(tree().extract(raw)).toBe(raw);
  });

  it('keeps unread fields with their nesting and drops read ones', () => {
    const out = tree('id', 'actor.id', 'actor.session.id').extract(raw)!;
    expect(out).toEqual({
      actor: { name: 'ana', session: { mfa: true } },
      targets: raw.targets,
      tags: raw.tags,
      detail: raw.detail,
      scalar: 'x',
    });
    // unread subtrees are referenced, not copied
    expect(out.detail).toBe(raw.detail);
    expect(out.targets).toBe(raw.targets);
  });

  it('a read covers the whole subtree', () => {
    const out = tree('actor', 'detail.deep').extract(raw)!;
    expect(out.actor).toBeUndefined();
    expect(out.detail).toBeUndefined();
  });

  it('element reads ([*], [n]) cover that field of every element', () => {
    expect(tree('targets[*].id').extract(raw)!.targets).toEqual([{ type: 'User', extra: 1 }, { type: 'App' }]);
    expect(tree('targets[0].id', 'targets[1].type').extract(raw)!.targets).toEqual([{ extra: 1 }]);
    expect(tree('targets[*].id', 'targets[*].type', 'targets[*].extra').extract(raw)!.targets).toBeUndefined();
    expect(tree('tags[*]').extract(raw)!.tags).toBeUndefined();
    expect(tree('tags[0]').extract(raw)!.tags).toBeUndefined();
  });

  it('returns undefined when everything was read', () => {
    expect(tree('id', 'actor', 'targets', 'tags', 'detail', 'scalar').extract(raw)).toBeUndefined();
  });

  it('keeps values whose shape differs from what the document reads', () => {
    // `scalar.x` reads nothing from a string; an object read as a list is one element
    expect(tree('scalar.x').extract(raw)!.scalar).toBe('x');
    expect(tree('actor[*].id').extract(raw)!.actor).toEqual({ name: 'ana', session: raw.actor.session });
    expect(tree('tags.x').extract(raw)!.tags).toBe(raw.tags);
  });

  it('counts a lone value read as a one-element list (each, [*]) as read', () => {
    // `each: "md5"` over a hash written as one string reads it whole
    expect(tree('scalar[*]').extract(raw)!.scalar).toBeUndefined();
    expect(tree('scalar[0]').extract(raw)!.scalar).toBeUndefined();
    // a field of the element is still structure the scalar does not have
    expect(tree('scalar[*].x').extract(raw)!.scalar).toBe('x');
  });

  it('keeps a JSON __proto__ key as data', () => {
    const evil = JSON.parse('{"__proto__": {"polluted": true}, "id": 1}') as Record<string, unknown>;
    const out = tree('id').extract(evil)!;
    expect(Object.keys(out)).toEqual(['__proto__']);
    expect(JSON.stringify(out)).toBe('{"__proto__":{"polluted":true}}');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('a later broader read wins over narrower ones', () => {
    const t = tree('actor.id', 'actor.session.id', 'actor');
    expect(t.extract(raw)!.actor).toBeUndefined();
  });
});
