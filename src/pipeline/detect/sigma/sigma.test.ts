// Sigma rules written for these tests from the Sigma specification, compiled and run through
// the real rule path (checkRule, compileDetection): each with events it must match and events
// it must not, covering every supported modifier and condition form; and the refusals, each
// with its location and reason. The logsource mapping's every OCSF path exists in its class.
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { stream } from '../../../../test/support/builtin.js';
import { ocsfCatalog } from '../../../ocsf/index.js';
import type { NormalizedRecord } from '../../envelope.js';
import { compileDetection } from '../evaluate.js';
import { checkRule } from '../rules.js';
import { compileSigma, SigmaError } from './compile.js';
import { base64Variants, windashVariants } from './encodings.js';
import { LOGSOURCES } from './logsources.js';

type Ev = Record<string, unknown>;
let seq = 0;
const rec = (ocsf: Ev): NormalizedRecord => ({ id: `0190a0b0-0000-7000-8000-${String(++seq).padStart(12, '0')}`, organization_id: 1, integration_id: 1, stream: 's', received_at: new Date().toISOString(), mapping_version_id: 'v', valid: true, ocsf });

/** Compiles the rule, checks it as the API would, and says which events it matches. */
function run(yaml: string, events: Ev[]): boolean[] {
  const { definition } = compileSigma(yaml);
  expect(checkRule(definition)).toEqual([]);
  const d = compileDetection({ fingerprint: 'f', rules: [{ id: 'r', name: 'r', version: 1, definition }] });
  return events.map((e) => d.evaluate([rec(e)]).hits.length === 1);
}

const proc = (p: Ev, extra: Ev = {}): Ev => ({ class_uid: 1007, activity_id: 1, process: p, ...extra });
const procRule = (detection: string, extra = '') => `title: test\nlogsource:\n  category: process_creation\n  product: windows\n${extra}detection:\n${detection}`;

function refusal(yaml: string): SigmaError {
  try {
    compileSigma(yaml);
  } catch (e) {
    if (e instanceof SigmaError) return e;
    throw e;
  }
  throw new Error('compiled, but a refusal was expected');
}

interface Case {
  name: string;
  yaml: string;
  match: Ev[];
  miss: Ev[];
}

