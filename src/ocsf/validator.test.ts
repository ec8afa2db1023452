import { describe, expect, it } from 'vitest';
import { officialCatalog } from '../../test/support/ocsf-official.js';
import { ocsfCatalog } from './catalog.js';
import { compileValidator, createValidator, MAX_DEPTH, MAX_ISSUES } from './validator.js';
import type { OcsfIssue } from './types.js';

type Event = Record<string, unknown>;

const metadata = { version: '1.8.0', product: { name: 'Okta', vendor_name: 'Okta' }, uid: 'evt-1' };

/** A complete Authentication (3002) Logon, as a mapping would produce it. */
function logon(): Event {
  return {
    class_uid: 3002,
    class_name: 'Authentication',
    category_uid: 3,
    category_name: 'Identity & Access Management',
    activity_id: 1,
    activity_name: 'Logon',
    type_uid: 300201,
    type_name: 'Authentication: Logon',
    severity_id: 1,
    severity: 'Informational',
    status_id: 1,
    status: 'Success',
    time: 1_700_000_000_000,
    message: 'User login to Okta',
    is_mfa: true,
    auth_protocol_id: 5,
    auth_protocol: 'SAML',
    metadata: {
      ...metadata,
      product: { ...metadata.product },
      log_name: 'System Log',
      original_time: '2023-11-14T22:13:20Z',
    },
    user: {
      name: 'alice',
      uid: '00u1',
      email_addr: 'alice@example.com',
      type_id: 1,
      type: 'User',
      groups: [{ name: 'admins' }, { uid: 'g2' }],
    },
    src_endpoint: {
      ip: '203.0.113.7',
      port: 51234,
      location: { country: 'DE', city: 'Berlin', lat: 52.52, long: 13.4 },
    },
    dst_endpoint: { hostname: 'example.okta.com', mac: '00:1a:2b:3c:4d:5e' },
    service: { name: 'Okta', uid: 'okta' },
    session: { uid: 's-1', is_remote: false, created_time: 1_700_000_000_000 },
    observables: [{ name: 'src_endpoint.ip', type_id: 2, type: 'IP Address', value: '203.0.113.7' }],
    unmapped: { debugContext: { debugData: { requestUri: '/login', anything: [1, { deep: true }] } } },
  };
}

function base(classUid: number, activityId: number, extra: Event): Event {
  return {
    class_uid: classUid,
    activity_id: activityId,
    type_uid: classUid * 100 + activityId,
    category_uid: Math.floor(classUid / 1000),
    severity_id: 1,
    time: 1_700_000_000_000,
    metadata,
    ...extra,
  };
}

const actor = { user: { name: 'bob', uid: 'u-2' } };
const device = { hostname: 'ws-1', type_id: 2, ip: '10.1.2.3' };

// One valid event for each supported class other than Authentication.
const VALID: [string, Event][] = [
  ['account_change', base(3001, 3, { user: { name: 'bob' }, activity_name: 'Password Change' })],
  ['entity_management', base(3004, 1, { entity: { name: 'policy-7', type: 'Policy' } })],
  ['group_management', base(3006, 3, { group: { name: 'admins' }, user: { uid: 'u-9' } })],
  [
    'api_activity',
    base(6003, 2, {
      actor,
      api: { operation: 'GetObject', service: { name: 's3' } },
      src_endpoint: { ip: '198.51.100.1' },
      resources: [{ uid: 'arn:1', type: 'bucket' }],
    }),
  ],
  [
    'web_resources_activity',
    base(6001, 2, { web_resources: [{ name: 'page', uid: 'w1', url_string: 'https://example.com/a' }] }),
  ],
  [
    'detection_finding',
    base(2004, 1, {
      finding_info: { uid: 'f-1', title: 'Brute force', types: ['credential'] },
      risk_level_id: 2,
      risk_level: 'Medium',
    }),
  ],
  [
    'network_activity',
    base(4001, 6, {
      src_endpoint: { ip: '10.0.0.1', port: 1234 },
      dst_endpoint: { ip: '2001:db8::1', port: 443 },
      traffic: { bytes_in: 10, bytes_out: 20 },
    }),
  ],
  [
    'http_activity',
    base(4002, 3, {
      http_request: { http_method: 'GET', url: { url_string: 'https://example.com/x', path: '/x' } },
      http_response: { code: 200 },
    }),
  ],
  [
    'dns_activity',
    base(4003, 1, {
      query: { hostname: 'example.com', type: 'A' },
      src_endpoint: { ip: '10.0.0.2' },
      answers: [{ rdata: '93.184.216.34' }],
    }),
  ],
  [
    'process_activity',
    base(1007, 1, {
      actor,
      device,
      process: {
        pid: 42,
        name: 'bash',
        cmd_line: 'bash -c true',
        file: { name: 'bash', type_id: 1, path: '/bin/bash' },
      },
    }),
  ],
  [
    'file_activity',
    base(1001, 1, {
      actor,
      device,
      file: { name: 'a.txt', type_id: 1, size: 12, hashes: [{ algorithm_id: 3, value: 'abc' }] },
    }),
  ],
];

