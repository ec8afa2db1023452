import { describe, expect, it } from 'vitest';
import { ocsfCatalog } from '../../ocsf/index.js';
import { compileMapping } from './compile.js';
import type { Assignment, MappingDocument, MappingRule, MapResult } from './types.js';

const catalog = ocsfCatalog();
const ctx = { receivedAtMs: 1_700_000_000_000 };
const product = { name: 'Gate', vendor_name: 'Example Corp' };

function doc(rules: Partial<MappingRule>[] | Assignment[], extra: Partial<MappingDocument> = {}): MappingDocument {
  const isAssignments = rules.length > 0 && 'target' in rules[0]!;
  const list = isAssignments
    ? [{ name: 'all', class_uid: 3002, activity_id: 1, set: rules as Assignment[] }]
    : (rules as Partial<MappingRule>[]).map((r, i) => ({ name: `r${i}`, class_uid: 3002, activity_id: 1, ...r }));
  return { product, rules: list as MappingRule[], ...extra };
}

function event(r: MapResult): Record<string, unknown> {
  if (!r.ok) throw new Error(`${r.kind}: ${r.detail}`);
  return r.event;
}

function run(d: MappingDocument, raw: Record<string, unknown>): Record<string, unknown> {
  return event(compileMapping(d, catalog).map(raw, ctx));
}

describe('rules', () => {
  const m = compileMapping(
    doc([
      { name: 'logon', when: { path: 'kind', eq: 'login' }, activity_id: 1 },
      { name: 'logoff', when: { path: 'kind', eq: 'logout' }, activity_id: 2 },
      {
        name: 'api',
        when: { path: 'kind', prefix: 'api.' },
        class_uid: 6003,
        activity_id: { from: 'kind', lookup: { map: { 'api.create': 1, 'api.read': 2 } } },
      },
    ]),
    catalog,
  );

  it('the first rule whose condition holds decides class and activity', () => {
    const e = event(m.map({ kind: 'logout' }, ctx));
    expect(e).toMatchObject({
      class_uid: 3002,
      class_name: 'Authentication',
      category_uid: 3,
      category_name: 'Identity & Access Management',
      activity_id: 2,
      activity_name: 'Logoff',
      type_uid: 300202,
      type_name: 'Authentication: Logoff',
    });
    expect(event(m.map({ kind: 'api.read' }, ctx))).toMatchObject({
      class_uid: 6003,
      activity_id: 2,
      activity_name: 'Read',
      type_uid: 600302,
      type_name: 'API Activity: Read',
    });
  });

  it('an unlisted activity is 99 Other with the source value as its caption', () => {
    expect(event(m.map({ kind: 'api.purge' }, ctx))).toMatchObject({
      activity_id: 99,
      activity_name: 'api.purge',
      type_uid: 600399,
      type_name: 'API Activity: Other',
    });
  });

  it('no rule matching is a no_matching_rule result', () => {
    expect(m.map({ kind: 'other' }, ctx)).toEqual({ ok: false, kind: 'no_matching_rule', detail: expect.any(String) });
  });

  it('activity lookups: default, absent source, ignore_case', () => {
    const d = doc([
      { activity_id: { from: ['op', 'operation'], lookup: { map: { LOGON: 1 }, ignore_case: true, default: 2 } } },
    ]);
    const c = compileMapping(d, catalog);
    expect(event(c.map({ op: 'logon' }, ctx)).activity_id).toBe(1);
    expect(event(c.map({ operation: 'Logon' }, ctx)).activity_id).toBe(1);
    expect(event(c.map({ op: 'x' }, ctx))).toMatchObject({ activity_id: 2, activity_name: 'Logoff' });
    expect(event(c.map({}, ctx))).toMatchObject({ activity_id: 2, activity_name: 'Logoff' });
    const noDefault = compileMapping(doc([{ activity_id: { from: 'op', lookup: { map: { x: 1 } } } }]), catalog);
    expect(event(noDefault.map({}, ctx))).toMatchObject({ activity_id: 0, activity_name: 'Unknown', type_uid: 300200 });
  });
});

