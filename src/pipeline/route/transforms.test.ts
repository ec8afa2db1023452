import { describe, expect, it } from 'vitest';
import { compileTransforms, hashId, keptBySample } from './transforms.js';
import type { RouteProblem } from './conditions.js';

function compile(list: unknown) {
  const problems: RouteProblem[] = [];
  const t = compileTransforms(list, problems);
  expect(problems).toEqual([]);
  return t!;
}

function problemsOf(list: unknown): RouteProblem[] {
  const problems: RouteProblem[] = [];
  expect(compileTransforms(list, problems)).toBeUndefined();
  return problems;
}

function event() {
  return {
    class_uid: 3002,
    actor: { user: { name: 'alice', uid: 'u1', email_addr: 'alice@example.com' }, session: { uid: 's1' } },
    src_endpoint: { ip: '10.1.2.3', port: 443 },
    observables: [
      { name: 'ip', value: '203.0.113.9', type_id: 2 },
      { name: 'user', value: 'alice', type_id: 4 },
    ],
    unmapped: { 'a.b': 1, keep: 2 },
  };
}

describe('route transforms', () => {
  it('no transforms: nothing to apply, everything kept', () => {
    expect(compile([])).toEqual({ rate: 1, apply: null });
    expect(compile(undefined)).toEqual({ rate: 1, apply: null });
  });

  it('drop_fields removes fields, also under [*], and never mutates the input', () => {
    const t = compile([
      {
        type: 'drop_fields',
        fields: ['actor.user.email_addr', 'observables[*].type_id', 'unmapped["a.b"]', 'no.such'],
      },
    ]);
    const input = event();
    const before = JSON.stringify(input);
    const out = t.apply!(input);
    expect(JSON.stringify(input)).toBe(before);
    expect(out.actor).toEqual({ user: { name: 'alice', uid: 'u1' }, session: { uid: 's1' } });
    expect(out.observables).toEqual([
      { name: 'ip', value: '203.0.113.9' },
      { name: 'user', value: 'alice' },
    ]);
    expect(out.unmapped).toEqual({ keep: 2 });
    // Untouched branches are shared, not copied.
    expect(out.src_endpoint).toBe(input.src_endpoint);
    expect((out.actor as { session: unknown }).session).toBe(input.actor.session);
  });

  it('drop_fields of a missing field returns the same object', () => {
    const input = event();
    expect(compile([{ type: 'drop_fields', fields: ['device.hostname'] }]).apply!(input)).toBe(input);
  });

  it('keep_fields keeps only the named paths', () => {
    const t = compile([
      { type: 'keep_fields', fields: ['class_uid', 'actor.user.name', 'observables[*].value', 'nope.x'] },
    ]);
    const input = event();
    expect(t.apply!(input)).toEqual({
      class_uid: 3002,
      actor: { user: { name: 'alice' } },
      observables: [{ value: '203.0.113.9' }, { value: 'alice' }],
    });
    expect(input.actor.user.uid).toBe('u1');
    expect(compile([{ type: 'keep_fields', fields: ['x'] }]).apply!(input)).toEqual({});
  });

  it('a shorter path covers a longer one', () => {
    const keep = compile([{ type: 'keep_fields', fields: ['actor.user.name', 'actor'] }]);
    expect(keep.apply!(event()).actor).toEqual(event().actor);
    const drop = compile([{ type: 'drop_fields', fields: ['actor', 'actor.user.name'] }]);
    expect(drop.apply!(event())).not.toHaveProperty('actor');
  });

  it('mask everywhere uses pipeline/mask.ts', () => {
    const out = compile([{ type: 'mask' }]).apply!(event());
    const actor = out.actor as { user: { name: string; email_addr: string } };
    expect(actor.user.name).toBe('a***');
    expect(actor.user.email_addr).toBe('a***@example.com');
    expect((out.src_endpoint as { ip: string }).ip).toBe('10.1.2.x');
    expect(out.class_uid).toBe(3002);
  });

  it('mask of named fields masks them whatever their name', () => {
    const input = event();
    const out = compile([{ type: 'mask', fields: ['actor.session.uid', 'observables[*].value'] }]).apply!(input);
    expect((out.actor as { session: { uid: string }; user: unknown }).session.uid).toBe('s***');
    expect((out.observables as { value: string }[]).map((o) => o.value)).toEqual(['203.0.113.x', 'a***']);
    expect(input.observables[0]!.value).toBe('203.0.113.9');
    // The copies of the masked values elsewhere are masked too; what holds none is shared, not copied.
    expect((out.actor as { user: unknown }).user).toEqual({ name: 'a***', uid: 'u1', email_addr: 'a***@example.com' });
    expect(out.src_endpoint).toBe(input.src_endpoint);
    expect(input.actor.user.name).toBe('alice');
  });

  it('mask of named fields masks every copy of their values: message, raw_data, substrings', () => {
    const input = { ...event(), message: 'login by alice from 203.0.113.9', raw_data: '{"user":"alice"}' };
    const out = compile([{ type: 'mask', fields: ['actor.user.name'] }]).apply!(input);
    expect(out.message).toBe('login by a*** from 203.0.113.9');
    expect(out.raw_data).toBe('{"user":"a***"}');
    expect(JSON.stringify(out)).not.toMatch(/alice(?!@)/);
  });

  it('applies edits in order', () => {
    const t = compile([
      { type: 'keep_fields', fields: ['actor'] },
      { type: 'drop_fields', fields: ['actor.user'] },
    ]);
    expect(t.apply!(event())).toEqual({ actor: { session: { uid: 's1' } } });
  });

  it('keeps a __proto__ key as data', () => {
    const input = JSON.parse('{"a":{"__proto__":{"x":1},"b":2}}') as Record<string, unknown>;
    const out = compile([{ type: 'drop_fields', fields: ['a.b'] }]).apply!(input);
    expect(JSON.stringify(out)).toBe('{"a":{"__proto__":{"x":1}}}');
    expect(Object.getPrototypeOf(out.a)).toBe(Object.prototype);
    const kept = compile([{ type: 'keep_fields', fields: ['a["__proto__"]'] }]).apply!(input);
    expect(JSON.stringify(kept)).toBe('{"a":{"__proto__":{"x":1}}}');
  });

  it('sample only sets the rate', () => {
    expect(compile([{ type: 'sample', rate: 0.25 }])).toEqual({ rate: 0.25, apply: null });
  });

  it('validation names each problem', () => {
    const problems = problemsOf([
      { type: 'sample', rate: 0 },
      { type: 'drop_fields', fields: [] },
      { type: 'keep_fields', fields: ['a', 'b[0].c', 'c[*]', 5] },
      { type: 'rename' },
      { type: 'mask', fields: ['x'], extra: 1 },
      { type: 'sample', rate: 2 },
    ]);
    expect(problems.map((p) => p.path)).toEqual([
      'transforms[0].rate',
      'transforms[1].fields',
      'transforms[2].fields[1]',
      'transforms[2].fields[2]',
      'transforms[2].fields[3]',
      'transforms[3].type',
      'transforms[4].extra',
      'transforms[5]',
      'transforms[5].rate',
    ]);
    expect(problemsOf({ type: 'mask' })[0]!.path).toBe('transforms');
  });
});

describe('sampling', () => {
  it('is deterministic and close to the rate', () => {
    const ids = Array.from(
      { length: 10_000 },
      (_, i) =>
        `0190a6b2-7c3d-7${(i >> 12).toString(16).padStart(3, '0')}-8${(i & 0xfff).toString(16).padStart(3, '0')}-00000000abcd`,
    );
    const kept = ids.filter((id) => keptBySample(hashId(id), 0.1));
    expect(kept.length).toBeGreaterThan(800);
    expect(kept.length).toBeLessThan(1200);
    expect(ids.filter((id) => keptBySample(hashId(id), 0.1))).toEqual(kept);
    // A smaller rate keeps a subset of a larger one's events.
    const few = new Set(ids.filter((id) => keptBySample(hashId(id), 0.01)));
    expect([...few].every((id) => kept.includes(id))).toBe(true);
    expect(ids.every((id) => keptBySample(hashId(id), 1))).toBe(true);
  });

  it('random v7 ids sample near the rate too', () => {
    let kept = 0;
    for (let i = 0; i < 10_000; i++) if (keptBySample(hashId(crypto.randomUUID()), 0.1)) kept++;
    expect(Math.abs(kept - 1000)).toBeLessThan(200);
  });
});
