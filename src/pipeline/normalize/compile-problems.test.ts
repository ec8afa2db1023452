import { describe, expect, it } from 'vitest';
import { ocsfCatalog } from '../../ocsf/index.js';
import { compileMapping, MappingDocumentSchema, validateMappingDocument } from './compile.js';
import { MappingCompileError, type MappingProblem } from './types.js';

const catalog = ocsfCatalog();
const product = { name: 'Gate', vendor_name: 'Example Corp' };

function rule(set: unknown[], extra: Record<string, unknown> = {}) {
  return { product, rules: [{ name: 'r', class_uid: 3002, activity_id: 1, set, ...extra }] };
}

function problems(doc: unknown): MappingProblem[] {
  return validateMappingDocument(doc, catalog);
}

describe('document problems, each with its location', () => {
  it.each([
    ['not an object', 'x', '/', 'must be object'],
    ['no product', { rules: [{ name: 'r', class_uid: 3002, activity_id: 1 }] }, '/', 'product'],
    ['no rules', { product, rules: [] }, '/rules', 'fewer than 1'],
    [
      'unknown property',
      { product, rules: [{ name: 'r', class_uid: 3002, activity_id: 1 }], colour: 1 },
      '/colour',
      'unknown property',
    ],
    [
      'unknown assignment key',
      rule([{ target: 'message', from: 'm', form: 'x' }]),
      '/rules/0/set/0/form',
      'unknown property',
    ],
    [
      'unknown cast',
      rule([{ target: 'message', from: 'm', cast: 'text' }]),
      '/rules/0/set/0/cast',
      'must be one of string, integer',
    ],
    [
      'bad on_error',
      rule([{ target: 'message', from: 'm', on_error: 'ignore' }]),
      '/rules/0/set/0/on_error',
      'must be one of fail, skip',
    ],
    ['bad from', rule([{ target: 'message', from: [] }]), '/rules/0/set/0/from', 'a path or a non-empty list of paths'],
    [
      'bad activity',
      { product, rules: [{ name: 'r', class_uid: 3002, activity_id: 'logon' }] },
      '/rules/0/activity_id',
      'an integer or {from, lookup}',
    ],
    [
      'unknown class',
      { product, rules: [{ name: 'r', class_uid: 9999, activity_id: 1 }] },
      '/rules/0/class_uid',
      'unknown OCSF class 9999',
    ],
    [
      'activity not in the class',
      { product, rules: [{ name: 'r', class_uid: 3002, activity_id: 42 }] },
      '/rules/0/activity_id',
      '42 is not a value of activity_id',
    ],
    [
      'activity lookup value',
      {
        product,
        rules: [{ name: 'r', class_uid: 3002, activity_id: { from: 'op', lookup: { map: { a: 1, b: 17 } } } }],
      },
      '/rules/0/activity_id/lookup/map/b',
      '17 is not a value',
    ],
    [
      'activity path',
      { product, rules: [{ name: 'r', class_uid: 3002, activity_id: { from: 'a..b', lookup: { map: {} } } }] },
      '/rules/0/activity_id/from',
      'invalid path',
    ],
    [
      'rule condition',
      { product, rules: [{ name: 'r', class_uid: 3002, activity_id: 1, when: { path: 'x', matches: '[' } }] },
      '/rules/0/when/matches',
      'invalid regular expression',
    ],
    [
      'unknown attribute',
      rule([{ target: 'user.nickname', from: 'n' }]),
      '/rules/0/set/0/target',
      'no attribute "user.nickname"',
    ],
    [
      'profile attribute without the profile',
      rule([{ target: 'cloud.provider', value: 'AWS' }]),
      '/rules/0/set/0/target',
      'profile cloud',
    ],
    [
      "profile no rule's class has",
      { ...rule([]), profiles: ['trace', 'cloud'] },
      '/profiles/0',
      'no rule\'s class has the profile "trace"',
    ],
    ['owned attribute', rule([{ target: 'type_uid', value: 1 }]), '/rules/0/set/0/target', 'set by the compiler'],
    [
      'owned metadata.version',
      rule([{ target: 'metadata.version', value: '1' }]),
      '/rules/0/set/0/target',
      'set by the compiler',
    ],
    ['unmapped is owned', rule([{ target: 'unmapped.x', value: 1 }]), '/rules/0/set/0/target', 'set by the compiler'],
    ['target syntax', rule([{ target: 'user..name', from: 'n' }]), '/rules/0/set/0/target', 'not an attribute name'],
    [
      'prototype target',
      rule([{ target: 'unmapped.__proto__', value: 1 }]),
      '/rules/0/set/0/target',
      'cannot be a target',
    ],
    [
      'a list without index',
      rule([{ target: 'metadata.tags.name', from: 'n' }]),
      '/rules/0/set/0/target',
      '"metadata.tags" is a list',
    ],
    [
      'brackets on a non-list',
      rule([{ target: 'user[0].name', from: 'n' }]),
      '/rules/0/set/0/target',
      '"user" is not a list',
    ],
    [
      'append in the middle',
      rule([{ target: 'metadata.tags[].name', from: 'n' }]),
      '/rules/0/set/0/target',
      'last attribute only',
    ],
    [
      'lookup value not in the enum',
      rule([{ target: 'status_id', from: 's', lookup: { map: { ok: 1, bad: 'failure' } } }]),
      '/rules/0/set/0/lookup/map/bad',
      '"failure" is not a value of status_id (0 Unknown, 1 Success, 2 Failure, 99 Other)',
    ],
    [
      'lookup default not in the enum',
      rule([{ target: 'status_id', from: 's', lookup: { map: {}, default: 5 } }]),
      '/rules/0/set/0/lookup/default',
      '5 is not a value',
    ],
    [
      'constant not in the enum',
      rule([{ target: 'severity_id', value: 9 }]),
      '/rules/0/set/0/value',
      '9 is not a value of severity_id',
    ],
    [
      'default not in the enum',
      rule([{ target: 'severity_id', from: 'x', default: '1' }]),
      '/rules/0/set/0/default',
      '"1" is not a value',
    ],
    ['no source', rule([{ target: 'message' }]), '/rules/0/set/0', 'needs one of from, value, template or each'],
    ['two sources', rule([{ target: 'message', from: 'm', value: 'x' }]), '/rules/0/set/0', 'has from and value'],
    ['set without each', rule([{ target: 'message', from: 'm', set: [] }]), '/rules/0/set/0/set', 'set goes with each'],
    ['each without set', rule([{ target: 'metadata.labels', each: 'tags' }]), '/rules/0/set/0/each', 'each needs set'],
    [
      'cast on each',
      rule([{ target: 'metadata.tags', each: 'tags', cast: 'string', set: [] }]),
      '/rules/0/set/0/cast',
      'use it inside set',
    ],
    [
      'each on a non-list',
      rule([{ target: 'user', each: 'users', set: [{ target: 'name', from: 'n' }] }]),
      '/rules/0/set/0/target',
      'not one',
    ],
    [
      'inside each',
      {
        product,
        rules: [
          {
            name: 'r',
            class_uid: 6003,
            activity_id: 1,
            set: [{ target: 'resources', each: 'rs', set: [{ target: 'nope', from: 'x' }] }],
          },
        ],
      },
      '/rules/0/set/0/set/0/target',
      'no attribute "resources.nope"',
    ],
    [
      'format without a timestamp cast',
      rule([{ target: 'message', from: 'm', format: 'clf' }]),
      '/rules/0/set/0/format',
      'timestamp and datetime',
    ],
    ['invalid path', rule([{ target: 'message', from: 'a[x]' }]), '/rules/0/set/0/from', 'invalid path'],
    [
      'invalid path in a list',
      rule([{ target: 'message', from: ['a', 'b..c'] }]),
      '/rules/0/set/0/from/1',
      'invalid path',
    ],
    [
      'invalid template',
      rule([{ target: 'message', template: 'hello {name' }]),
      '/rules/0/set/0/template',
      'unclosed {',
    ],
    [
      'invalid condition',
      rule([{ target: 'message', from: 'm', when: { path: 'a', gt: 'x' } }]),
      '/rules/0/set/0/when/gt',
      'must be a number',
    ],
    [
      'a list into one value',
      rule([{ target: 'user.name', from: 'users[*].name' }]),
      '/rules/0/set/0/from',
      'holds one value',
    ],
    ['known field path', { ...rule([]), known_fields: ['ok', 'a..b'] }, '/known_fields/1', 'invalid path'],
    ['known field filter', { ...rule([]), known_fields: ['target[?type=User]'] }, '/known_fields/0', 'not a filter'],
    ['known field @', { ...rule([]), known_fields: ['@'] }, '/known_fields/0', 'whole event'],
    ['known field not a string', { ...rule([]), known_fields: [1] }, '/known_fields/0', 'must be string'],
    [
      'lookup listed twice',
      rule([{ target: 'message', from: 'm', lookup: { map: { A: 'x', a: 'y' }, ignore_case: true } }]),
      '/rules/0/set/0/lookup/map',
      'listed twice',
    ],
  ])('%s', (_name, doc, at, message) => {
    const found = problems(doc);
    const hit = found.find((p) => p.at === at);
    expect(hit, JSON.stringify(found)).toBeDefined();
    expect(hit!.message).toContain(message);
  });

  it('lists every problem at once', () => {
    const found = problems(
      rule(
        [
          { target: 'user.nickname', from: 'n' },
          { target: 'status_id', value: 7 },
          { target: 'message', template: '{' },
        ],
        { when: { path: 'x', nope: 1 } },
      ),
    );
    expect(found.map((p) => p.at)).toEqual([
      '/rules/0/when',
      '/rules/0/set/0/target',
      '/rules/0/set/1/value',
      '/rules/0/set/2/template',
    ]);
  });

  it('lists shape problems beyond the first few', () => {
    const set = Array.from({ length: 12 }, (_, i) => ({ target: 'message', from: 'm', [`bad${i}`]: 1 }));
    expect(problems(rule(set)).map((p) => p.at)).toEqual(set.map((_, i) => `/rules/0/set/${i}/bad${i}`));
  });

  it('a list into a list attribute, or joined by a template, is fine', () => {
    expect(
      problems(
        rule([
          { target: 'metadata.labels', from: 'tags[*]' },
          { target: 'message', template: '{tags[*]}' },
          { target: 'metadata.labels[]', from: 'more[*].x' },
        ]),
      ),
    ).toEqual([]);
  });

  it('compileMapping throws MappingCompileError with the same problems', () => {
    const doc = rule([{ target: 'user.nickname', from: 'n' }]);
    try {
      compileMapping(doc as never, catalog);
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(MappingCompileError);
      expect((e as MappingCompileError).problems).toEqual(problems(doc));
      expect((e as Error).message).toContain('/rules/0/set/0/target');
    }
  });

  it('the schema can be embedded in any route schema (no $id, no $ref)', () => {
    const text = JSON.stringify(MappingDocumentSchema);
    expect(text).not.toContain('"$id"');
    expect(text).not.toContain('"$ref"');
    expect(text.length).toBeLessThan(100_000);
  });

  it('a valid document has no problems', () => {
    expect(problems(rule([{ target: 'message', from: 'm' }]))).toEqual([]);
  });
});

