// The engine's two rules (decision 0056): an object is written only when it holds what OCSF
// requires of it, and a rule may deliver a vendor event as a Base Event (class_uid 0).
import { describe, expect, it } from 'vitest';
import { officialCatalog } from '../../../test/support/ocsf-official.js';
import { createValidator, ocsfCatalog } from '../../ocsf/index.js';
import { compileMapping } from './compile.js';
import type { Assignment, MappingDocument, MapResult } from './types.js';

const catalog = ocsfCatalog();
const validators = [createValidator(catalog), createValidator(officialCatalog())];
const ctx = { receivedAtMs: Date.UTC(2024, 0, 2, 3, 5) };

function event(r: MapResult): Record<string, unknown> {
  if (!r.ok) throw new Error(`${r.kind}: ${r.detail}`);
  for (const v of validators) expect(v.validate(r.event)).toEqual([]);
  return r.event;
}

function network(set: Assignment[], defaults: Assignment[] = []): MappingDocument {
  return {
    product: { name: 'Sensor', vendor_name: 'Example' },
    profiles: ['host', 'cloud'],
    defaults,
    rules: [{ name: 'flow', class_uid: 4001, activity_id: 6, set }],
  };
}

describe('objects are written only when they hold what OCSF requires', () => {
  const doc = network(
    [
      { target: 'src_endpoint.ip', from: 'src', cast: 'ip' },
      { target: 'dst_endpoint.ip', from: 'dst', cast: 'ip' },
      { target: 'cloud.provider', value: 'AWS' },
      { target: 'cloud.account.uid', from: 'account' },
      { target: 'cloud.account.type_id', value: 10 },
    ],
    [
      { target: 'device.hostname', from: 'host' },
      { target: 'device.type_id', value: 13 },
    ],
  );
  const m = compileMapping(doc, catalog);

  it('a device holding only its constant type is left out; with a host name it stays', () => {
    const bare = event(m.map({ src: '192.0.2.1', dst: '198.51.100.7' }, ctx));
    expect(bare).not.toHaveProperty('device');
    const named = event(m.map({ src: '192.0.2.1', dst: '198.51.100.7', host: 'ids-1' }, ctx));
    expect(named.device).toEqual({ hostname: 'ids-1', type_id: 13, type: 'IDS' });
  });

  it('deepest first: an account with only its type goes, its cloud stays when it holds its provider', () => {
    const e = event(m.map({ src: '192.0.2.1', dst: '198.51.100.7' }, ctx));
    expect(e.cloud).toEqual({ provider: 'AWS' });
    const full = event(m.map({ src: '192.0.2.1', dst: '198.51.100.7', account: '123456789012' }, ctx));
    expect(full.cloud).toEqual({ provider: 'AWS', account: { uid: '123456789012', type_id: 10, type: 'AWS Account' } });
  });

  it('list elements are pruned one by one, and an emptied list goes', () => {
    const finding: MappingDocument = {
      product: { name: 'IDS', vendor_name: 'Example' },
      rules: [
        {
          name: 'alert',
          class_uid: 2004,
          activity_id: 1,
          set: [
            { target: 'finding_info.uid', from: 'id' },
            { target: 'finding_info.title', from: 'title' },
            {
              target: 'evidences',
              each: 'hits',
              set: [
                { target: 'src_endpoint.ip', from: 'ip', cast: 'ip', on_error: 'skip' },
                { target: 'device.type_id', value: 13 },
              ],
            },
          ],
        },
      ],
    };
    const fm = compileMapping(finding, catalog);
    const e = event(fm.map({ id: 'a1', title: 'Port scan', hits: [{ ip: '192.0.2.9' }, { ip: 'not an ip' }] }, ctx));
    expect(e.evidences).toEqual([{ src_endpoint: { ip: '192.0.2.9' } }]);
    const none = event(fm.map({ id: 'a1', title: 'Port scan', hits: [{ ip: 'nope' }] }, ctx));
    expect(none).not.toHaveProperty('evidences');
  });

  it('an object the class requires is not invented: the event is quarantined as missing it', () => {
    const d: MappingDocument = {
      product: { name: 'EDR', vendor_name: 'Example' },
      rules: [
        {
          name: 'launch',
          class_uid: 1007,
          activity_id: 1,
          set: [
            { target: 'actor.process.name', from: 'parent' },
            { target: 'process.name', from: 'name' },
            { target: 'process.pid', from: 'pid' },
            { target: 'device.type_id', value: 0 },
          ],
        },
      ],
    };
    const r = compileMapping(d, catalog).map({ name: 'cmd.exe', pid: 42, parent: 'explorer.exe' }, ctx);
    expect(r.ok).toBe(true);
    const issues = validators[0]!.validate((r as { event: Record<string, unknown> }).event);
    // The actor's process names no pid, uid or cpid: it goes, and with it the required actor.
    expect(issues.map((i) => `${i.kind} ${i.path}`)).toEqual(
      expect.arrayContaining(['missing_required actor', 'missing_required device']),
    );
  });
});

