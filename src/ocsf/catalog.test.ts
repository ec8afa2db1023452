import { describe, expect, it } from 'vitest';
import { officialCatalog } from '../../test/support/ocsf-official.js';
import { ocsfCatalog } from './catalog.js';
import { observableTypes, OCSF_VERSION, SUPPORTED_CLASS_UIDS } from './index.js';

describe('OCSF catalog', () => {
  const catalog = ocsfCatalog();

  it('is one instance, sorted by uid, for version 1.8.0', () => {
    expect(ocsfCatalog()).toBe(catalog);
    expect(catalog.version).toBe(OCSF_VERSION);
    expect(catalog.classes().map((c) => c.uid)).toEqual([...SUPPORTED_CLASS_UIDS].sort((a, b) => a - b));
    expect(catalog.classByUid(3002)).toMatchObject({
      name: 'authentication',
      caption: 'Authentication',
      categoryUid: 3,
      categoryName: 'Identity & Access Management',
    });
    expect(catalog.classByUid(5001)).toBeUndefined();
  });

  it('resolves dotted paths through objects; array elements are transparent', () => {
    expect(catalog.resolve(3002, 'actor.user.name')).toMatchObject({
      name: 'name',
      type: 'username_t',
      isArray: false,
    });
    expect(catalog.resolve(3002, 'user.groups')).toMatchObject({
      type: 'object_t',
      objectType: 'group',
      isArray: true,
    });
    expect(catalog.resolve(3002, 'user.groups.name')).toMatchObject({ type: 'string_t' });
    expect(catalog.resolve(6003, 'resources.uid')).toMatchObject({ type: 'resource_uid_t' });
    expect(catalog.resolve(6003, 'resources[2].uid')).toBe(catalog.resolve(6003, 'resources.uid'));
    expect(catalog.resolve(6003, 'resources[].uid')).toBe(catalog.resolve(6003, 'resources.uid'));
    expect(catalog.resolve(3002, 'activity_id')).toMatchObject({
      sibling: 'activity_name',
      requirement: 'required',
      enum: expect.objectContaining({ '1': 'Logon', '99': 'Other' }),
    });
    expect(catalog.resolve(3002, 'cloud')).toMatchObject({ requirement: 'required', profiles: ['cloud'] });
    expect(catalog.resolve(1007, 'process.parent_process.parent_process.pid')).toMatchObject({ type: 'integer_t' });
  });

  it('resolves nothing for unknown paths, unknown classes, or inside free-form objects', () => {
    expect(catalog.resolve(3002, 'user.nickname')).toBeUndefined();
    expect(catalog.resolve(3002, 'time.value')).toBeUndefined();
    expect(catalog.resolve(9999, 'time')).toBeUndefined();
    expect(catalog.resolve(3002, 'unmapped')).toMatchObject({ objectType: 'object' });
    expect(catalog.resolve(3002, 'unmapped.anything')).toBeUndefined();
    expect(catalog.resolve(3002, 'toString')).toBeUndefined();
  });

  it('knows objects and dictionary types with their base types', () => {
    expect(catalog.object('user')?.constraints).toEqual({ at_least_one: ['account', 'name', 'uid'] });
    expect(catalog.object('no_such_object')).toBeUndefined();
    expect(catalog.type('timestamp_t')).toMatchObject({ base: 'long_t' });
    expect(catalog.type('port_t')).toMatchObject({ base: 'integer_t', range: [0, 65535], observable: 11 });
    expect(catalog.type('string_t')).toMatchObject({ base: 'string_t' });
  });

  it('lists observable type ids with their captions', () => {
    const types = observableTypes();
    expect(types.get(2)).toBe('IP Address');
    expect(types.get(99)).toBe('Other');
    expect(types.size).toBe(50); // 0 (Unknown) to 48, and 99 (Other)
    expect(observableTypes(officialCatalog())).toEqual(types);
  });
});