describe('defaults across classes', () => {
  const two = (defaults: unknown[]) => ({
    product,
    defaults,
    rules: [
      { name: 'auth', when: { path: 'k', eq: 'a' }, class_uid: 3002, activity_id: 1 },
      { name: 'api', class_uid: 6003, activity_id: 1 },
    ],
  });

  it('a default is skipped by rules whose class lacks the attribute', () => {
    // auth_protocol_id exists in Authentication, not in API Activity
    const doc = two([{ target: 'auth_protocol_id', value: 2 }]);
    expect(problems(doc)).toEqual([]);
    const m = compileMapping(doc as never, catalog);
    const ctx = { receivedAtMs: 0 };
    expect(m.map({ k: 'a' }, ctx)).toMatchObject({
      ok: true,
      event: { auth_protocol_id: 2, auth_protocol: 'Kerberos' },
    });
    const api = m.map({ k: 'b' }, ctx);
    expect(api.ok && api.event.auth_protocol_id).toBe(undefined);
  });

  it("a default no rule's class has is a problem", () => {
    expect(
      problems(
        two([
          { target: 'message', value: 'x' },
          { target: 'no_such', value: 1 },
        ]),
      ),
    ).toEqual([{ at: '/defaults/1/target', message: expect.stringContaining("no rule's class has this attribute") }]);
  });

  it('other problems of a default are reported once', () => {
    expect(problems(two([{ target: 'message', template: '{' }]))).toHaveLength(1);
  });
});