describe('Base Event', () => {
  const doc: MappingDocument = {
    product: { name: 'FortiGate', vendor_name: 'Fortinet' },
    profiles: ['host'],
    defaults: [
      { target: 'metadata.event_code', from: 'logid' },
      { target: 'device.hostname', from: 'devname' },
      { target: 'device.type_id', value: 9 },
      { target: 'severity_id', value: 1 },
    ],
    rules: [
      {
        name: 'traffic',
        when: { field: 'type', op: 'eq', value: 'traffic' },
        class_uid: 4001,
        activity_id: 6,
        set: [
          { target: 'src_endpoint.ip', from: 'srcip' },
          { target: 'dst_endpoint.ip', from: 'dstip' },
        ],
      },
      {
        name: 'other FortiGate events',
        when: { field: 'logid', op: 'exists' },
        class_uid: 0,
        activity_id: { from: 'subtype', lookup: { map: {} } },
        set: [{ target: 'message', from: 'msg' }],
      },
    ],
  };
  const m = compileMapping(doc, catalog);

  it('a well-formed event no class fits is delivered as Base Event with its vendor fields under unmapped', () => {
    const e = event(
      m.map(
        {
          logid: '0100032001',
          type: 'event',
          subtype: 'system',
          devname: 'fw-1',
          msg: 'Admin login successful',
          user: 'admin',
        },
        ctx,
      ),
    );
    expect(e).toMatchObject({
      class_uid: 0,
      class_name: 'Base Event',
      category_uid: 0,
      category_name: 'Uncategorized',
      activity_id: 99,
      activity_name: 'system',
      type_uid: 99,
      type_name: 'Base Event: Other',
    });
    expect(e.unmapped).toEqual({ type: 'event', user: 'admin' }); // subtype was read as the activity
    expect(e.device).toEqual({ hostname: 'fw-1', type_id: 9, type: 'Firewall' });
  });

  it('what is not a well-formed event of the source is still no_matching_rule', () => {
    expect(m.map({ hello: 'world' }, ctx)).toMatchObject({ ok: false, kind: 'no_matching_rule' });
  });
});

describe('profiles per rule', () => {
  it('a profile applies to the rules whose class has it; one no rule has is a problem', () => {
    const doc: MappingDocument = {
      product: { name: 'XDR', vendor_name: 'Example' },
      profiles: ['incident', 'host'],
      rules: [
        {
          name: 'alert',
          when: { field: 'kind', op: 'eq', value: 'alert' },
          class_uid: 2004,
          activity_id: 1,
          set: [
            { target: 'finding_info.uid', from: 'id' },
            { target: 'finding_info.title', from: 'title' },
            { target: 'is_suspected_breach', value: true },
          ],
        },
        {
          name: 'other',
          when: { field: 'id', op: 'exists' },
          class_uid: 0,
          activity_id: 99,
          set: [{ target: 'message', from: 'title' }],
        },
      ],
    };
    const m = compileMapping(doc, catalog);
    expect(event(m.map({ kind: 'alert', id: 'a', title: 'x' }, ctx)).metadata).toMatchObject({
      profiles: ['incident', 'host'],
    });
    expect(event(m.map({ kind: 'audit', id: 'b', title: 'y' }, ctx)).metadata).toMatchObject({ profiles: ['host'] });
    expect(() =>
      compileMapping({ ...doc, profiles: ['incident', 'host', 'container'], rules: [doc.rules[1]!] }, catalog),
    ).toThrow(/\/profiles\/0: no rule's class has the profile "incident"/);
  });
});