describe('what the compiler adds', () => {
  it('metadata, time from the receipt, severity Unknown', () => {
    const e = run(
      doc([{ target: 'message', value: 'hi' }], { profiles: ['host'], product: { ...product, version: '2.1' } }),
      {},
    );
    expect(e.metadata).toEqual({
      product: { name: 'Gate', vendor_name: 'Example Corp', version: '2.1' },
      version: '1.8.0',
      profiles: ['host'],
    });
    expect(e.time).toBe(ctx.receivedAtMs);
    expect(e).toMatchObject({ severity_id: 0, severity: 'Unknown' });
  });

  it('keeps what the mapping sets', () => {
    const e = run(
      doc([
        { target: 'time', from: 't', cast: 'timestamp' },
        { target: 'severity_id', value: 4 },
        { target: 'metadata.uid', from: 'id' },
        { target: 'metadata.product.uid', value: 'gate-1' },
      ]),
      { t: '2024-01-02T03:04:05Z', id: 'e-1' },
    );
    expect(e).toMatchObject({ time: Date.UTC(2024, 0, 2, 3, 4, 5), severity_id: 4, severity: 'High' });
    expect(e.metadata).toMatchObject({ uid: 'e-1', product: { name: 'Gate', uid: 'gate-1' } });
  });

  it('builds fresh metadata per event', () => {
    const m = compileMapping(doc([{ target: 'metadata.product.uid', from: 'id' }], { profiles: ['host'] }), catalog);
    const a = event(m.map({ id: 'a' }, ctx));
    (a.metadata as { profiles: string[] }).profiles.push('mutated');
    const b = event(m.map({ id: 'b' }, ctx));
    expect(b.metadata).toMatchObject({ product: { uid: 'b' }, profiles: ['host'] });
    expect((a.metadata as { product: { uid: string } }).product.uid).toBe('a');
  });
});