const CASES: Case[] = [
  {
    name: '1 plain value, case-insensitive',
    yaml: procRule("  selection:\n    Image: 'C:\\Windows\\System32\\whoami.exe'\n  condition: selection"),
    match: [proc({ file: { path: 'c:\\windows\\system32\\WHOAMI.EXE' } })],
    miss: [proc({ file: { path: 'C:\\Windows\\System32\\whoami.exe.bak' } }), { class_uid: 1001, activity_id: 1, process: { file: { path: 'C:\\Windows\\System32\\whoami.exe' } } }],
  },
  {
    name: '2 contains',
    yaml: procRule('  selection:\n    CommandLine|contains: \' -EncodedCommand \'\n  condition: selection'),
    match: [proc({ cmd_line: 'powershell.exe -encodedcommand SQBFAFgA' })],
    miss: [proc({ cmd_line: 'powershell.exe -File x.ps1' })],
  },
  {
    name: '3 startswith and endswith',
    yaml: procRule("  selection:\n    Image|endswith: '\\rundll32.exe'\n    CommandLine|startswith: 'rundll32'\n  condition: selection"),
    match: [proc({ file: { path: 'C:\\Windows\\System32\\RUNDLL32.exe' }, cmd_line: 'Rundll32 shell32.dll,Control_RunDLL' })],
    miss: [proc({ file: { path: 'C:\\Windows\\System32\\rundll32.exe' }, cmd_line: '"C:\\x\\rundll32" a' }), proc({ file: { path: 'C:\\rundll32.exe.tmp' }, cmd_line: 'rundll32 a' })],
  },
  {
    name: '4 list of values is OR',
    yaml: procRule("  selection:\n    Image|endswith:\n      - '\\powershell.exe'\n      - '\\pwsh.exe'\n  condition: selection"),
    match: [proc({ file: { path: 'C:\\ps\\pwsh.exe' } }), proc({ file: { path: 'C:\\ps\\PowerShell.exe' } })],
    miss: [proc({ file: { path: 'C:\\ps\\cmd.exe' } })],
  },
  {
    name: '5 contains|all is AND',
    yaml: procRule("  selection:\n    CommandLine|contains|all:\n      - 'net'\n      - ' user '\n      - '/add'\n  condition: selection"),
    match: [proc({ cmd_line: 'NET USER eve P@ss /ADD' })],
    miss: [proc({ cmd_line: 'net user eve' })],
  },
  {
    name: '6 wildcards * and ? in a plain value',
    yaml: procRule("  selection:\n    CommandLine: 'schtasks*/create*/tn ?update'\n  condition: selection"),
    match: [proc({ cmd_line: 'SCHTASKS /Create /SC daily /TN xupdate' })],
    miss: [proc({ cmd_line: 'schtasks /create /tn update' }), proc({ cmd_line: 'x schtasks /create /tn xupdate' })],
  },
  {
    name: '7 escaped wildcards are literal',
    yaml: procRule("  selection:\n    CommandLine: 'echo \\*really\\?'\n  condition: selection"),
    match: [proc({ cmd_line: 'echo *really?' })],
    miss: [proc({ cmd_line: 'echo yes-really!' })],
  },
  {
    name: '8 null is an absent field',
    yaml: procRule("  selection:\n    Image|endswith: '\\cmd.exe'\n    ParentImage: null\n  condition: selection"),
    match: [proc({ file: { path: 'C:\\cmd.exe' } })],
    miss: [proc({ file: { path: 'C:\\cmd.exe' }, parent_process: { file: { path: 'C:\\explorer.exe' } } })],
  },
  {
    name: '9 re, case-sensitive by default',
    yaml: procRule("  selection:\n    CommandLine|re: '-[Ee]nc(odedCommand)? [A-Za-z0-9+/=]{8,}'\n  condition: selection"),
    match: [proc({ cmd_line: 'powershell -enc SQBFAFgAIAAo' })],
    miss: [proc({ cmd_line: 'powershell -ENC SQBFAFgAIAAo' }), proc({ cmd_line: 'powershell -enc abc' })],
  },
  {
    name: '10 re|i ignores case, re|s and re|m as flags',
    yaml: procRule("  sel_i:\n    CommandLine|re|i: '^invoke-mimikatz'\n  sel_m:\n    ParentCommandLine|re|m: '^second line$'\n  condition: sel_i or sel_m"),
    match: [proc({ cmd_line: 'INVOKE-Mimikatz -DumpCreds' }), proc({ parent_process: { cmd_line: 'first\nsecond line\nthird' } })],
    miss: [proc({ cmd_line: 'x Invoke-Mimikatz' }), proc({ parent_process: { cmd_line: 'first second line' } })],
  },
  {
    name: '11 cidr',
    yaml: 'title: internal to external\nlogsource:\n  category: network_connection\ndetection:\n  src:\n    SourceIp|cidr: 10.0.0.0/8\n  dst:\n    DestinationIp|cidr:\n      - 10.0.0.0/8\n      - 192.168.0.0/16\n  condition: src and not dst',
    match: [{ class_uid: 4001, src_endpoint: { ip: '10.1.2.3' }, dst_endpoint: { ip: '203.0.113.5' } }],
    miss: [{ class_uid: 4001, src_endpoint: { ip: '10.1.2.3' }, dst_endpoint: { ip: '192.168.1.1' } }, { class_uid: 4001, src_endpoint: { ip: '198.51.100.1' }, dst_endpoint: { ip: '203.0.113.5' } }],
  },
  {
    name: '12 numbers compare as numbers, gt/lt',
    yaml: 'title: high ports\nlogsource:\n  category: network_connection\ndetection:\n  selection:\n    DestinationPort|gte: 49152\n    SourcePort|lt: 1024\n  exact:\n    DestinationPort: 4444\n  condition: selection or exact',
    match: [{ class_uid: 4001, src_endpoint: { port: 53 }, dst_endpoint: { port: 50000 } }, { class_uid: 4001, dst_endpoint: { port: 4444 } }],
    miss: [{ class_uid: 4001, src_endpoint: { port: 2000 }, dst_endpoint: { port: 50000 } }, { class_uid: 4001, dst_endpoint: { port: 443 } }],
  },
  {
    name: '13 exists',
    yaml: procRule('  selection:\n    ParentImage|exists: true\n    User|exists: false\n  condition: selection'),
    match: [proc({ parent_process: { file: { path: 'C:\\x.exe' } } })],
    miss: [proc({ parent_process: { file: { path: 'C:\\x.exe' } }, user: { name: 'eve' } }), proc({})],
  },
  {
    name: '14 cased',
    yaml: procRule("  selection:\n    CommandLine|cased|contains: 'FromBase64String'\n  condition: selection"),
    match: [proc({ cmd_line: '[Convert]::FromBase64String($x)' })],
    miss: [proc({ cmd_line: '[convert]::frombase64string($x)' })],
  },
  {
    name: '15 windash',
    yaml: procRule("  selection:\n    CommandLine|windash|contains: ' -decode '\n  condition: selection"),
    match: [proc({ cmd_line: 'certutil /decode a b' }), proc({ cmd_line: 'certutil \u2013decode a b' }), proc({ cmd_line: 'CERTUTIL -DECODE a b' })],
    miss: [proc({ cmd_line: 'certutil decode a b' })],
  },
  {
    name: '16 base64 and base64offset with utf16le',
    yaml: procRule("  plain:\n    CommandLine|base64: 'http://evil'\n  offset:\n    CommandLine|utf16le|base64offset|contains: 'Invoke-'\n  condition: plain or offset"),
    match: [proc({ cmd_line: Buffer.from('http://evil').toString('base64') }), ...[0, 1, 2].map((pad) => proc({ cmd_line: `-enc ${Buffer.from(`${'a'.repeat(pad)}Invoke-Expression`, 'utf16le').toString('base64')}` }))],
    miss: [proc({ cmd_line: `-enc ${Buffer.from('Get-Process', 'utf16le').toString('base64')}` }), proc({ cmd_line: Buffer.from('http://evil').toString('base64').toLowerCase() })],
  },
  {
    name: '17 list of maps is OR of ANDs',
    yaml: procRule("  selection:\n    - Image|endswith: '\\mshta.exe'\n      CommandLine|contains: 'javascript:'\n    - Image|endswith: '\\wscript.exe'\n  condition: selection"),
    match: [proc({ file: { path: 'C:\\mshta.exe' }, cmd_line: 'mshta javascript:alert()' }), proc({ file: { path: 'C:\\wscript.exe' } })],
    miss: [proc({ file: { path: 'C:\\mshta.exe' }, cmd_line: 'mshta a.hta' })],
  },
  {
    name: '18 and, or, not, parentheses',
    yaml: procRule("  a:\n    Image|endswith: '\\reg.exe'\n  b:\n    CommandLine|contains: ' save '\n  c:\n    CommandLine|contains: ' export '\n  filter:\n    User: 'SYSTEM'\n  condition: a and (b or c) and not filter"),
    match: [proc({ file: { path: 'C:\\reg.exe' }, cmd_line: 'reg export HKLM\\SAM x', user: { name: 'eve' } })],
    miss: [proc({ file: { path: 'C:\\reg.exe' }, cmd_line: 'reg save HKLM\\SAM x', user: { name: 'system' } }), proc({ file: { path: 'C:\\reg.exe' }, cmd_line: 'reg query x' })],
  },
  {
    name: '19 1 of sel* and all of filter*',
    yaml: procRule("  sel_a:\n    CommandLine|contains: 'vssadmin'\n  sel_b:\n    CommandLine|contains: 'wbadmin'\n  filter_1:\n    CommandLine|contains: 'delete'\n  filter_2:\n    CommandLine|contains: 'shadows'\n  condition: 1 of sel_* and not all of filter_*"),
    match: [proc({ cmd_line: 'wbadmin get versions' }), proc({ cmd_line: 'vssadmin delete catalog' })],
    miss: [proc({ cmd_line: 'vssadmin delete shadows /all' }), proc({ cmd_line: 'net stop' })],
  },
  {
    name: '20 1 of them and all of them (underscore names left out)',
    yaml: procRule("  one:\n    CommandLine|contains: 'procdump'\n  two:\n    CommandLine|contains: 'lsass'\n  _helper:\n    CommandLine|contains: 'never-here'\n  condition: all of them"),
    match: [proc({ cmd_line: 'procdump -ma lsass.exe' })],
    miss: [proc({ cmd_line: 'procdump -ma notepad.exe' })],
  },
  {
    name: '21 1 of them',
    yaml: procRule("  one:\n    CommandLine|contains: 'procdump'\n  two:\n    CommandLine|contains: 'comsvcs'\n  condition: 1 of them"),
    match: [proc({ cmd_line: 'rundll32 comsvcs.dll MiniDump' })],
    miss: [proc({ cmd_line: 'notepad' })],
  },
  {
    name: '22 Okta authentication, outcome as OCSF status_id, the vendor required',
    yaml: "title: okta failed sign-in\nlogsource:\n  product: okta\n  service: okta\ndetection:\n  selection:\n    eventtype: user.session.start\n    outcome.result: FAILURE\n  condition: selection\nlevel: medium",
    match: [{ class_uid: 3002, metadata: { event_code: 'user.session.start', product: { vendor_name: 'Okta' } }, status_id: 2 }],
    miss: [{ class_uid: 3002, metadata: { event_code: 'user.session.start', product: { vendor_name: 'Okta' } }, status_id: 1 }, { class_uid: 3002, metadata: { event_code: 'user.session.start', product: { vendor_name: 'GitHub' } }, status_id: 2 }],
  },
  {
    name: '23 Windows security 4625 with a numeric EventID (the field name in any case) and LogonType',
    yaml: "title: network logon failure\nlogsource:\n  product: windows\n  service: security\ndetection:\n  selection:\n    eventid: 4625\n    LogonType:\n      - 3\n      - 10\n  condition: selection",
    match: [{ class_uid: 3002, metadata: { event_code: '4625' }, logon_type_id: 10 }],
    miss: [{ class_uid: 3002, metadata: { event_code: '4624' }, logon_type_id: 10 }, { class_uid: 3002, metadata: { event_code: '4625' }, logon_type_id: 2 }],
  },
  {
    name: '24 AWS CloudTrail',
    yaml: "title: cloudtrail stop logging\nlogsource:\n  product: aws\n  service: cloudtrail\ndetection:\n  selection:\n    eventSource: cloudtrail.amazonaws.com\n    eventName:\n      - StopLogging\n      - DeleteTrail\n  condition: selection",
    match: [{ class_uid: 6003, metadata: { event_code: 'StopLogging', product: { vendor_name: 'AWS' } }, api: { service: { name: 'cloudtrail.amazonaws.com' } } }],
    miss: [{ class_uid: 6003, metadata: { event_code: 'StartLogging', product: { vendor_name: 'AWS' } }, api: { service: { name: 'cloudtrail.amazonaws.com' } } }],
  },
  {
    name: '25 DNS and web server logsources',
    yaml: "title: dns tunnelling tld\nlogsource:\n  category: dns\ndetection:\n  selection:\n    query|endswith: '.onion'\n  condition: selection",
    match: [{ class_uid: 4003, query: { hostname: 'abc.ONION' } }],
    miss: [{ class_uid: 4003, query: { hostname: 'onion.example.com' } }],
  },
  {
    name: '26 condition as a list (OR of the conditions)',
    yaml: "title: webshell\nlogsource:\n  category: webserver\ndetection:\n  a:\n    c-uri|contains: 'cmd.aspx'\n  b:\n    sc-status: 500\n  condition:\n    - a\n    - b",
    match: [{ class_uid: 4002, http_request: { url: { url_string: 'https://x/CMD.aspx?c=whoami' } } }, { class_uid: 4002, http_response: { code: 500 } }],
    miss: [{ class_uid: 4002, http_request: { url: { url_string: 'https://x/index.html' } }, http_response: { code: 200 } }],
  },
];

