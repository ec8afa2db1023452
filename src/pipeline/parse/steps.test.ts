import { describe, expect, it } from 'vitest';
import { createValidator, ocsfCatalog } from '../../ocsf/index.js';
import { compileMapping, validateMappingDocument } from '../normalize/compile.js';
import { normalizeBatch } from '../normalize/stage.js';
import type { MappingDocument } from '../normalize/types.js';

const catalog = ocsfCatalog();
const ctx = { receivedAtMs: Date.parse('2024-03-05T00:00:00Z') };

// A firewall that sends syslog with key=value pairs in the message (FortiGate's shape).
const firewall = {
  product: { name: 'Gate', vendor_name: 'Example Corp' },
  parse: [{ parser: 'syslog' }, { parser: 'kv', into: 'kv' }],
  rules: [
    {
      name: 'traffic',
      when: { field: 'kv.type', op: 'eq', value: 'traffic' },
      class_uid: 4001,
      activity_id: 6,
      set: [
        { target: 'time', from: 'timestamp', cast: 'timestamp' },
        { target: 'dst_endpoint.hostname', from: 'hostname' },
        { target: 'src_endpoint.ip', from: 'kv.srcip', cast: 'ip' },
        { target: 'dst_endpoint.port', from: 'kv.dstport', cast: 'port' },
      ],
    },
  ],
} as unknown as MappingDocument;

const line = '<189>1 2024-03-05T14:22:31Z fw01 - - - - type="traffic" srcip=10.0.0.7 dstport=443 policyid=12';