describe('assignments', () => {
  it('from: nested paths, lists (first present wins), defaults, conditions', () => {
    const e = run(
      doc([
        { target: 'user.name', from: ['user.login', 'user.email', 'user.id'] },
        { target: 'user.uid', from: 'missing', default: 'n/a' },
        { target: 'user.domain', from: 'missing' },
        { target: 'message', from: 'msg', when: { path: 'level', eq: 'high' } },
        { target: 'status_detail', value: 'x', when: { path: 'level', eq: 'low' } },
      ]),
      { user: { login: '', email: 'ana@example.com', id: 7 }, msg: 'm', level: 'high' },
    );
    expect(e.user).toEqual({ name: 'ana@example.com', uid: 'n/a' });
    expect(e.message).toBe('m');
    expect(e.status_detail).toBeUndefined();
  });

  it('templates and constants; constants are not shared between events', () => {
    const m = compileMapping(
      doc([
        { target: 'message', template: '{user} from {ip|unknown address}' },
        { target: 'service', value: { name: 'gate' } },
        { target: 'service.uid', from: 'svc' },
      ]),
      catalog,
    );
    const a = event(m.map({ user: 'ana', svc: 's1' }, ctx));
    const b = event(m.map({ user: 'bo', ip: '192.0.2.1' }, ctx));
    expect(a).toMatchObject({ message: 'ana from unknown address', service: { name: 'gate', uid: 's1' } });
    expect(b).toMatchObject({ message: 'bo from 192.0.2.1', service: { name: 'gate' } });
    expect((b.service as Record<string, unknown>).uid).toBeUndefined();
  });

  it('copies a raw object written into (the raw event is never modified)', () => {
    const raw = { endpoint: { ip: '192.0.2.1' }, port: '443' };
    const e = run(
      doc([
        { target: 'src_endpoint', from: 'endpoint' },
        { target: 'src_endpoint.port', from: 'port', cast: 'port' },
      ]),
      raw,
    );
    expect(e.src_endpoint).toEqual({ ip: '192.0.2.1', port: 443 });
    expect(raw.endpoint).toEqual({ ip: '192.0.2.1' });
  });

  it('casts apply to each element of a list; on_error skip leaves the target unset', () => {
    const e = run(
      doc([
        { target: 'metadata.labels', from: 'tags[*].name', cast: 'uppercase' },
        { target: 'src_endpoint.port', from: 'port', cast: 'port', on_error: 'skip' },
        { target: 'dst_endpoint.hostname', from: 'host', cast: 'hostname' },
      ]),
      { tags: [{ name: 'a' }, { name: 'b' }], port: 'http', host: 'WS1.Example.com' },
    );
    expect((e.metadata as Record<string, unknown>).labels).toEqual(['A', 'B']);
    expect(e.src_endpoint).toBeUndefined();
    expect(e.dst_endpoint).toEqual({ hostname: 'ws1.example.com' });
  });

  it('a failing cast is cast_failed, naming target, source and value type but not the value', () => {
    const m = compileMapping(doc([{ target: 'src_endpoint.ip', from: ['addr', 'client.ip'], cast: 'ip' }]), catalog);
    const r = m.map({ client: { ip: 'secret-host-ana.example.com' } }, ctx);
    expect(r).toEqual({
      ok: false,
      kind: 'cast_failed',
      detail: 'cast ip failed for src_endpoint.ip from client.ip (value type string)',
    });
    expect(JSON.stringify(r)).not.toContain('secret');
    const t = compileMapping(doc([{ target: 'time', from: 'when', cast: 'timestamp' }]), catalog).map(
      { when: { at: 1 } },
      ctx,
    );
    expect(t).toMatchObject({ kind: 'cast_failed', detail: expect.stringContaining('(value type object)') });
  });

  it('lookups: ignore_case, default, a miss without default leaves the target unset', () => {
    const d = doc([
      { target: 'status_id', from: 'result', lookup: { map: { success: 1, failure: 2 }, ignore_case: true } },
      { target: 'status_detail', from: 'reason', lookup: { map: { '1': 'bad password' }, default: 'other reason' } },
    ]);
    expect(run(d, { result: 'SUCCESS', reason: 1 })).toMatchObject({
      status_id: 1,
      status: 'Success',
      status_detail: 'bad password',
    });
    const e = run(d, { result: 'partial', reason: 7 });
    expect(e.status_id).toBeUndefined();
    expect(e.status_detail).toBe('other reason');
  });

  it('index and append targets', () => {
    const e = run(
      doc(
        [
          { target: 'metadata.labels[]', from: 'a' },
          { target: 'metadata.labels[]', from: 'b' },
          { target: 'metadata.labels[]', from: 'c[*]' },
        ],
        {},
      ),
      { a: 'x', b: 'y', c: ['z1', 'z2'] },
    );
    expect((e.metadata as Record<string, unknown>).labels).toEqual(['x', 'y', 'z1', 'z2']);
    const api = run(
      doc([
        {
          class_uid: 6003,
          activity_id: 2,
          set: [
            { target: 'resources[0].uid', from: 'id' },
            { target: 'resources[0].type', value: 'bucket' },
            { target: 'resources[1].uid', from: 'id2' },
          ],
        },
      ]),
      { id: 'b1', id2: 'b2' },
    );
    expect(api.resources).toEqual([{ uid: 'b1', type: 'bucket' }, { uid: 'b2' }]);
  });

  it('a value where an object is needed is a mapping_error, not a crash', () => {
    const m = compileMapping(
      doc([
        { target: 'user', from: 'who' },
        { target: 'user.name', from: 'name' },
      ]),
      catalog,
    );
    expect(m.map({ who: 'ana', name: 'x' }, ctx)).toMatchObject({
      ok: false,
      kind: 'mapping_error',
      detail: expect.stringContaining('"user"'),
    });
  });
});

