// The output as a whole: unmapped, observables, reads, and OCSF validity of compiled
// documents (project catalog and the official 1.8.0 schema).
import { describe, expect, it } from 'vitest';
import { officialCatalog } from '../../../test/support/ocsf-official.js';
import { createValidator, ocsfCatalog } from '../../ocsf/index.js';
import { compileMapping } from './compile.js';
import type { MappingDocument, MapResult } from './types.js';

const catalog = ocsfCatalog();
const ctx = { receivedAtMs: Date.UTC(2024, 0, 2, 3, 5) };

function event(r: MapResult): Record<string, unknown> {
  if (!r.ok) throw new Error(`${r.kind}: ${r.detail}`);
  return r.event;
}

// A made-up identity provider's push stream: logins, and admin API calls.
const idp: MappingDocument = {
  product: { name: 'Gatekeeper', vendor_name: 'Example Corp', version: '4.2' },
  defaults: [
    { target: 'metadata.uid', from: 'id' },
    { target: 'metadata.event_code', from: 'event' },
    { target: 'time', from: 'ts', cast: 'timestamp' },
    {
      target: 'severity_id',
      from: 'level',
      lookup: { map: { info: 1, warning: 3, error: 4 }, ignore_case: true, default: 0 },
    },
    { target: 'src_endpoint.ip', from: 'client.ip', cast: 'ip' },
    { target: 'actor.user.name', from: 'actor.login' },
    { target: 'actor.user.uid', from: 'actor.id', cast: 'string' },
    { target: 'message', template: '{actor.login} {event} from {client.ip|an unknown address}' },
  ],
  rules: [
    {
      name: 'logins',
      when: { path: 'event', prefix: 'login.' },
      class_uid: 3002,
      activity_id: { from: 'event', lookup: { map: { 'login.success': 1, 'login.failure': 1, 'login.logout': 2 } } },
      set: [
        { target: 'user.name', from: 'actor.login' },
        { target: 'user.email_addr', from: 'actor.email', cast: 'email' },
        {
          target: 'status_id',
          from: 'event',
          lookup: { map: { 'login.success': 1, 'login.failure': 2 }, default: 99 },
        },
        { target: 'auth_protocol_id', from: 'method', lookup: { map: { saml: 5, oidc: 4, password: 99 } } },
        { target: 'is_mfa', from: 'mfa', cast: 'boolean' },
        { target: 'service.name', from: 'app', default: 'Gatekeeper' },
        { target: 'dst_endpoint.hostname', from: 'server', cast: 'hostname' },
      ],
    },
    {
      name: 'admin api',
      class_uid: 6003,
      activity_id: {
        from: 'event',
        lookup: { map: { 'admin.create': 1, 'admin.read': 2, 'admin.update': 3, 'admin.delete': 4 } },
      },
      set: [
        { target: 'api.operation', from: 'event' },
        { target: 'api.request.uid', from: 'request_id' },
        { target: 'actor.user.email_addr', from: 'actor.email', cast: 'email' },
        { target: 'status_id', from: 'ok', lookup: { map: { true: 1, false: 2 } } },
        {
          target: 'resources',
          each: 'targets',
          set: [
            { target: 'uid', from: 'id' },
            { target: 'type', from: 'kind' },
            { target: 'name', from: 'name' },
          ],
        },
        { target: 'src_endpoint.port', from: 'client.port', cast: 'port', on_error: 'skip' },
      ],
    },
  ],
};

const login = {
  id: 'evt-001',
  event: 'login.failure',
  ts: '2024-01-02T03:04:05.250Z',
  level: 'WARNING',
  actor: { id: 1001, login: 'ana', email: 'ana@example.com', department: 'finance' },
  client: { ip: '192.0.2.10', user_agent: 'Mozilla/5.0', geo: { country: 'FR', city: 'Lyon' } },
  method: 'saml',
  mfa: 'yes',
  app: 'Payroll',
  server: 'SSO.example.com',
  reason: 'bad password',
};

const adminCall = {
  id: 'evt-002',
  event: 'admin.update',
  ts: 1704164700,
  level: 'info',
  request_id: 'req-9',
  ok: true,
  actor: { id: 7, login: 'root', email: 'root@example.com' },
  client: { ip: '2001:db8::7', port: '51234' },
  targets: [
    { id: 'grp-1', kind: 'group', name: 'Admins', members: 4 },
    { id: 'usr-9', kind: 'user', name: 'bo' },
  ],
};