describe('Sigma rules compiled to Weir rules', () => {
  it('has at least 20 rules', () => expect(CASES.length).toBeGreaterThanOrEqual(20));
  for (const c of CASES) {
    it(`${c.name}: matches its positive events and not its negative ones`, () => {
      expect(run(c.yaml, c.match)).toEqual(c.match.map(() => true));
      expect(run(c.yaml, c.miss)).toEqual(c.miss.map(() => false));
    });
  }

  it('keeps the rule\'s metadata: title, description, severity from level, ATT&CK ids from tags, the Sigma id', () => {
    const { title, definition } = compileSigma(
      "title: Brute force\nid: 5f0c7f2a-8d1e-4c8b-9a55-1e2f3a4b5c6d\ndescription: Many failures\nstatus: test\nauthor: Weir tests\ntags:\n  - attack.credential_access\n  - attack.t1110.001\n  - attack.T1078\n  - cve.2021-44228\nlogsource:\n  product: azure\n  service: signinlogs\ndetection:\n  selection:\n    ResultType: 50126\n  condition: selection\nlevel: high\n",
    );
    expect(title).toBe('Brute force');
    expect(definition).toMatchObject({ title: 'Brute force', description: 'Many failures', severity_id: 4, mitre: { tactics: ['TA0006'], techniques: ['T1110.001', 'T1078'] } });
    expect(definition.origin).toMatchObject({ format: 'sigma', id: '5f0c7f2a-8d1e-4c8b-9a55-1e2f3a4b5c6d', status: 'test', tags: ['cve.2021-44228'], logsource: { product: 'azure', service: 'signinlogs' } });
    // The OCSF status_code is text: the number compares as its text.
    expect(JSON.stringify(definition.condition)).toContain('{"field":"status_code","op":"eq","value":"50126","ignore_case":true}');
    expect((definition.condition as { all: unknown[] }).all.slice(0, 3)).toEqual([
      { field: 'class_uid', op: 'eq', value: 3002 },
      { field: 'metadata.product.vendor_name', op: 'eq', value: 'Microsoft' },
      { field: 'metadata.product.name', op: 'eq', value: 'Microsoft Entra ID' },
    ]);
  });

  it('compiles plain values of one field into one case-insensitive `in`', () => {
    const { definition } = compileSigma(procRule("  s:\n    Image:\n      - 'C:\\a.exe'\n      - 'C:\\b.exe'\n  condition: s"));
    expect((definition.condition as { all: unknown[] }).all[2]).toEqual({ field: 'process.file.path', op: 'in', value: ['C:\\a.exe', 'C:\\b.exe'], ignore_case: true });
  });
});