describe('parse steps in a mapping', () => {
  const m = compileMapping(firewall, catalog);

  it('parse the line once, before the rules, and keep unread parsed fields under unmapped', () => {
    const r = m.map({ message: line }, ctx);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.event).toMatchObject({
      class_uid: 4001,
      time: Date.parse('2024-03-05T14:22:31Z'),
      src_endpoint: { ip: '10.0.0.7' },
      dst_endpoint: { hostname: 'fw01', port: 443 },
    });
    // The line itself was read by the syslog step; what no assignment read is kept.
    expect(r.event.unmapped).toEqual({
      priority: 189,
      facility: 23,
      severity: 5,
      version: 1,
      kv: { type: 'traffic', policyid: '12' },
    });
    // The rules read the parsed event (drift looks at it); the raw event is unchanged.
    expect(r.input).toMatchObject({ kv: { policyid: '12' } });
  });

  it('quarantine a line a step cannot read as parse_failed, with the step and the position', () => {
    const r = m.map({ message: '<189>1 2024-03-05T14:22:31Z fw01 - - - - type="traffic srcip=1' }, ctx);
    expect(r).toEqual({
      ok: false,
      kind: 'parse_failed',
      detail: 'parse step 2 (kv) failed at character 6: unterminated quoted value',
    });
  });

  it('keep the raw event, not the parsed one, in the quarantine', () => {
    const validator = createValidator(catalog);
    const bad = '<189>1 - fw01 - - - - a="';
    const res = normalizeBatch(
      {
        id: 'b',
        organization_id: 1,
        integration_id: 1,
        platform: 'p',
        stream: 's',
        received_at: '2024-03-05T00:00:00Z',
        source: 'push',
        ids: ['1', '2'],
        events: [JSON.stringify({ message: line }), JSON.stringify({ message: bad })],
        bytes: 0,
      },
      { mapping: { versionId: 'v', compiled: m }, validate: (e) => validator.validate(e), policy: 'strict' },
    );
    expect(res.normalized).toBe(1);
    expect(res.quarantined).toMatchObject([{ index: 1, raw: { message: bad }, error_kind: 'parse_failed' }]);
    expect(res.driftRaw[0]).toMatchObject({ kv: { policyid: '12' } });
  });

  it("lift an object a json step reads (an envelope's payload), keeping the envelope's other fields", () => {
    const doc = {
      product: firewall.product,
      parse: [{ parser: 'json', from: 'detail.findings[0]', when: { field: 'detail-type', op: 'exists' } }],
      rules: [
        {
          name: 'any',
          class_uid: 4001,
          activity_id: 6,
          set: [
            { target: 'metadata.uid', from: 'Id' },
            { target: 'src_endpoint.ip', from: 'Ip' },
          ],
        },
      ],
    } as unknown as MappingDocument;
    const c = compileMapping(doc, catalog);
    const wrapped = c.map(
      { 'detail-type': 'Findings', id: 'e1', detail: { findings: [{ Id: 'f-1', Ip: '192.0.2.1', Extra: 1 }] } },
      ctx,
    );
    expect(wrapped.ok && wrapped.event).toMatchObject({
      metadata: { uid: 'f-1' },
      src_endpoint: { ip: '192.0.2.1' },
      unmapped: { 'detail-type': 'Findings', id: 'e1', Extra: 1 },
    });
    expect(wrapped.ok && (wrapped.event.unmapped as Record<string, unknown>).detail).toBeUndefined();
    const bare = c.map({ Id: 'f-2', Ip: '192.0.2.2' }, ctx);
    expect(bare.ok && bare.event.metadata).toMatchObject({ uid: 'f-2' });
    // A list is still not text: the step fails.
    expect(c.map({ 'detail-type': 'x', detail: { findings: [[1]] } }, ctx)).toMatchObject({
      ok: false,
      kind: 'parse_failed',
    });
  });

  it('run a step only when its condition holds, and skip one that fails when told to', () => {
    const doc = {
      product: firewall.product,
      parse: [
        { parser: 'cef', when: { field: 'message', op: 'prefix', value: 'CEF:' }, into: 'cef' },
        { parser: 'json', on_error: 'skip' },
      ],
      rules: [
        {
          name: 'any',
          class_uid: 4001,
          activity_id: 6,
          set: [{ target: 'metadata.uid', from: ['cef.extension.externalId', 'id'] }],
        },
      ],
    } as unknown as MappingDocument;
    const c = compileMapping(doc, catalog);
    const cef = c.map({ message: 'CEF:0|V|P|1|100|n|5|externalId=42' }, ctx);
    expect(cef.ok && cef.event.metadata).toMatchObject({ uid: '42' });
    const json = c.map({ message: '{"id":"7"}' }, ctx);
    expect(json.ok && json.event.metadata).toMatchObject({ uid: '7' });
    const neither = c.map({ message: 'plain' }, ctx);
    expect(neither.ok).toBe(true);
  });

  it('read XML and regex, and leave an event without the source as it is', () => {
    const doc = {
      product: firewall.product,
      parse: [
        { parser: 'regex', pattern: '^(?P<user>\\w+) logged in from (?P<ip>\\S+)', from: 'line', into: 'r' },
        { parser: 'xml', format: 'windows_event', from: 'xml' },
      ],
      rules: [
        {
          name: 'any',
          class_uid: 3002,
          activity_id: 1,
          set: [{ target: 'user.name', from: ['r.user', 'EventData.TargetUserName'] }],
        },
      ],
    } as unknown as MappingDocument;
    const c = compileMapping(doc, catalog);
    const a = c.map({ line: 'bo logged in from 10.0.0.1' }, ctx);
    expect(a.ok && a.event.user).toEqual({ name: 'bo' });
    const b = c.map(
      {
        xml: '<Event><System><EventID>4624</EventID></System><EventData><Data Name="TargetUserName">al</Data></EventData></Event>',
      },
      ctx,
    );
    expect(b.ok && b.event.user).toEqual({ name: 'al' });
    expect(c.map({ line: 'nothing to see' }, ctx)).toMatchObject({
      ok: false,
      kind: 'parse_failed',
      detail: 'parse step 1 (regex) failed: the pattern does not match',
    });
    expect(c.map({ xml: { not: 'text' } }, ctx)).toMatchObject({
      kind: 'parse_failed',
      detail: 'parse step 2 (xml) failed: its source holds a object, not text',
    });
  });

  it('leave the source of a keep_source step under unmapped, for the events it ran on and the others', () => {
    const step = {
      parser: 'regex',
      from: 'Data[2]',
      into: 'ps',
      pattern: 'HostApplication=(?P<app>[^\\n]*)',
      when: { field: 'id', op: 'eq', value: '400' },
    };
    const doc = (keep: boolean) =>
      ({
        product: firewall.product,
        parse: [{ ...step, ...(keep ? { keep_source: true } : {}) }],
        rules: [
          {
            name: 'any',
            class_uid: 1009,
            activity_id: 1,
            set: [
              { target: 'metadata.event_code', from: 'id' },
              { target: 'script.type_id', value: 2 },
              { target: 'script.script_content.value', from: 'ps.app' },
            ],
          },
        ],
      }) as unknown as MappingDocument;
    const ps = { id: '400', Data: ['Available', 'None', 'HostName=ConsoleHost\nHostApplication=powershell -nop\n'] };
    const other = { id: '6009', Data: ['10.00.', '15063'] };
    const consumed = compileMapping(doc(false), catalog);
    // By default a step's source counts as read for every event: the other event loses its Data.
    const lost = consumed.map(other, ctx);
    expect(lost.ok && lost.event.unmapped).toBeUndefined();
    const kept = compileMapping(doc(true), catalog);
    const o = kept.map(other, ctx);
    expect(o.ok && o.event.unmapped).toEqual({ Data: ['10.00.', '15063'] });
    const r = kept.map(ps, ctx);
    expect(r.ok && r.event.script).toMatchObject({ script_content: { value: 'powershell -nop' } });
    expect(r.ok && r.event.unmapped).toEqual({ Data: ps.Data });
    expect(kept.reads).not.toContain('Data[]');
    expect(consumed.reads).toContain('Data[]');
  });
  it('refuse lines longer than the step allows', () => {
    const doc = { ...firewall, parse: [{ parser: 'syslog', max_length: 10 }] } as unknown as MappingDocument;
    expect(compileMapping(doc, catalog).map({ message: line }, ctx)).toMatchObject({
      kind: 'parse_failed',
      detail: 'parse step 1 (syslog) failed: the text is longer than 10 characters',
    });
  });

  it("report a document's parse problems at their location", () => {
    const doc = {
      product: firewall.product,
      parse: [
        { parser: 'regex', pattern: 'no groups' },
        { parser: 'csv' },
        { parser: 'kv', columns: ['a'], into: 'a..b' },
        { parser: 'regex', pattern: '(?P<a' },
        { parser: 'json', max_fields: 20000 },
        { parser: 'yaml' },
      ],
      rules: firewall.rules,
    };
    const problems = validateMappingDocument(doc, catalog);
    expect(problems).toEqual([
      { at: '/parse/4/max_fields', message: 'must be <= 10000' },
      { at: '/parse/5/parser', message: expect.stringContaining('must be one of syslog, kv, csv') as unknown },
    ]);
    delete (doc.parse as unknown[])[5];
    doc.parse.length = 5;
    (doc.parse[4] as Record<string, unknown>).max_fields = 10;
    expect(validateMappingDocument(doc, catalog)).toEqual([
      { at: '/parse/0/pattern', message: 'the pattern has no named group: write (?P<name>...) for each field' },
      { at: '/parse/1/columns', message: 'the csv parser needs its columns (the header, in order)' },
      { at: '/parse/2/columns', message: 'columns belongs to the csv parser, not kv' },
      { at: '/parse/2/into', message: expect.stringContaining('dotted path of plain keys') as unknown },
      { at: '/parse/3/pattern', message: expect.stringContaining('invalid regular expression') as unknown },
    ]);
  });
});