describe('compiled documents produce valid OCSF', () => {
  const m = compileMapping(idp, catalog);
  const validators = [createValidator(catalog), createValidator(officialCatalog())];

  it('Authentication 3002', () => {
    const e = event(m.map(login, ctx));
    expect(e).toMatchObject({
      class_uid: 3002,
      activity_id: 1,
      type_uid: 300201,
      type_name: 'Authentication: Logon',
      time: Date.UTC(2024, 0, 2, 3, 4, 5, 250),
      severity_id: 3,
      severity: 'Medium',
      status_id: 2,
      status: 'Failure',
      auth_protocol_id: 5,
      auth_protocol: 'SAML',
      is_mfa: true,
      message: 'ana login.failure from 192.0.2.10',
      user: { name: 'ana', email_addr: 'ana@example.com' },
      actor: { user: { name: 'ana', uid: '1001' } },
      service: { name: 'Payroll' },
      dst_endpoint: { hostname: 'sso.example.com' },
    });
    for (const v of validators) expect(v.validate(e)).toEqual([]);
  });

  it('API Activity 6003', () => {
    const e = event(m.map(adminCall, ctx));
    expect(e).toMatchObject({
      class_uid: 6003,
      activity_id: 3,
      activity_name: 'Update',
      type_uid: 600303,
      time: 1704164700000,
      status: 'Success',
      src_endpoint: { ip: '2001:db8::7', port: 51234 },
      resources: [
        { uid: 'grp-1', type: 'group', name: 'Admins' },
        { uid: 'usr-9', type: 'user', name: 'bo' },
      ],
    });
    for (const v of validators) expect(v.validate(e)).toEqual([]);
  });

  it('defaults alone make a valid event (time, severity, metadata are filled in)', () => {
    const e = event(m.map({ event: 'login.logout', actor: { login: 'ana' } }, ctx));
    expect(e).toMatchObject({
      time: ctx.receivedAtMs,
      severity_id: 0,
      activity_id: 2,
      status_id: 99,
      status: 'login.logout',
    });
    for (const v of validators) expect(v.validate(e)).toEqual([]);
  });
});

describe('safe conversions and case-blind filters', () => {
  const doc: MappingDocument = {
    product: { name: 'Gatekeeper', vendor_name: 'Example Corp' },
    rules: [
      {
        name: 'changes',
        class_uid: 3001,
        activity_id: 1,
        set: [
          { target: 'metadata.log_version', from: 'version' },
          { target: 'metadata.labels', from: 'tags' },
          { target: 'user.uid', from: 'targets[?type~=user].id' },
          { target: 'user.name', from: 'targets[?type~=user].name' },
          { target: 'user.has_mfa', from: 'mfa' },
        ],
      },
    ],
  };
  const m = compileMapping(doc, catalog);
  const validators = [createValidator(catalog), createValidator(officialCatalog())];

  it('writes a number or boolean bound for a text attribute as its text, elements of lists too', () => {
    const e = event(
      m.map({ version: 0, tags: ['a', 7, true], mfa: true, targets: [{ type: 'User', id: 42, name: 'bo' }] }, ctx),
    );
    expect(e.metadata).toMatchObject({ log_version: '0', labels: ['a', '7', 'true'] });
    expect(e.user).toEqual({ uid: '42', name: 'bo', has_mfa: true });
    for (const v of validators) expect(v.validate(e)).toEqual([]);
  });

  it('finds an element whatever the case of the filter key and value', () => {
    const e = event(
      m.map(
        {
          targets: [
            { Type: 'Group', id: 'g' },
            { Type: 'USER', id: 'u', name: 'ana' },
          ],
        },
        ctx,
      ),
    );
    expect(e.user).toEqual({ uid: 'u', name: 'ana' });
  });
});

