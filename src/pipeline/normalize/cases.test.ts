import { describe, expect, it } from 'vitest';
import { createValidator, ocsfCatalog } from '../../ocsf/index.js';
import { caseProblems, runCases, type MappingTestCase } from './cases.js';
import { compileMapping, validateMappingDocument } from './compile.js';
import type { MappingDocument } from './types.js';

const catalog = ocsfCatalog();
const validator = createValidator(catalog);
const validate = (e: Record<string, unknown>) => validator.validate(e);

const doc = {
  product: { name: 'Tunnelbox VPN', vendor_name: 'Example Corp' },
  observables: false,
  parse: [{ parser: 'kv' }],
  rules: [
    {
      name: 'logins',
      when: { field: 'action', op: 'eq', value: 'login' },
      class_uid: 3002,
      activity_id: 1,
      set: [
        { target: 'user.name', from: 'user' },
        { target: 'service.name', value: 'vpn' },
        { target: 'src_endpoint.ip', from: 'ip', cast: 'ip' },
      ],
    },
  ],
} as unknown as MappingDocument;

function run(tests: MappingTestCase[]) {
  return runCases({ tests }, compileMapping(doc, catalog), validate);
}

describe('mapping test cases', () => {
  const output = {
    activity_id: 1,
    activity_name: 'Logon',
    category_uid: 3,
    category_name: 'Identity & Access Management',
    class_uid: 3002,
    class_name: 'Authentication',
    type_uid: 300201,
    type_name: 'Authentication: Logon',
    metadata: { product: { name: 'Tunnelbox VPN', vendor_name: 'Example Corp' }, version: '1.8.0' },
    user: { name: 'bo' },
    service: { name: 'vpn' },
    src_endpoint: { ip: '10.0.0.1' },
    time: Date.parse('2024-01-01T00:00:00Z'),
    severity_id: 0,
    severity: 'Unknown',
    // A condition's field is a reference, not mapped data: it stays under unmapped.
    unmapped: { action: 'login' },
  };

  it('pass when the output is exactly the one expected, by text or event input', () => {
    expect(
      run([
        { name: 'text', input_text: 'action=login user=bo ip=10.0.0.1', output },
        {
          name: 'event',
          input: { message: 'action=login user=bo ip=10.0.0.1' },
          expect: { 'user.name': 'bo', 'src_endpoint.ip': '10.0.0.1', 'unmapped.action': 'login', 'unmapped.ip': null },
        },
        { name: 'quarantined', input_text: 'action=logout', quarantine: 'no_matching_rule' },
        {
          name: 'received',
          input_text: 'action=login user=bo',
          received_at: '2024-03-05T00:00:00Z',
          expect: { time: Date.parse('2024-03-05T00:00:00Z') },
        },
      ]),
    ).toEqual([
      { index: 0, name: 'text', ok: true, failures: [] },
      { index: 1, name: 'event', ok: true, failures: [] },
      { index: 2, name: 'quarantined', ok: true, failures: [] },
      { index: 3, name: 'received', ok: true, failures: [] },
    ]);
  });

  it('say what differs, and what the pipeline did instead', () => {
    const results = run([
      { name: 'exact', input_text: 'action=login user=al ip=10.0.0.1 extra=1', output },
      {
        name: 'fields',
        input_text: 'action=login user=al',
        expect: { 'user.name': 'bo', 'src_endpoint.ip': null, 'a[': 1 },
      },
      { name: 'parse', input_text: 'action="login', expect: { class_uid: 3002 } },
      { name: 'invalid', input_text: 'action=login ip=10.0.0.1', expect: { class_uid: 3002 } },
      { name: 'not quarantined', input_text: 'action=login user=bo', quarantine: 'parse_failed' },
      { name: 'other reason', input_text: 'action=x', quarantine: 'parse_failed' },
    ]);
    expect(results.map((r) => r.failures)).toEqual([
      ['user.name: expected "bo", got "al"', 'unmapped.extra: not expected, got "1"'],
      ['user.name: expected "bo", got "al"', 'a[: not a valid path'],
      ['quarantined as parse_failed: parse step 1 (kv) failed at character 8: unterminated quoted value'],
      ['quarantined as missing_required: missing required attribute: user'],
      ['expected quarantine as parse_failed, but the event was normalized'],
      ['expected quarantine as parse_failed, got no_matching_rule: no rule of the mapping matches the event'],
    ]);
  });

  it('are checked for shape with the document', () => {
    const tests = [
      { name: 'a', input: {}, input_text: 'x', expect: {} },
      { name: 'a', input: {}, received_at: 'yesterday' },
    ] as MappingTestCase[];
    expect(caseProblems({ tests })).toEqual([
      { at: '/tests/0', message: 'give exactly one of input (an event) and input_text (a line of text)' },
      {
        at: '/tests/1',
        message:
          'give exactly one of output (the whole event), expect (selected attributes) and quarantine (the reason expected)',
      },
      { at: '/tests/1/received_at', message: 'must be an RFC 3339 date-time' },
      { at: '/tests/1/name', message: 'another case is named "a"' },
    ]);
    expect(validateMappingDocument({ ...doc, tests: [{ name: 'x', input: {}, quarantine: 'lost' }] }, catalog)).toEqual(
      [{ at: '/tests/0/quarantine', message: expect.stringContaining('must be one of no_mapping') as unknown }],
    );
  });
});