describe('enum captions', () => {
  it('an _id sets its sibling caption; 99 through a lookup keeps the source text', () => {
    const d = doc([
      { target: 'auth_protocol_id', from: 'proto', lookup: { map: { kerberos: 2, saml: 5 }, default: 99 } },
      { target: 'user.type_id', value: 2 },
      { target: 'user.name', from: 'who' },
      { target: 'status_id', from: 'status' },
    ]);
    expect(run(d, { proto: 'saml', status: 1, who: 'ana' })).toMatchObject({
      auth_protocol_id: 5,
      auth_protocol: 'SAML',
      user: { name: 'ana', type_id: 2, type: 'Admin' },
      status_id: 1,
      status: 'Success',
    });
    expect(run(d, { proto: 'webauthn', status: 99 })).toMatchObject({
      auth_protocol_id: 99,
      auth_protocol: 'webauthn',
      status_id: 99,
      status: 'Other',
    });
  });

  it('an explicit caption assignment wins, whatever the order; a skipped one is filled in', () => {
    const d = doc([
      { target: 'status', from: 'status_text', when: { path: 'status_text', exists: true } },
      { target: 'status_id', from: 'code' },
    ]);
    expect(run(d, { status_text: 'Succeeded', code: 1 })).toMatchObject({ status_id: 1, status: 'Succeeded' });
    expect(run(d, { code: 2 })).toMatchObject({ status_id: 2, status: 'Failure' });
  });

  it('the value assigned last decides the caption', () => {
    const d = doc(
      [
        { target: 'severity_id', value: 1 },
        { target: 'severity_id', from: 'sev', lookup: { map: { crit: 5 } } },
      ],
      { defaults: [{ target: 'severity_id', value: 2 }] },
    );
    expect(run(d, { sev: 'crit' })).toMatchObject({ severity_id: 5, severity: 'Critical' });
    expect(run(d, {})).toMatchObject({ severity_id: 1, severity: 'Informational' });
  });
});

describe('each', () => {
  const d = doc([
    {
      class_uid: 6003,
      activity_id: 3,
      set: [
        {
          target: 'resources',
          each: 'targets',
          set: [
            { target: 'uid', from: 'id' },
            { target: 'name', from: 'displayName' },
            { target: 'labels', from: 'labels[*]', cast: 'lowercase' },
            { target: 'type', value: 'group', when: { path: 'kind', eq: 'G' } },
          ],
        },
        { target: 'api.operation', value: 'update' },
        { target: 'metadata.labels[]', from: 'tag' },
      ],
    },
  ]);

  it('maps every element; elements that yield nothing are dropped', () => {
    const e = run(d, {
      targets: [{ id: 'g1', displayName: 'Admins', kind: 'G', labels: ['A'] }, { other: 1 }, { id: 'u1' }],
    });
    expect(e.resources).toEqual([{ uid: 'g1', name: 'Admins', labels: ['a'], type: 'group' }, { uid: 'u1' }]);
  });

  it('a single object stands for a one-element list; absent sources leave the target unset', () => {
    expect(run(d, { targets: { id: 'only' } }).resources).toEqual([{ uid: 'only' }]);
    expect(run(d, {}).resources).toBeUndefined();
  });

  it('@ is the element; each nests', () => {
    const nested = doc([
      {
        class_uid: 6003,
        activity_id: 3,
        set: [
          {
            target: 'resources',
            each: 'items[*]',
            set: [
              { target: 'uid', from: 'id' },
              {
                target: 'tags',
                each: 'labels',
                set: [
                  { target: 'name', from: 'k' },
                  { target: 'value', from: 'v' },
                ],
              },
            ],
          },
          {
            target: 'resources[]',
            each: 'groups',
            set: [
              { target: 'name', from: '@' },
              { target: 'type', value: 'group' },
            ],
          },
        ],
      },
    ]);
    const e = run(nested, {
      items: [
        {
          id: 'i1',
          labels: [
            { k: 'env', v: 'prod' },
            { k: 'team', v: 'sec', extra: 1 },
          ],
        },
        { id: 'i2' },
      ],
      groups: ['admins', 'ops'],
    });
    expect(e.resources).toEqual([
      {
        uid: 'i1',
        tags: [
          { name: 'env', value: 'prod' },
          { name: 'team', value: 'sec' },
        ],
      },
      { uid: 'i2' },
      { name: 'admins', type: 'group' },
      { name: 'ops', type: 'group' },
    ]);
    expect(e.unmapped).toEqual({ items: [{ labels: [{ extra: 1 }] }] });
  });
});
