import { describe, expect, it } from 'vitest';
import type { NormalizedRecord } from '../envelope.js';
import { compileRoutes, ocsfText, RouteCompileError, validateRouteParts } from './compile.js';
import type { RouteSpec } from './types.js';

let seq = 0;
function rec(ocsf: Record<string, unknown>, over: Partial<NormalizedRecord> = {}): NormalizedRecord {
  seq++;
  return {
    id: `0190a000-0000-7000-8000-${seq.toString(16).padStart(12, '0')}`,
    organization_id: 1,
    integration_id: 2,
    stream: 'audit',
    received_at: '2024-01-01T00:00:00Z',
    mapping_version_id: 'mv1',
    valid: true,
    ocsf,
    ...over,
  };
}

/** The stored line exactly as the normalization stage writes it. */

function route(id: string, over: Partial<RouteSpec> = {}): RouteSpec {
  return {
    id,
    organization_id: 1,
    name: id,
    position: 1,
    enabled: true,
    condition: null,
    transforms: [],
    destination_ids: [],
    final: true,
    version: 1,
    ...over,
  };
}

const cls = (n: number) => ({ field: 'class_uid', op: 'eq' as const, value: n });

describe('compileRoutes', () => {
  it('routes in order; final stops; unmatched events are no_route', () => {
    const routes = compileRoutes([
      route('r1', { condition: cls(1), destination_ids: ['A'] }),
      route('r2', { condition: null, destination_ids: ['B'] }),
    ]);
    const records = [rec({ class_uid: 1 }), rec({ class_uid: 2 })];
    const plan = routes.plan(records);
    expect(plan.copies.get('A')!.map((c) => c.index)).toEqual([0]);
    expect(plan.copies.get('B')!.map((c) => c.index)).toEqual([1]);
    expect(plan.records).toEqual([{ routes: ['r1'] }, { routes: ['r2'] }]);
    expect(plan.matched).toEqual(
      new Map([
        ['r1', 1],
        ['r2', 1],
      ]),
    );
    expect(plan.filtered).toEqual({ no_route: 0, sampled_out: 0, dropped_by_route: 0 });

    const none = compileRoutes([route('r1', { condition: cls(1), destination_ids: ['A'] })]).plan([
      rec({ class_uid: 9 }),
    ]);
    expect(none.records).toEqual([{ routes: [], filtered: 'no_route' }]);
    expect(none.filtered.no_route).toBe(1);
    expect(none.copies.size).toBe(0);
    expect(compileRoutes([]).plan([rec({})]).filtered.no_route).toBe(1);
  });

  it('fan-out: non-final routes let later ones match; each destination gets one copy (first route wins)', () => {
    const routes = compileRoutes([
      route('all-to-lake', { final: false, destination_ids: ['lake'] }),
      route('auth', {
        condition: cls(3002),
        final: false,
        destination_ids: ['siem', 'lake'],
        transforms: [{ type: 'drop_fields', fields: ['raw'] }],
      }),
      route('rest', { destination_ids: ['siem', 'archive'] }),
    ]);
    const records = [rec({ class_uid: 3002, raw: 'x' }), rec({ class_uid: 4001, raw: 'y' })];
    const plan = routes.plan(records);
    expect(plan.records.map((r) => r.routes)).toEqual([
      ['all-to-lake', 'auth', 'rest'],
      ['all-to-lake', 'rest'],
    ]);
    const lake = plan.copies.get('lake')!;
    expect(lake.map((c) => [c.index, c.routeId])).toEqual([
      [0, 'all-to-lake'],
      [1, 'all-to-lake'],
    ]);
    expect(JSON.parse(lake[0]!.line)).toEqual({ class_uid: 3002, raw: 'x' }); // untransformed: the first route won
    const siem = plan.copies.get('siem')!;
    expect(siem.map((c) => [c.index, c.routeId])).toEqual([
      [0, 'auth'],
      [1, 'rest'],
    ]);
    expect(JSON.parse(siem[0]!.line)).toEqual({ class_uid: 3002 });
    expect(plan.copies.get('archive')!.map((c) => c.index)).toEqual([0, 1]);
    expect(plan.matched).toEqual(
      new Map([
        ['all-to-lake', 2],
        ['auth', 1],
        ['rest', 2],
      ]),
    );
    // The transform worked on a copy: the record is untouched.
    expect(records[0]!.ocsf).toEqual({ class_uid: 3002, raw: 'x' });
  });

  it('a matching route without destinations drops on purpose', () => {
    const routes = compileRoutes([
      route('drop-noise', { condition: cls(0), destination_ids: [] }),
      route('rest', { destination_ids: ['A'] }),
    ]);
    const plan = routes.plan([rec({ class_uid: 0 }), rec({ class_uid: 1 })]);
    expect(plan.records[0]).toEqual({ routes: ['drop-noise'], filtered: 'dropped_by_route' });
    expect(plan.filtered).toEqual({ no_route: 0, sampled_out: 0, dropped_by_route: 1 });
    expect(plan.copies.get('A')!.map((c) => c.index)).toEqual([1]);
    // Not final: a later route still sends it, so it is not filtered.
    const fan = compileRoutes([route('d', { final: false }), route('rest', { destination_ids: ['A'] })]).plan([
      rec({}),
    ]);
    expect(fan.records[0]).toEqual({ routes: ['d', 'rest'] });
  });

  it('sampling: counted per route; an event every matching route sampled out is sampled_out', () => {
    const records = Array.from({ length: 2000 }, () => rec({ class_uid: 1 }));
    const routes = compileRoutes([route('s', { transforms: [{ type: 'sample', rate: 0.1 }], destination_ids: ['A'] })]);
    const plan = routes.plan(records);
    const kept = plan.copies.get('A')!.length;
    expect(kept).toBeGreaterThan(130);
    expect(kept).toBeLessThan(270);
    expect(plan.matched.get('s')).toBe(2000);
    expect(plan.sampledOut.get('s')).toBe(2000 - kept);
    expect(plan.filtered.sampled_out).toBe(2000 - kept);
    // Deterministic: the same events again, from a fresh compilation too.
    const again = compileRoutes([
      route('s', { transforms: [{ type: 'sample', rate: 0.1 }], destination_ids: ['A'] }),
    ]).plan(records);
    expect(again.copies.get('A')!.map((c) => c.index)).toEqual(plan.copies.get('A')!.map((c) => c.index));

    // A sampled-out event on a final route stops there; on a non-final one, later routes still see it.
    const chain = compileRoutes([
      route('s', { final: false, transforms: [{ type: 'sample', rate: 0.1 }], destination_ids: ['A'] }),
      route('drop', { destination_ids: [] }),
    ]).plan(records);
    expect(chain.filtered.sampled_out).toBe(0);
    expect(chain.filtered.dropped_by_route).toBe(2000 - kept);
  });

  it('given texts, untransformed copies carry them as they are, one shared string per record', () => {
    const records = [
      rec({ class_uid: 1, message: 'a "quoted" ,"ocsf": text', nested: { list: [1, 2, { x: null }] } }),
      rec(
        { class_uid: 2, 'weird,"ocsf":key': true },
        { valid: false, issues: [{ path: ',"ocsf":', kind: 'x', message: '}' }] },
      ),
      rec({ class_uid: 3, emoji: '🙂\u2028' }),
    ];
    const specs = [route('a', { final: false, destination_ids: ['A', 'B'] }), route('b', { destination_ids: ['C'] })];
    const texts = records.map((r) => JSON.stringify(r.ocsf));
    const fast = compileRoutes(specs).plan(records, texts);
    const slow = compileRoutes(specs).plan(records);
    for (const d of ['A', 'B', 'C']) expect(fast.copies.get(d)).toEqual(slow.copies.get(d));
    for (let i = 0; i < records.length; i++) {
      expect(fast.copies.get('A')![i]!.line).toBe(texts[i]);
      expect(fast.copies.get('B')![i]!.line).toBe(fast.copies.get('A')![i]!.line);
    }
  });

  it('ocsfText cuts the event out of a stored line', () => {
    expect(ocsfText('{"id":"x","ocsf":{"a":1}}')).toBe('{"a":1}');
    expect(ocsfText('{"id":"x"}')).toBeUndefined();
  });

  it('destinations listed twice in a route get one copy; disabled routes never match', () => {
    const plan = compileRoutes([
      route('off', { enabled: false, destination_ids: ['X'] }),
      route('r', { destination_ids: ['A', 'A'] }),
    ]).plan([rec({})]);
    expect(plan.copies.get('A')).toHaveLength(1);
    expect(plan.copies.has('X')).toBe(false);
    expect(plan.matched.has('off')).toBe(false);
  });

  it('envelope conditions route per integration and stream', () => {
    const routes = compileRoutes([
      route('int7', {
        condition: {
          all: [
            { field: 'envelope.integration_id', op: 'eq', value: 7 },
            { field: 'envelope.stream', op: 'eq', value: 'dns' },
          ],
        },
        destination_ids: ['A'],
      }),
      route('rest', { destination_ids: ['B'] }),
    ]);
    const plan = routes.plan([
      rec({}, { integration_id: 7, stream: 'dns' }),
      rec({}, { integration_id: 7, stream: 'http' }),
    ]);
    expect(plan.copies.get('A')!.map((c) => c.index)).toEqual([0]);
    expect(plan.copies.get('B')!.map((c) => c.index)).toEqual([1]);
  });

  it('an invalid stored route throws a RouteCompileError naming it', () => {
    expect(() => compileRoutes([route('bad', { condition: { field: 'a', op: 'nope' } as never })])).toThrow(
      RouteCompileError,
    );
    try {
      compileRoutes([route('bad', { transforms: [{ type: 'sample', rate: 5 }] })]);
    } catch (e) {
      expect((e as RouteCompileError).routeId).toBe('bad');
      expect((e as RouteCompileError).problems[0]!.path).toBe('transforms[0].rate');
    }
  });

  it('validateRouteParts reports condition and transform problems together', () => {
    expect(validateRouteParts(null, [])).toEqual([]);
    expect(validateRouteParts({ field: 'message', op: 'exists' }, [{ type: 'mask' }])).toEqual([]);
    const problems = validateRouteParts({ any: [{ field: 'severity_id', op: 'gt', value: 'x' }] }, [
      { type: 'sample' },
    ]);
    expect(problems.map((p) => p.path)).toEqual(['condition.any[0].value', 'transforms[0].rate']);
    expect(validateRouteParts(undefined, undefined)).toEqual([]);
  });

  it('plans 1000 events through 10 routes quickly', () => {
    const specs = Array.from({ length: 10 }, (_, k) =>
      route(`r${k}`, {
        final: false,
        condition: { any: [cls(k), { field: 'actor.user.name', op: 'prefix', value: `u${k}` }] },
        destination_ids: [`D${k % 3}`],
      }),
    );
    const records = Array.from({ length: 1000 }, (_, i) =>
      rec({ class_uid: i % 12, actor: { user: { name: `u${i % 10}x` } }, message: 'x'.repeat(200) }),
    );
    const lines = records.map((r) => JSON.stringify(r.ocsf));
    const routes = compileRoutes(specs);
    routes.plan(records, lines);
    const start = performance.now();
    for (let n = 0; n < 20; n++) routes.plan(records, lines);
    const perBatch = (performance.now() - start) / 20;
    expect(perBatch).toBeLessThan(100); // typically 2-3 ms; generous for a loaded CI machine
  });
});