describe('unmapped', () => {
  const m = compileMapping(idp, catalog);

  it('keeps what the matching rule did not read, with its nesting', () => {
    expect(event(m.map(login, ctx)).unmapped).toEqual({
      actor: { department: 'finance' },
      client: { user_agent: 'Mozilla/5.0', geo: { country: 'FR', city: 'Lyon' } },
      reason: 'bad password',
    });
    // each reads the element fields it maps; the rest of every element stays
    expect(event(m.map(adminCall, ctx)).unmapped).toEqual({ targets: [{ members: 4 }] });
  });

  it('keep_unmapped false leaves it out', () => {
    expect(event(compileMapping({ ...idp, keep_unmapped: false }, catalog).map(login, ctx)).unmapped).toBeUndefined();
  });

  it('fields only tested by conditions, and lists read through a filter, stay', () => {
    const d: MappingDocument = {
      product: idp.product,
      rules: [
        {
          name: 'r',
          when: { path: 'kind', eq: 'x' },
          class_uid: 3002,
          activity_id: 1,
          set: [
            { target: 'user.name', from: 'params[?name=user].value' },
            { target: 'message', value: 'm', when: { path: 'flag', exists: true } },
          ],
        },
      ],
    };
    const raw = {
      kind: 'x',
      flag: 1,
      params: [
        { name: 'user', value: 'ana' },
        { name: 'ip', value: '192.0.2.1' },
      ],
    };
    const e = event(compileMapping(d, catalog).map(raw, ctx));
    expect(e.user).toEqual({ name: 'ana' });
    expect(e.unmapped).toEqual(raw);
  });

  it('reads lists every path whose value reaches the output, normalized', () => {
    expect([...compileMapping(idp, catalog).reads].sort()).toEqual([
      'actor.email',
      'actor.id',
      'actor.login',
      'app',
      'client.ip',
      'client.port',
      'event',
      'id',
      'level',
      'method',
      'mfa',
      'ok',
      'request_id',
      'server',
      'targets[].id',
      'targets[].kind',
      'targets[].name',
      'ts',
    ]);
  });

  it('known_fields join what drift expects (spelled like reads) and change nothing in the output', () => {
    const known = compileMapping(
      { ...idp, known_fields: ['geo', 'targets[*].extra', 'targets[].owner', '["odd.key"]'] },
      catalog,
    );
    const plain = compileMapping(idp, catalog);
    expect(known.reads).toEqual(plain.reads);
    expect([...known.expected].filter((p) => !plain.reads.has(p)).sort()).toEqual([
      '["odd.key"]',
      'geo',
      'targets[].extra',
      'targets[].owner',
    ]);
    expect(plain.expected).toEqual(plain.reads);
    const raw = { ...adminCall, geo: { city: 'Oslo' }, 'odd.key': 1 };
    expect(known.map(raw, ctx)).toEqual(plain.map(raw, ctx));
  });
});

describe('observables', () => {
  it('one per observable attribute, with the final value', () => {
    const e = event(compileMapping(idp, catalog).map(adminCall, ctx));
    expect(e.observables).toEqual([
      { name: 'src_endpoint.ip', type_id: 2, type: 'IP Address', value: '2001:db8::7' },
      { name: 'actor.user.name', type_id: 4, type: 'User Name', value: 'root' },
      { name: 'actor.user.uid', type_id: 31, type: 'User Object: uid', value: '7' },
      { name: 'actor.user.email_addr', type_id: 5, type: 'Email Address', value: 'root@example.com' },
      { name: 'resources.uid', type_id: 10, type: 'Resource UID', value: 'grp-1' },
      { name: 'resources.uid', type_id: 10, type: 'Resource UID', value: 'usr-9' },
      { name: 'resources.name', type_id: 38, type: 'Resource Details Object: name', value: 'Admins' },
      { name: 'resources.name', type_id: 38, type: 'Resource Details Object: name', value: 'bo' },
      { name: 'src_endpoint.port', type_id: 11, type: 'Port', value: '51234' },
    ]);
  });

  it('an attribute assigned twice gives one observable; observables false turns them off', () => {
    const d: MappingDocument = {
      product: idp.product,
      defaults: [{ target: 'src_endpoint.ip', value: '192.0.2.1' }],
      rules: [{ name: 'r', class_uid: 3002, activity_id: 1, set: [{ target: 'src_endpoint.ip', from: 'ip' }] }],
    };
    expect(event(compileMapping(d, catalog).map({ ip: '198.51.100.1' }, ctx)).observables).toEqual([
      { name: 'src_endpoint.ip', type_id: 2, type: 'IP Address', value: '198.51.100.1' },
    ]);
    expect(event(compileMapping({ ...d, observables: false }, catalog).map({}, ctx)).observables).toBeUndefined();
  });
});

describe('year-less syslog timestamps', () => {
  const doc: MappingDocument = {
    product: { name: 'Edge', vendor_name: 'Example Corp' },
    rules: [
      {
        name: 'all',
        class_uid: 4001,
        activity_id: 6,
        set: [
          { target: 'time', from: 'ts', cast: 'timestamp' },
          { target: 'src_endpoint.ip', from: 'ip', cast: 'ip' },
        ],
      },
    ],
  };
  const mapping = compileMapping(doc, catalog);

  it("take their year from the event's receive time, not the clock", () => {
    const raw = { ts: 'Jul 15 13:38:14', ip: '192.0.2.1' };
    expect(event(mapping.map(raw, { receivedAtMs: Date.UTC(2019, 7, 1) })).time).toBe(
      Date.UTC(2019, 6, 15, 13, 38, 14),
    );
    // Received in early January: a July timestamp is last year's.
    expect(event(mapping.map(raw, { receivedAtMs: Date.UTC(2021, 0, 3) })).time).toBe(
      Date.UTC(2020, 6, 15, 13, 38, 14),
    );
  });
});
