// Cross-check: the committed definitions.json is exactly what the extractor derives from
// the official schema now, and the catalog built from it agrees, attribute by attribute,
// with the official file read independently of the extractor.
import { readFileSync, statSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { officialCatalog, officialSchema } from '../../test/support/ocsf-official.js';
import { createCatalog, ocsfCatalog, OCSF_VERSION, OcsfDefinitionError } from './catalog.js';
import definitions from './definitions.json' with { type: 'json' };
import { extractDefinitions, OcsfExtractError } from './extract.js';
import type { OcsfDefinitions, RawAttribute } from './format.js';
import { SUPPORTED_CLASS_UIDS } from './supported.js';
import type { OcsfAttribute } from './types.js';

const committed = definitions as unknown as OcsfDefinitions;

// The classes the issue names, with the captions OCSF gives them.
const ISSUE_CLASSES: [number, string][] = [
  [3002, 'Authentication'],
  [3001, 'Account Change'],
  [3006, 'Group Management'],
  [3004, 'Entity Management'],
  [6003, 'API Activity'],
  [6001, 'Web Resources Activity'],
  [2004, 'Detection Finding'],
  [4001, 'Network Activity'],
  [4002, 'HTTP Activity'],
  [4003, 'DNS Activity'],
  [1007, 'Process Activity'],
  [1001, 'File System Activity'],
  // Issue 19, part 3: the network and host sources (decision 0046).
  [1002, 'Kernel Extension Activity'],
  [1005, 'Module Activity'],
  [1008, 'Event Log Activity'],
  [3003, 'Authorize Session'],
  [4004, 'DHCP Activity'],
  [4005, 'RDP Activity'],
  [4007, 'SSH Activity'],
  [4009, 'Email Activity'],
  [4010, 'Network File Activity'],
  [201001, 'Registry Key Activity'],
  [201002, 'Registry Value Activity'],
  [2002, 'Vulnerability Finding'],
  [2003, 'Compliance Finding'],
  [6006, 'File Hosting Activity'],
  // Issue 26: Base Event for vendor events OCSF has no class for, and the classes real samples need.
  [0, 'Base Event'],
  [1006, 'Scheduled Job Activity'],
  [1009, 'Script Activity'],
  [2005, 'Incident Finding'],
  [3005, 'User Access Management'],
  [4006, 'SMB Activity'],
  [4008, 'FTP Activity'],
  [4013, 'NTP Activity'],
  [4014, 'Tunnel Activity'],
  [6002, 'Application Lifecycle'],
  [6005, 'Datastore Activity'],
  [6007, 'Scan Activity'],
  [201003, 'Windows Resource Activity'],
  [201004, 'Windows Service Activity'],
];

/** The catalog's view of an attribute, in the official file's vocabulary. */
function asRaw(a: OcsfAttribute): Partial<RawAttribute> {
  return {
    caption: a.caption,
    type: a.type,
    object_type: a.objectType,
    is_array: a.isArray,
    requirement: a.requirement,
    sibling: a.sibling,
    profiles: a.profiles ? [...a.profiles] : undefined,
    observable: a.observable,
    enum: a.enum ? { ...a.enum } : undefined,
  };
}

function official(a: RawAttribute): Partial<RawAttribute> {
  return {
    caption: a.caption,
    type: a.type,
    object_type: a.object_type,
    is_array: a.is_array === true,
    requirement: a.requirement,
    sibling: a.sibling,
    profiles: a.profiles?.length ? a.profiles : undefined,
    observable: a.observable,
    enum: a.enum,
  };
}

describe('OCSF definitions', () => {
  it('are in sync with third_party/ocsf-schema/schema-1.8.0.json (run `npm run ocsf:extract` when this fails)', () => {
    expect(committed).toEqual(extractDefinitions(officialSchema(), SUPPORTED_CLASS_UIDS));
  });

  it('hold every class the issue lists, with its uid and caption, and nothing else', () => {
    const catalog = ocsfCatalog();
    expect(catalog.version).toBe(OCSF_VERSION);
    expect(committed.ocsf_version).toBe(OCSF_VERSION);
    for (const [uid, caption] of ISSUE_CLASSES) expect(catalog.classByUid(uid)?.caption, `class ${uid}`).toBe(caption);
    expect(
      catalog
        .classes()
        .map((c) => c.uid)
        .sort(),
    ).toEqual([...SUPPORTED_CLASS_UIDS].sort());
    expect([...SUPPORTED_CLASS_UIDS].sort()).toEqual(ISSUE_CLASSES.map(([uid]) => uid).sort());
  });

  it('match the official classes attribute by attribute (types, requirements, enums, siblings, profiles)', () => {
    const schema = officialSchema();
    const catalog = ocsfCatalog();
    for (const uid of SUPPORTED_CLASS_UIDS) {
      const mine = catalog.classByUid(uid)!;
      const theirs = Object.values(schema.classes).find((c) => c.uid === uid)!;
      expect(mine.name).toBe(theirs.name);
      expect(mine.categoryUid).toBe(theirs.category_uid);
      expect(mine.categoryName).toBe(theirs.category_name ?? 'Uncategorized'); // Base Event: the category_uid enum's caption
      expect([...mine.profiles]).toEqual(theirs.profiles);
      expect(mine.constraints ?? {}).toEqual(theirs.constraints ?? {});
      expect(Object.keys(mine.attributes).sort()).toEqual(Object.keys(theirs.attributes).sort());
      for (const [name, attr] of Object.entries(theirs.attributes)) {
        expect(asRaw(mine.attributes[name]!), `${theirs.name}.${name}`).toEqual(official(attr));
      }
    }
  });

  it('match the official objects reachable from the supported classes, and every reference resolves', () => {
    const schema = officialSchema();
    const catalog = ocsfCatalog();
    const seen = new Set<string>();
    const queue = SUPPORTED_CLASS_UIDS.flatMap((uid) => Object.values(catalog.classByUid(uid)!.attributes));
    while (queue.length) {
      const attr = queue.pop()!;
      if (attr.objectType === undefined) {
        expect(catalog.type(attr.type), attr.type).toBeDefined();
        continue;
      }
      if (seen.has(attr.objectType)) continue;
      seen.add(attr.objectType);
      const mine = catalog.object(attr.objectType);
      const theirs = schema.objects[attr.objectType]!;
      expect(mine, attr.objectType).toBeDefined();
      expect(mine!.constraints ?? {}).toEqual(theirs.constraints ?? {});
      expect(Object.keys(mine!.attributes).sort()).toEqual(Object.keys(theirs.attributes).sort());
      for (const [name, a] of Object.entries(theirs.attributes)) {
        expect(asRaw(mine!.attributes[name]!), `${attr.objectType}.${name}`).toEqual(official(a));
      }
      queue.push(...Object.values(mine!.attributes));
    }
    // Nothing unreachable is carried.
    expect(Object.keys(committed.objects).sort()).toEqual([...seen].sort());
    for (const [name, type] of Object.entries(committed.types))
      expect(type).toEqual(expect.objectContaining({ caption: schema.types[name]!.caption }));
  });

  it('agree with the spot checks of SOURCE.md (authentication, api_activity)', () => {
    const required = (uid: number) =>
      Object.values(ocsfCatalog().classByUid(uid)!.attributes)
        .filter((a) => a.requirement === 'required')
        .map((a) => a.name)
        .sort();
    expect(required(3002)).toEqual([
      'activity_id',
      'category_uid',
      'class_uid',
      'cloud',
      'metadata',
      'osint',
      'severity_id',
      'time',
      'type_uid',
      'user',
    ]);
    expect(required(6003)).toEqual([
      'activity_id',
      'actor',
      'api',
      'category_uid',
      'class_uid',
      'cloud',
      'metadata',
      'osint',
      'severity_id',
      'src_endpoint',
      'time',
      'type_uid',
    ]);
    const auth = ocsfCatalog().classByUid(3002)!;
    expect(Object.keys(auth.attributes)).toHaveLength(75);
    expect(Object.keys(auth.attributes.type_uid!.enum!)).toEqual([
      '300200',
      '300201',
      '300202',
      '300203',
      '300204',
      '300205',
      '300206',
      '300207',
      '300299',
    ]);
    expect(Object.keys(auth.attributes.auth_protocol_id!.enum!)).toHaveLength(14);
    expect(auth.attributes.cloud!.profiles).toEqual(['cloud']);
  });

  it('stay small and carry the OCSF NOTICE', () => {
    expect(statSync(new URL('./definitions.json', import.meta.url)).size).toBeLessThan(700_000);
    const notice = readFileSync(new URL('./NOTICE', import.meta.url), 'utf8');
    expect(notice).toContain('Copyright © OCSF a Series of LF Projects, LLC');
    expect(notice).toContain('Apache');
    expect(notice).toContain(committed.source!.commit);
  });

  it('the official catalog builds with the same code and holds every official class', () => {
    const catalog = officialCatalog();
    expect(catalog.classes()).toHaveLength(Object.keys(officialSchema().classes).length);
    expect(catalog.classByUid(5001)?.name).toBe('inventory_info');
  });

  it('extraction fails clearly for a class the schema lacks; a broken file fails when built', () => {
    expect(() => extractDefinitions(officialSchema(), [9999])).toThrow(OcsfExtractError);
    const broken = structuredClone(committed);
    broken.classes.authentication!.attributes.user!.object_type = 'no_such_object';
    expect(() => createCatalog(broken)).toThrow(OcsfDefinitionError);
  });
});