const validator = createValidator(ocsfCatalog());
const official = createValidator(officialCatalog());

function issues(event: Event): OcsfIssue[] {
  return validator.validate(event);
}

/** The issues as [kind, path] pairs, the part the tests pin down. */
function found(event: Event): [string, string][] {
  return issues(event).map((i) => [i.kind, i.path]);
}

describe('OCSF validator: valid events', () => {
  it('a complete Authentication event has no issues, against the project and the official definitions', () => {
    expect(issues(logon())).toEqual([]);
    expect(official.validate(logon())).toEqual([]);
  });

  it.each(VALID)('a valid %s event has no issues, against both', (_name, event) => {
    expect(issues(event)).toEqual([]);
    expect(official.validate(event)).toEqual([]);
  });

  it('returns one shared, frozen empty array for valid events', () => {
    const a = issues(logon());
    expect(a).toBe(issues(VALID[0]![1]));
    expect(Object.isFrozen(a)).toBe(true);
  });

  it('ignores whatever is under unmapped, and treats null as absent', () => {
    expect(
      issues({ ...logon(), unmapped: { x: { 'odd key': [null, { y: 1 }] } }, message: null, whatever: null }),
    ).toEqual([]);
  });
});

describe('OCSF validator: issues', () => {
  it('unknown or missing class_uid -> unknown_class', () => {
    expect(found({ ...logon(), class_uid: 9999 })).toEqual([['unknown_class', 'class_uid']]);
    expect(found({ ...logon(), class_uid: 5001 })).toEqual([['unknown_class', 'class_uid']]); // official, not supported
    expect(found({ ...logon(), class_uid: undefined })).toEqual([['unknown_class', 'class_uid']]);
    expect(official.validate({ ...logon(), class_uid: 5001 }).map((i) => i.kind)).not.toContain('unknown_class');
  });

  it('type_uid must be class_uid * 100 + activity_id', () => {
    const [issue] = issues({ ...logon(), type_uid: 300202, type_name: 'Authentication: Logoff' });
    expect(issue).toEqual({ kind: 'type_uid', path: 'type_uid', message: expect.stringContaining('300201') });
  });

  it('category_uid must be the class category', () => {
    expect(found({ ...logon(), category_uid: 4, category_name: undefined })).toEqual([['type', 'category_uid']]);
  });

  it('captions must match: class_name, category_name, activity_name, type_name, and enum siblings deeper down', () => {
    expect(found({ ...logon(), class_name: 'Auth' })).toEqual([['caption', 'class_name']]);
    expect(found({ ...logon(), category_name: 'IAM' })).toEqual([['caption', 'category_name']]);
    expect(found({ ...logon(), activity_name: 'Login' })).toEqual([['caption', 'activity_name']]);
    expect(found({ ...logon(), type_name: 'Authentication: Logoff' })).toEqual([['caption', 'type_name']]);
    expect(found({ ...logon(), user: { name: 'a', type_id: 1, type: 'Admin' } })).toEqual([['caption', 'user.type']]);
  });

  it('99 (Other) allows any caption; other values do not', () => {
    const other = {
      ...logon(),
      activity_id: 99,
      activity_name: 'Passwordless',
      type_uid: 300299,
      type_name: 'Authentication: Passwordless',
      auth_protocol_id: 99,
      auth_protocol: 'FIDO2',
    };
    expect(issues(other)).toEqual([]);
    expect(official.validate(other)).toEqual([]);
    expect(found({ ...logon(), auth_protocol_id: 0, auth_protocol: 'FIDO2' })).toEqual([['caption', 'auth_protocol']]);
  });

  it('enum values must be listed', () => {
    expect(found({ ...logon(), auth_protocol_id: 42, auth_protocol: undefined })).toEqual([
      ['enum', 'auth_protocol_id'],
    ]);
    expect(found({ ...logon(), severity_id: 7, severity: undefined })).toEqual([['enum', 'severity_id']]);
    // An unknown activity: the enum and the type_uid both say so.
    expect(
      found({ ...logon(), activity_id: 55, activity_name: undefined, type_uid: 300255, type_name: undefined }),
    ).toEqual([['enum', 'activity_id']]);
  });

  it('required attributes, at the top and inside present objects', () => {
    const { user: _user, time: _time, ...rest } = logon();
    expect(found(rest)).toEqual([
      ['missing_required', 'time'],
      ['missing_required', 'user'],
    ]);
    expect(found({ ...logon(), observables: [{ name: 'x', value: 'y' }] })).toEqual([
      ['missing_required', 'observables[0].type_id'],
    ]);
    expect(found({ ...logon(), metadata: { product: { name: 'x' } } })).toEqual([
      ['missing_required', 'metadata.version'],
    ]);
  });

  it('profile attributes exist only when metadata.profiles lists the profile, and are then required', () => {
    const cloudEvent = { ...logon(), metadata: { ...metadata, profiles: ['cloud'] } };
    expect(found(cloudEvent)).toEqual([['missing_required', 'cloud']]);
    expect(issues({ ...cloudEvent, cloud: { provider: 'AWS', region: 'eu-west-1' } })).toEqual([]);
    expect(found({ ...cloudEvent, cloud: { region: 'eu-west-1' } })).toEqual([['missing_required', 'cloud.provider']]);
    // Without the profile, the attribute is not part of the class at all.
    expect(found({ ...logon(), cloud: { provider: 'AWS' } })).toEqual([['unknown_attribute', 'cloud']]);
    expect(found({ ...logon(), time_dt: '2023-11-14T22:13:20Z' })).toEqual([['unknown_attribute', 'time_dt']]);
    const dated = { ...logon(), metadata: { ...metadata, profiles: ['datetime'] }, time_dt: '2023-11-14T22:13:20.5Z' };
    expect(issues(dated)).toEqual([]);
    expect(found({ ...dated, time_dt: '14/11/2023' })).toEqual([['type', 'time_dt']]);
    // Profiles reach into objects too (metadata.data_classifications is in data_classification).
    expect(found({ ...logon(), metadata: { ...metadata, data_classifications: [{ category_id: 1 }] } })).toEqual([
      ['unknown_attribute', 'metadata.data_classifications'],
    ]);
  });

  it('types of scalars', () => {
    const cases: [Event, string][] = [
      [{ time: '2023-11-14T22:13:20Z' }, 'time'],
      [{ time: 1.5 }, 'time'],
      [{ is_mfa: 'true' }, 'is_mfa'],
      [{ message: 12 }, 'message'],
      [{ severity_id: 2 ** 40 }, 'severity_id'],
      [{ src_endpoint: { ip: '999.1.1.1' } }, 'src_endpoint.ip'],
      [{ src_endpoint: { ip: '10.0.0.1', port: 65536 } }, 'src_endpoint.port'],
      [{ src_endpoint: { ip: '10.0.0.1', location: { country: 'DE', lat: 'north' } } }, 'src_endpoint.location.lat'],
      [{ dst_endpoint: { hostname: 'h', mac: '00:1a:2b' } }, 'dst_endpoint.mac'],
      [{ user: { name: 'a', email_addr: 'not-an-email' } }, 'user.email_addr'],
    ];
    for (const [patch, path] of cases) expect(found({ ...logon(), ...patch }), path).toEqual([['type', path]]);
  });

  it('arrays: is_array attributes need arrays, others must not be arrays; paths carry indexes', () => {
    expect(found({ ...logon(), observables: { name: 'x', type_id: 2 } })).toEqual([['type', 'observables']]);
    expect(found({ ...logon(), user: [{ name: 'a' }] })).toEqual([['type', 'user']]);
    const event = base(6003, 2, {
      actor,
      api: { operation: 'x' },
      src_endpoint: { ip: '10.0.0.1' },
      resources: [{ uid: 'a' }, { uid: 'b' }, { uid: 'c', type: 7 }],
    });
    expect(found(event)).toEqual([['type', 'resources[2].type']]);
    expect(found({ ...event, resources: [{ uid: 'a' }, 'b'] })).toEqual([['type', 'resources[1]']]);
  });

  it('unknown attributes, at any depth, except under unmapped', () => {
    // Issues come in the event's key order (user precedes the added foo).
    expect(found({ ...logon(), foo: 1, user: { name: 'a', nickname: 'al' } })).toEqual([
      ['unknown_attribute', 'user.nickname'],
      ['unknown_attribute', 'foo'],
    ]);
    expect(found({ ...logon(), unmapped: 'text' })).toEqual([['type', 'unmapped']]);
  });

  it('metadata.version must be 1.8.0 and metadata.product must name the product', () => {
    expect(issues({ ...logon(), metadata: { ...metadata, version: '1.3.0' } })).toEqual([
      { kind: 'metadata', path: 'metadata.version', message: 'metadata.version must be "1.8.0", got string "1.3.0"' },
    ]);
    expect(found({ ...logon(), metadata: { version: '1.8.0', product: { version: '2' } } })).toEqual([
      ['constraint', 'metadata.product'],
      ['metadata', 'metadata.product'],
    ]);
    expect(found({ ...logon(), metadata: { version: '1.8.0' } })).toEqual([['missing_required', 'metadata.product']]);
  });

  it('constraints: at_least_one on the class and on objects', () => {
    const { service: _s, dst_endpoint: _d, ...rest } = logon();
    expect(issues(rest)).toEqual([
      { kind: 'constraint', path: '', message: 'authentication needs at least one of service, dst_endpoint' },
    ]);
    expect(found({ ...logon(), service: { version: '1' } })).toEqual([['constraint', 'service']]);
  });

  it('constraints: just_one', () => {
    const finding = (vulnerability: Event) =>
      base(2004, 1, { finding_info: { uid: 'f' }, vulnerabilities: [vulnerability] });
    expect(issues(finding({ cve: { uid: 'CVE-2024-1' } }))).toEqual([]);
    expect(found(finding({ cve: { uid: 'CVE-2024-1' }, cwe: { uid: 'CWE-79' } }))).toEqual([
      ['constraint', 'vulnerabilities[0]'],
    ]);
    expect(found(finding({ title: 'x' }))).toEqual([['constraint', 'vulnerabilities[0]']]);
  });

  it('a non-object event, hostile nesting and floods of issues stay bounded', () => {
    expect(compileValidator(ocsfCatalog(), 3002)('nope' as unknown as Event)).toEqual([
      expect.objectContaining({ kind: 'type', path: '' }),
    ]);
    let process: Event = { pid: 1 };
    for (let i = 0; i < 10_000; i++) process = { pid: 1, parent_process: process };
    const deep = base(1007, 1, { actor, device, process });
    expect(found(deep)).toEqual([
      ['type', expect.stringMatching(new RegExp(`^process(\\.parent_process){${MAX_DEPTH}}$`))],
    ]);
    const flood = { ...logon(), observables: Array.from({ length: 500 }, () => ({ type_id: 'x' })) };
    expect(issues(flood)).toHaveLength(MAX_ISSUES);
  });

  it('compileValidator gives the same answers and refuses an unknown class', () => {
    const auth = compileValidator(ocsfCatalog(), 3002);
    expect(auth).toBe(compileValidator(ocsfCatalog(), 3002));
    expect(auth(logon())).toEqual([]);
    expect(auth({ ...logon(), class_uid: 3001 }).map((i) => [i.kind, i.path])).toContainEqual(['enum', 'class_uid']);
    expect(() => compileValidator(ocsfCatalog(), 9999)).toThrow(/9999/);
  });
});