describe('refusals, each with where and why', () => {
  it.each([
    ['an unknown field, naming the logsource', procRule('  s:\n    Hashes|contains: abc\n  condition: s'), 'detection.s.Hashes|contains', /field "Hashes" has no OCSF mapping for logsource category: process_creation, product: windows/],
    ['an unknown logsource', 'title: t\nlogsource:\n  product: zeek\n  service: conn\ndetection:\n  s:\n    a: b\n  condition: s', 'logsource', /no OCSF mapping for the logsource product: zeek, service: conn/],
    ['an unsupported modifier', procRule('  s:\n    CommandLine|fieldref: User\n  condition: s'), 'detection.s.CommandLine|fieldref', /fieldref/],
    ['windash with base64', procRule('  s:\n    CommandLine|windash|base64offset|contains: -enc\n  condition: s'), 'detection.s.CommandLine|windash|base64offset|contains', /windash varies text values/],
    ['contains with re', procRule('  s:\n    CommandLine|contains|re: x\n  condition: s'), 'detection.s.CommandLine|contains|re', /cannot be combined/],
    ['an unknown modifier', procRule('  s:\n    CommandLine|sounds_like: x\n  condition: s'), 'detection.s.CommandLine|sounds_like', /unknown modifier "sounds_like"/],
    ['a regular expression RE2 cannot run', procRule("  s:\n    CommandLine|re: '(a)\\1'\n  condition: s"), 'detection.s.CommandLine|re', /RE2/],
    ['a look-around', procRule("  s:\n    CommandLine|re: 'foo(?!bar)'\n  condition: s"), 'detection.s.CommandLine|re', /RE2/],
    ['an aggregation', procRule('  s:\n    CommandLine: x\n  condition: s | count() by User > 5'), 'detection.condition (column 3)', /aggregations/],
    ['a timeframe', procRule('  s:\n    CommandLine: x\n  timeframe: 5m\n  condition: s'), 'detection.timeframe', /aggregations/],
    ['a correlation rule', 'title: t\ncorrelation:\n  type: event_count\n  rules: [a]\n', 'correlation', /correlation rules/],
    ['several documents', `${procRule('  s:\n    CommandLine: x\n  condition: s')}\n---\n${procRule('  s:\n    CommandLine: y\n  condition: s')}`, 'yaml', /2 YAML documents/],
    ['bad YAML, with its position', 'title: t\nlogsource:\n  category: [process_creation\ndetection: {}\n', 'yaml (line', /./],
    ['an unknown search identifier, with its column', procRule('  s:\n    CommandLine: x\n  condition: s and other'), 'detection.condition (column 7)', /no search identifier named "other"/],
    ['N of other than 1', procRule('  s1:\n    CommandLine: x\n  s2:\n    CommandLine: y\n  condition: 2 of s*'), 'detection.condition (column 1)', /"2 of" is not supported/],
    ['keywords without a field', procRule('  keywords:\n    - mimikatz\n  condition: keywords'), 'detection.keywords', /keyword searches/],
    ['a text modifier on a number field', 'title: t\nlogsource:\n  category: network_connection\ndetection:\n  s:\n    DestinationPort|startswith: 44\n  condition: s', 'detection.s.DestinationPort|startswith', /number in OCSF/],
    ['an enum value OCSF has no equivalent for', 'title: t\nlogsource:\n  product: okta\n  service: okta\ndetection:\n  s:\n    outcome.result: CHALLENGE\n  condition: s', 'detection.s.outcome.result', /no OCSF equivalent/],
    ['a Security log event Weir does not map to the logsource\'s class', 'title: t\nlogsource:\n  product: windows\n  service: security\ndetection:\n  s:\n    EventID: 4688\n  condition: s', 'detection.s.EventID', /the value 4688 cannot occur: Weir maps only the Security log's sign-in events/],
    ['a missing title', 'logsource:\n  category: process_creation\ndetection:\n  s:\n    Image: x\n  condition: s', 'title', /required/],
    ['an unknown level', procRule('  s:\n    Image: x\n  condition: s', 'level: severe\n'), 'level', /one of informational/],
  ])('%s', (_name, yaml, location, message) => {
    const e = refusal(yaml);
    expect(e.location.startsWith(location), e.location).toBe(true);
    expect(e.reason).toMatch(message);
  });

  it('locates bad YAML by line and column', () => {
    expect(refusal('title: t\nlogsource:\n  category: [process_creation\ndetection: {}\n').location).toMatch(/^yaml \(line \d+, column \d+\)$/);
    expect(refusal('title: a\ntitle: b\n').reason).toMatch(/unique|duplicate/i);
  });
});

describe('encodings', () => {
  it('windash varies option dashes only', () => {
    expect(windashVariants(' -a ')).toEqual([' -a ', ' /a ', ' \u2013a ', ' \u2014a ', ' \u2015a ']);
    expect(windashVariants('x-y')).toEqual(['x-y']);
    expect(windashVariants('-a -b -c -d -e')).toBeUndefined();
  });

  it('base64offset finds the value at every alignment', () => {
    const variants = base64Variants('secret', true);
    for (const prefix of ['', 'a', 'ab', 'abc']) {
      for (const suffix of ['', 'z', 'zz']) {
        const encoded = Buffer.from(`${prefix}secret${suffix}`).toString('base64');
        expect(variants.some((v) => encoded.includes(v)), `${prefix}|${suffix}`).toBe(true);
      }
    }
  });
});

describe('cloud logsources on what the built-in mappings write', () => {
  // Every built-in stream's fixtures, mapped: a rule must match exactly the events named, in its own stream only.
  const streams = ['okta/system_log', 'microsoft_graph/signins', 'aws_cloudtrail/cloudtrail', 'github/audit_log', 'google_workspace/login', 'google_workspace/admin', 'microsoft_graph/directory_audits'];
  const events = streams.flatMap((key) => {
    const [platform, name] = key.split('/') as [string, string];
    return stream(platform, name).out.map((ocsf, i) => ({ key: `${key}#${i}`, ocsf }));
  });
  const rule = (product: string, service: string, detection: string) => `title: t\nlogsource:\n  product: ${product}\n  service: ${service}\ndetection:\n${detection}`;
  it.each([
    ['okta failed sign-in', rule('okta', 'okta', '  s:\n    eventtype: user.session.start\n    outcome.result: failure\n  condition: s'), ['okta/system_log#1']],
    ['okta actor (not the target user)', rule('okta', 'okta', "  s:\n    actor.alternateid: 'IT.ADMIN@example.com'\n    eventtype|startswith: 'user.'\n  condition: s"), ['okta/system_log#5', 'okta/system_log#7']],
    ['okta target only is not the actor', rule('okta', 'okta', "  s:\n    actor.alternateid: 'sam.lee@example.com'\n  condition: s"), []],
    ['Entra ID sign-in errors from a network', rule('azure', 'signinlogs', '  s:\n    ResultType:\n      - 50126\n      - 50053\n    IPAddress|cidr: 203.0.113.0/24\n  condition: s'), ['microsoft_graph/signins#1', 'microsoft_graph/signins#5']],
    ['CloudTrail IAM changes', rule('aws', 'cloudtrail', '  s:\n    eventSource: iam.amazonaws.com\n    eventName: [CreateUser, AttachUserPolicy]\n  condition: s'), ['aws_cloudtrail/cloudtrail#3', 'aws_cloudtrail/cloudtrail#4']],
    ['CloudTrail denied calls', rule('aws', 'cloudtrail', '  s:\n    errorCode: AccessDenied\n  condition: s'), ['aws_cloudtrail/cloudtrail#8']],
    ['GitHub failed login and a bot actor', rule('github', 'audit', "  a:\n    action: user.failed_login\n  b:\n    actor|endswith: '[bot]'\n  condition: a or b"), ['github/audit_log#3', 'github/audit_log#7']],
    ['Google Workspace login failure', rule('gcp', 'google_workspace.login', '  s:\n    eventName: login_failure\n  condition: s'), ['google_workspace/login#1']],
    ['Google Workspace role assignment', rule('gcp', 'google_workspace.admin', '  s:\n    eventName: ASSIGN_ROLE\n  condition: s'), ['google_workspace/admin#7']],
  ])('%s', (_name, yaml, expected) => {
    const { definition } = compileSigma(yaml);
    expect(checkRule(definition)).toEqual([]);
    const d = compileDetection({ fingerprint: 'f', rules: [{ id: 'r', name: 'r', version: 1, definition }] });
    const matched = events.filter((e) => d.evaluate([rec(e.ocsf)]).hits.length === 1).map((e) => e.key);
    expect(matched).toEqual(expected);
  });
});

describe('the published logsource mapping', () => {
  it('is the one docs/sigma.md publishes, field by field', () => {
    const doc = readFileSync(new URL('../../../../docs/sigma.md', import.meta.url), 'utf8');
    for (const ls of LOGSOURCES) {
      const heading = (['category', 'product', 'service'] as const).filter((k) => ls[k]).map((k) => `${k}: ${ls[k]}`).join(', ');
      const section = doc.split(`### ${heading}\n`)[1]?.split('\n### ')[0];
      expect(section, heading).toBeDefined();
      for (const [name, f] of Object.entries(ls.fields)) expect(section, `${heading}: ${name}`).toContain(`| \`${name}\` | \`${f.path}\``);
    }
  });


  it('names only OCSF paths its classes have', () => {
    const cat = ocsfCatalog();
    for (const ls of LOGSOURCES) {
      const paths = [...(ls.where ?? []).map((c) => ('field' in c ? c.field : '')), ...Object.values(ls.fields).map((f) => f.path)];
      for (const p of paths) {
        const found = ls.classes.some((c) => cat.resolve(c, p.replaceAll('[*]', '[]')) !== undefined);
        expect(found, `${ls.category ?? `${ls.product}/${ls.service}`}: ${p}`).toBe(true);
      }
    }
  });
});