describe('field paths held to OCSF', () => {
  it('refuses, in conditions and transforms, a path no supported class has, with the closest', () => {
    const problems = validateRouteParts(
      {
        all: [
          { field: 'clas_uid', op: 'eq', value: 3002 },
          { field: 'unmapped.vendor_flag', op: 'exists' },
        ],
      },
      [{ type: 'keep_fields', fields: ['actor.usr', 'time'] }],
    );
    expect(problems).toEqual([
      expect.objectContaining({ path: 'condition.all[0].field', closest: 'class_uid' }),
      expect.objectContaining({ path: 'transforms[0].fields[0]', closest: 'actor.user' }),
    ]);
    expect(problems[0]!.message).toMatch(/^unknown field: .*'clas_uid'.*closest known field: 'class_uid'/);
  });

  it('accepts envelope fields, and any path under the any rule (stored parts)', () => {
    expect(validateRouteParts({ field: 'envelope.stream', op: 'eq', value: 's' }, [])).toEqual([]);
    expect(
      validateRouteParts({ field: 'clas_uid', op: 'exists' }, [{ type: 'drop_fields', fields: ['nope'] }], {
        fields: { condition: 'any', transforms: 'any' },
      }),
    ).toEqual([]);
  });

  it('still compiles a stored route with such a path: dispatch never breaks on a rule that came later', () => {
    const plan = compileRoutes([
      route('legacy', { condition: { field: 'clas_uid', op: 'eq', value: 3002 }, destination_ids: ['D'] }),
    ]).plan([rec({ class_uid: 3002 })]);
    expect(plan.filtered.no_route).toBe(1);
  });
});
