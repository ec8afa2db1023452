// Sigma rules written for these tests from the Sigma specification, compiled and run through
// the real rule path (checkRule, compileDetection): each with events it must match and events
// it must not, covering every supported modifier and condition form; and the refusals, each
// with its location and reason. The logsource mapping's every OCSF path exists in its class.
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { stream } from '../../../../test/support/builtin.js';
import type { NormalizedRecord } from '../../envelope.js';
import { compileDetection } from '../evaluate.js';
import { checkRule } from '../rules.js';
import { compileSigma, SigmaError } from './compile.js';
import { base64Variants, windashVariants } from './encodings.js';
import { DOC_BEGIN, DOC_END, renderLogsources } from './docs.js';

type Ev = Record<string, unknown>;
let seq = 0;
const rec = (ocsf: Ev): NormalizedRecord => ({
  id: `0190a0b0-0000-7000-8000-${String(++seq).padStart(12, '0')}`,
  organization_id: 1,
  integration_id: 1,
  stream: 's',
  received_at: new Date().toISOString(),
  mapping_version_id: 'v',
  valid: true,
  ocsf,
});

/** Compiles the rule, checks it as the API would, and says which events it matches. */
function run(yaml: string, events: Ev[]): boolean[] {
  const { definition } = compileSigma(yaml);
  expect(checkRule(definition)).toEqual([]);
  const d = compileDetection({ fingerprint: 'f', rules: [{ id: 'r', name: 'r', version: 1, definition }] });
  return events.map((e) => d.evaluate([rec(e)]).hits.length === 1);
}

/** A Sysmon network connection (event 3), as the built-in mapping writes it. */
const net = (e: Ev): Ev => ({ class_uid: 4001, metadata: { event_code: '3', product: { name: 'Sysmon' } }, ...e });
/** A Sysmon registry value set (event 13). */
const reg = (reg_value: Ev): Ev => ({
  class_uid: 201002,
  activity_id: 2,
  metadata: { event_code: '13', product: { name: 'Sysmon' } },
  reg_value,
});
const proc = (p: Ev, extra: Ev = {}): Ev => ({ class_uid: 1007, activity_id: 1, process: p, ...extra });
const procRule = (detection: string, extra = '') =>
  `title: test\nlogsource:\n  category: process_creation\n  product: windows\n${extra}detection:\n${detection}`;

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
    miss: [
      proc({ file: { path: 'C:\\Windows\\System32\\whoami.exe.bak' } }),
      { class_uid: 1001, activity_id: 1, process: { file: { path: 'C:\\Windows\\System32\\whoami.exe' } } },
    ],
  },
  {
    name: '2 contains',
    yaml: procRule("  selection:\n    CommandLine|contains: ' -EncodedCommand '\n  condition: selection"),
    match: [proc({ cmd_line: 'powershell.exe -encodedcommand SQBFAFgA' })],
    miss: [proc({ cmd_line: 'powershell.exe -File x.ps1' })],
  },
  {
    name: '3 startswith and endswith',
    yaml: procRule(
      "  selection:\n    Image|endswith: '\\rundll32.exe'\n    CommandLine|startswith: 'rundll32'\n  condition: selection",
    ),
    match: [
      proc({ file: { path: 'C:\\Windows\\System32\\RUNDLL32.exe' }, cmd_line: 'Rundll32 shell32.dll,Control_RunDLL' }),
    ],
    miss: [
      proc({ file: { path: 'C:\\Windows\\System32\\rundll32.exe' }, cmd_line: '"C:\\x\\rundll32" a' }),
      proc({ file: { path: 'C:\\rundll32.exe.tmp' }, cmd_line: 'rundll32 a' }),
    ],
  },
  {
    name: '4 list of values is OR',
    yaml: procRule(
      "  selection:\n    Image|endswith:\n      - '\\powershell.exe'\n      - '\\pwsh.exe'\n  condition: selection",
    ),
    match: [proc({ file: { path: 'C:\\ps\\pwsh.exe' } }), proc({ file: { path: 'C:\\ps\\PowerShell.exe' } })],
    miss: [proc({ file: { path: 'C:\\ps\\cmd.exe' } })],
  },
  {
    name: '5 contains|all is AND',
    yaml: procRule(
      "  selection:\n    CommandLine|contains|all:\n      - 'net'\n      - ' user '\n      - '/add'\n  condition: selection",
    ),
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
    yaml: procRule(
      "  selection:\n    CommandLine|re: '-[Ee]nc(odedCommand)? [A-Za-z0-9+/=]{8,}'\n  condition: selection",
    ),
    match: [proc({ cmd_line: 'powershell -enc SQBFAFgAIAAo' })],
    miss: [proc({ cmd_line: 'powershell -ENC SQBFAFgAIAAo' }), proc({ cmd_line: 'powershell -enc abc' })],
  },
  {
    name: '10 re|i ignores case, re|s and re|m as flags',
    yaml: procRule(
      "  sel_i:\n    CommandLine|re|i: '^invoke-mimikatz'\n  sel_m:\n    ParentCommandLine|re|m: '^second line$'\n  condition: sel_i or sel_m",
    ),
    match: [
      proc({ cmd_line: 'INVOKE-Mimikatz -DumpCreds' }),
      proc({ parent_process: { cmd_line: 'first\nsecond line\nthird' } }),
    ],
    miss: [proc({ cmd_line: 'x Invoke-Mimikatz' }), proc({ parent_process: { cmd_line: 'first second line' } })],
  },
  {
    name: '11 cidr',
    yaml: 'title: internal to external\nlogsource:\n  category: network_connection\n  product: windows\ndetection:\n  src:\n    SourceIp|cidr: 10.0.0.0/8\n  dst:\n    DestinationIp|cidr:\n      - 10.0.0.0/8\n      - 192.168.0.0/16\n  condition: src and not dst',
    match: [net({ src_endpoint: { ip: '10.1.2.3' }, dst_endpoint: { ip: '203.0.113.5' } })],
    miss: [
      net({ src_endpoint: { ip: '10.1.2.3' }, dst_endpoint: { ip: '192.168.1.1' } }),
      net({ src_endpoint: { ip: '198.51.100.1' }, dst_endpoint: { ip: '203.0.113.5' } }),
    ],
  },
  {
    name: '12 numbers compare as numbers, gt/lt',
    yaml: 'title: high ports\nlogsource:\n  category: network_connection\n  product: windows\ndetection:\n  selection:\n    DestinationPort|gte: 49152\n    SourcePort|lt: 1024\n  exact:\n    DestinationPort: 4444\n  condition: selection or exact',
    match: [net({ src_endpoint: { port: 53 }, dst_endpoint: { port: 50000 } }), net({ dst_endpoint: { port: 4444 } })],
    miss: [net({ src_endpoint: { port: 2000 }, dst_endpoint: { port: 50000 } }), net({ dst_endpoint: { port: 443 } })],
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
    match: [
      proc({ cmd_line: 'certutil /decode a b' }),
      proc({ cmd_line: 'certutil \u2013decode a b' }),
      proc({ cmd_line: 'CERTUTIL -DECODE a b' }),
    ],
    miss: [proc({ cmd_line: 'certutil decode a b' })],
  },
  {
    name: '16 base64 and base64offset with utf16le',
    yaml: procRule(
      "  plain:\n    CommandLine|base64: 'http://evil'\n  offset:\n    CommandLine|utf16le|base64offset|contains: 'Invoke-'\n  condition: plain or offset",
    ),
    match: [
      proc({ cmd_line: Buffer.from('http://evil').toString('base64') }),
      ...[0, 1, 2].map((pad) =>
        proc({ cmd_line: `-enc ${Buffer.from(`${'a'.repeat(pad)}Invoke-Expression`, 'utf16le').toString('base64')}` }),
      ),
    ],
    miss: [
      proc({ cmd_line: `-enc ${Buffer.from('Get-Process', 'utf16le').toString('base64')}` }),
      proc({ cmd_line: Buffer.from('http://evil').toString('base64').toLowerCase() }),
    ],
  },
  {
    name: '17 list of maps is OR of ANDs',
    yaml: procRule(
      "  selection:\n    - Image|endswith: '\\mshta.exe'\n      CommandLine|contains: 'javascript:'\n    - Image|endswith: '\\wscript.exe'\n  condition: selection",
    ),
    match: [
      proc({ file: { path: 'C:\\mshta.exe' }, cmd_line: 'mshta javascript:alert()' }),
      proc({ file: { path: 'C:\\wscript.exe' } }),
    ],
    miss: [proc({ file: { path: 'C:\\mshta.exe' }, cmd_line: 'mshta a.hta' })],
  },
  {
    name: '18 and, or, not, parentheses',
    yaml: procRule(
      "  a:\n    Image|endswith: '\\reg.exe'\n  b:\n    CommandLine|contains: ' save '\n  c:\n    CommandLine|contains: ' export '\n  filter:\n    User: 'SYSTEM'\n  condition: a and (b or c) and not filter",
    ),
    match: [proc({ file: { path: 'C:\\reg.exe' }, cmd_line: 'reg export HKLM\\SAM x', user: { name: 'eve' } })],
    miss: [
      proc({ file: { path: 'C:\\reg.exe' }, cmd_line: 'reg save HKLM\\SAM x', user: { name: 'system' } }),
      proc({ file: { path: 'C:\\reg.exe' }, cmd_line: 'reg query x' }),
    ],
  },
  {
    name: '19 1 of sel* and all of filter*',
    yaml: procRule(
      "  sel_a:\n    CommandLine|contains: 'vssadmin'\n  sel_b:\n    CommandLine|contains: 'wbadmin'\n  filter_1:\n    CommandLine|contains: 'delete'\n  filter_2:\n    CommandLine|contains: 'shadows'\n  condition: 1 of sel_* and not all of filter_*",
    ),
    match: [proc({ cmd_line: 'wbadmin get versions' }), proc({ cmd_line: 'vssadmin delete catalog' })],
    miss: [proc({ cmd_line: 'vssadmin delete shadows /all' }), proc({ cmd_line: 'net stop' })],
  },
  {
    name: '20 1 of them and all of them (underscore names left out)',
    yaml: procRule(
      "  one:\n    CommandLine|contains: 'procdump'\n  two:\n    CommandLine|contains: 'lsass'\n  _helper:\n    CommandLine|contains: 'never-here'\n  condition: all of them",
    ),
    match: [proc({ cmd_line: 'procdump -ma lsass.exe' })],
    miss: [proc({ cmd_line: 'procdump -ma notepad.exe' })],
  },
  {
    name: '21 1 of them',
    yaml: procRule(
      "  one:\n    CommandLine|contains: 'procdump'\n  two:\n    CommandLine|contains: 'comsvcs'\n  condition: 1 of them",
    ),
    match: [proc({ cmd_line: 'rundll32 comsvcs.dll MiniDump' })],
    miss: [proc({ cmd_line: 'notepad' })],
  },
  {
    name: '22 Okta authentication, outcome as OCSF status_id, the vendor required',
    yaml: 'title: okta failed sign-in\nlogsource:\n  product: okta\n  service: okta\ndetection:\n  selection:\n    eventtype: user.session.start\n    outcome.result: FAILURE\n  condition: selection\nlevel: medium',
    match: [
      {
        class_uid: 3002,
        metadata: { event_code: 'user.session.start', product: { name: 'Okta System Log', vendor_name: 'Okta' } },
        status_id: 2,
      },
    ],
    miss: [
      {
        class_uid: 3002,
        metadata: { event_code: 'user.session.start', product: { name: 'Okta System Log', vendor_name: 'Okta' } },
        status_id: 1,
      },
      {
        class_uid: 3002,
        metadata: { event_code: 'user.session.start', product: { name: 'GitHub Audit Log', vendor_name: 'GitHub' } },
        status_id: 2,
      },
    ],
  },
  {
    name: '23 Windows security 4625 with a numeric EventID (the field name in any case) and LogonType',
    yaml: 'title: network logon failure\nlogsource:\n  product: windows\n  service: security\ndetection:\n  selection:\n    eventid: 4625\n    LogonType:\n      - 3\n      - 10\n  condition: selection',
    match: [
      {
        class_uid: 3002,
        activity_id: 1,
        metadata: { event_code: '4625', product: { name: 'Windows Security Auditing' } },
        logon_type_id: 10,
      },
    ],
    miss: [
      {
        class_uid: 3002,
        activity_id: 1,
        metadata: { event_code: '4624', product: { name: 'Windows Security Auditing' } },
        logon_type_id: 10,
      },
      {
        class_uid: 3002,
        activity_id: 1,
        metadata: { event_code: '4625', product: { name: 'Windows Security Auditing' } },
        logon_type_id: 2,
      },
    ],
  },
  {
    name: '24 AWS CloudTrail',
    yaml: 'title: cloudtrail stop logging\nlogsource:\n  product: aws\n  service: cloudtrail\ndetection:\n  selection:\n    eventSource: cloudtrail.amazonaws.com\n    eventName:\n      - StopLogging\n      - DeleteTrail\n  condition: selection',
    match: [
      {
        class_uid: 6003,
        metadata: { event_code: 'StopLogging', product: { name: 'CloudTrail', vendor_name: 'AWS' } },
        api: { service: { name: 'cloudtrail.amazonaws.com' } },
      },
    ],
    miss: [
      {
        class_uid: 6003,
        metadata: { event_code: 'StartLogging', product: { name: 'CloudTrail', vendor_name: 'AWS' } },
        api: { service: { name: 'cloudtrail.amazonaws.com' } },
      },
    ],
  },
  {
    name: '25 the dns category, over every DNS source',
    yaml: "title: dns tunnelling tld\nlogsource:\n  category: dns\ndetection:\n  selection:\n    query|endswith: '.onion'\n  condition: selection",
    match: [
      { class_uid: 4003, metadata: { product: { name: 'Zeek' } }, query: { hostname: 'abc.ONION' } },
      { class_uid: 4003, metadata: { product: { name: 'Route 53 Resolver' } }, query: { hostname: 'x.onion' } },
    ],
    miss: [
      { class_uid: 4003, metadata: { product: { name: 'Zeek' } }, query: { hostname: 'onion.example.com' } },
      { class_uid: 4003, metadata: { product: { name: 'Sysmon' } }, query: { hostname: 'x.onion' } },
    ],
  },
  {
    name: '26 condition as a list (OR of the conditions)',
    yaml: procRule(
      "  a:\n    CommandLine|contains: 'cmd.aspx'\n  b:\n    ProcessId: 500\n  condition:\n    - a\n    - b",
    ),
    match: [proc({ cmd_line: 'x CMD.aspx?c=whoami' }), proc({ pid: 500 })],
    miss: [proc({ cmd_line: 'index.html', pid: 200 })],
  },
  {
    name: '27 DOMAIN\\user over user.domain and user.name, as the mappings split it',
    yaml: procRule(
      "  a:\n    User|contains: AUTHORI\n  b:\n    ParentUser: 'CORP\\alice'\n  c:\n    User|endswith: '\\SYSTEM'\n  condition: (a or b) and c",
    ),
    match: [
      proc({ user: { domain: 'NT AUTHORITY', name: 'SYSTEM' } }),
      proc({ user: { domain: 'x', name: 'system' }, parent_process: { user: { domain: 'corp', name: 'ALICE' } } }),
    ],
    miss: [
      proc({ user: { domain: 'NT AUTHORITY', name: 'LOCAL SERVICE' } }),
      proc({ user: { name: 'SYSTEM' } }),
      proc({ user: { domain: 'x', name: 'SYSTEM' }, parent_process: { user: { domain: 'CORP', name: 'alice2' } } }),
    ],
  },
  {
    name: '28 a registry value path over reg_value.path and reg_value.name',
    yaml: "title: run key\nlogsource:\n  category: registry_set\n  product: windows\ndetection:\n  s:\n    TargetObject|contains: '\\CurrentVersion\\Run\\'\n  e:\n    TargetObject|endswith: '\\Run\\Updater'\n  condition: s or e",
    match: [
      reg({ path: 'HKLM\\Software\\Microsoft\\Windows\\CurrentVersion\\Run', name: 'x' }),
      reg({ path: 'HKLM\\Software\\Microsoft\\Windows\\CurrentVersion\\Run\\Sub', name: 'x' }),
      reg({ path: 'HKCU\\Run', name: 'updater' }),
    ],
    miss: [
      reg({ path: 'HKLM\\Software\\Microsoft\\Windows\\CurrentVersion', name: 'Run' }),
      reg({ path: 'HKCU\\Run\\Updater', name: 'x' }),
    ],
  },
  {
    name: '29 Sysmon Hashes entries and a hex GrantedAccess',
    yaml: "title: h\nlogsource:\n  category: process_creation\n  product: windows\ndetection:\n  s:\n    Hashes|contains:\n      - 'IMPHASH=AB12'\n      - 'SHA256=CD34'\n  condition: s",
    match: [
      proc({
        file: {
          hashes: [
            { algorithm_id: 1, value: 'ff' },
            { algorithm_id: 18, value: 'ab12' },
          ],
        },
      }),
      proc({ file: { hashes: [{ algorithm_id: 3, value: 'CD34' }] } }),
    ],
    miss: [proc({ file: { hashes: [{ algorithm_id: 18, value: 'ff' }] } }), proc({})],
  },
  {
    name: '30 GrantedAccess in hex is the number the mapping stores',
    yaml: "title: lsass\nlogsource:\n  category: process_access\n  product: windows\ndetection:\n  s:\n    TargetImage|endswith: '\\lsass.exe'\n    GrantedAccess: ['0x1410', '0x1FFFFF']\n  condition: s",
    match: [
      {
        class_uid: 1007,
        activity_id: 3,
        metadata: { product: { name: 'Sysmon' } },
        process: { file: { path: 'C:\\Windows\\System32\\lsass.exe' } },
        actual_permissions: 0x1410,
      },
    ],
    miss: [
      {
        class_uid: 1007,
        activity_id: 3,
        metadata: { product: { name: 'Sysmon' } },
        process: { file: { path: 'C:\\Windows\\System32\\lsass.exe' } },
        actual_permissions: 0x1010,
      },
    ],
  },
  {
    name: '31 a logsource of several variants: EventType picks the class',
    yaml: "title: ev\nlogsource:\n  category: registry_event\n  product: windows\ndetection:\n  s:\n    EventType: [CreateKey, SetValue]\n    TargetObject|contains: '\\Services\\Evil'\n  condition: s",
    match: [
      {
        class_uid: 201001,
        activity_id: 1,
        metadata: { event_code: '12', product: { name: 'Sysmon' } },
        reg_key: { path: 'HKLM\\System\\Services\\Evil' },
      },
      reg({ path: 'HKLM\\System\\Services\\Evil', name: 'ImagePath' }),
    ],
    miss: [
      {
        class_uid: 201001,
        activity_id: 4,
        metadata: { event_code: '12', product: { name: 'Sysmon' } },
        reg_key: { path: 'HKLM\\System\\Services\\Evil' },
      },
      reg({ path: 'HKLM\\System\\Services\\Good', name: 'Evil' }),
    ],
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

  it("keeps the rule's metadata: title, description, severity from level, ATT&CK ids from tags, the Sigma id", () => {
    const { title, definition } = compileSigma(
      'title: Brute force\nid: 5f0c7f2a-8d1e-4c8b-9a55-1e2f3a4b5c6d\ndescription: Many failures\nstatus: test\nauthor: Weir tests\ntags:\n  - attack.credential_access\n  - attack.t1110.001\n  - attack.T1078\n  - cve.2021-44228\nlogsource:\n  product: azure\n  service: signinlogs\ndetection:\n  selection:\n    ResultType: 50126\n  condition: selection\nlevel: high\n',
    );
    expect(title).toBe('Brute force');
    expect(definition).toMatchObject({
      title: 'Brute force',
      description: 'Many failures',
      severity_id: 4,
      mitre: { tactics: ['TA0006'], techniques: ['T1110.001', 'T1078'] },
    });
    expect(definition.origin).toMatchObject({
      format: 'sigma',
      id: '5f0c7f2a-8d1e-4c8b-9a55-1e2f3a4b5c6d',
      status: 'test',
      tags: ['cve.2021-44228'],
      logsource: { product: 'azure', service: 'signinlogs' },
    });
    // The OCSF status_code is text: the number compares as its text.
    expect(JSON.stringify(definition.condition)).toContain(
      '{"field":"status_code","op":"eq","value":"50126","ignore_case":true}',
    );
    expect((definition.condition as { all: unknown[] }).all.slice(0, 2)).toEqual([
      { field: 'class_uid', op: 'eq', value: 3002 },
      { field: 'metadata.product.name', op: 'eq', value: 'Microsoft Entra ID' },
    ]);
  });

  it('turns count() by Field > N within a timeframe into a threshold per group', () => {
    const { definition } = compileSigma(
      procRule("  s:\n    Image|endswith: '\\net.exe'\n  condition: s | count() by Computer > 4\n  timeframe: 10m"),
    );
    expect(definition).toMatchObject({ threshold: { count: 5, window_seconds: 600 }, group_by: ['device.hostname'] });
    expect(
      compileSigma(procRule('  s:\n    Image: x\n  condition: s | count() >= 3\n  timeframe: 1h')).definition,
    ).toMatchObject({ threshold: { count: 3, window_seconds: 3600 } });
    const d = compileDetection({ fingerprint: 'f', rules: [{ id: 'r', name: 'r', version: 1, definition }] });
    const t = Date.parse('2026-01-01T00:00:00Z');
    const events = [0, 1, 2, 3, 4].map((i) =>
      rec({
        ...proc({ file: { path: 'C:\\Windows\\net.exe' } }),
        device: { hostname: i < 4 ? 'ws1' : 'ws2' },
        time: t + i * 1000,
      }),
    );
    // Counted per group in the window: the module settles the hits into a finding once a group reaches the count.
    expect(d.evaluate(events).hits.map((h) => [h.group, h.count])).toEqual([
      [{ 'device.hostname': 'ws1' }, 4],
      [{ 'device.hostname': 'ws2' }, 1],
    ]);
  });

  it('compiles plain values of one field into one case-insensitive `in`', () => {
    const { definition } = compileSigma(
      procRule("  s:\n    Image:\n      - 'C:\\a.exe'\n      - 'C:\\b.exe'\n  condition: s"),
    );
    expect((definition.condition as { all: unknown[] }).all[2]).toEqual({
      field: 'process.file.path',
      op: 'in',
      value: ['C:\\a.exe', 'C:\\b.exe'],
      ignore_case: true,
    });
  });
});

describe('refusals, each with where and why', () => {
  it.each([
    [
      'a field no built-in mapping writes, naming the logsource',
      procRule('  s:\n    CallTrace|contains: abc\n  condition: s'),
      'detection.s.CallTrace|contains',
      /field "CallTrace" is never written by the built-in mappings of logsource category: process_creation, product: windows \(sysmon.operational .*could never fire/,
    ],
    [
      'a filter on a field no built-in mapping writes',
      procRule("  s:\n    Image|endswith: '\\\\x.exe'\n  f:\n    Signature: Microsoft\n  condition: s and not f"),
      'detection.f.Signature',
      /never written/,
    ],
    [
      'Linux process creation (no built-in mapping)',
      'title: t\nlogsource:\n  category: process_creation\n  product: linux\ndetection:\n  s:\n    Image: /bin/sh\n  condition: s',
      'logsource',
      /no OCSF mapping for the logsource category: process_creation, product: linux/,
    ],
    [
      'an unknown logsource',
      'title: t\nlogsource:\n  product: linux\n  service: auditd\ndetection:\n  s:\n    a: b\n  condition: s',
      'logsource',
      /no OCSF mapping for the logsource product: linux, service: auditd/,
    ],
    [
      'an unsupported modifier',
      procRule('  s:\n    CommandLine|fieldref: User\n  condition: s'),
      'detection.s.CommandLine|fieldref',
      /fieldref/,
    ],
    [
      'windash with base64',
      procRule('  s:\n    CommandLine|windash|base64offset|contains: -enc\n  condition: s'),
      'detection.s.CommandLine|windash|base64offset|contains',
      /windash varies text values/,
    ],
    [
      'contains with re',
      procRule('  s:\n    CommandLine|contains|re: x\n  condition: s'),
      'detection.s.CommandLine|contains|re',
      /cannot be combined/,
    ],
    [
      'an unknown modifier',
      procRule('  s:\n    CommandLine|sounds_like: x\n  condition: s'),
      'detection.s.CommandLine|sounds_like',
      /unknown modifier "sounds_like"/,
    ],
    [
      'a regular expression RE2 cannot run',
      procRule("  s:\n    CommandLine|re: '(a)\\1'\n  condition: s"),
      'detection.s.CommandLine|re',
      /RE2/,
    ],
    [
      'a look-around',
      procRule("  s:\n    CommandLine|re: 'foo(?!bar)'\n  condition: s"),
      'detection.s.CommandLine|re',
      /RE2/,
    ],
    [
      'a distinct count',
      procRule('  s:\n    CommandLine: x\n  condition: s | count(User) by Computer > 5\n  timeframe: 5m'),
      'detection.condition (column 3)',
      /counts distinct values/,
    ],
    [
      'a count below',
      procRule('  s:\n    CommandLine: x\n  condition: s | count() by Computer < 5\n  timeframe: 5m'),
      'detection.condition (column 3)',
      /only > and >= compile/,
    ],
    [
      'a count without a timeframe',
      procRule('  s:\n    CommandLine: x\n  condition: s | count() by Computer > 5'),
      'detection.timeframe',
      /needs a timeframe/,
    ],
    [
      'a count by a composite field',
      procRule('  s:\n    CommandLine: x\n  condition: s | count() by User > 5\n  timeframe: 5m'),
      'detection.condition (column 3)',
      /split over several OCSF attributes/,
    ],
    [
      'a timeframe without an aggregation',
      procRule('  s:\n    CommandLine: x\n  timeframe: 5m\n  condition: s'),
      'detection.timeframe',
      /belongs to an aggregation/,
    ],
    [
      'a correlation rule',
      'title: t\ncorrelation:\n  type: event_count\n  rules: [a]\n',
      'correlation',
      /correlation rules/,
    ],
    [
      'several documents',
      `${procRule('  s:\n    CommandLine: x\n  condition: s')}\n---\n${procRule('  s:\n    CommandLine: y\n  condition: s')}`,
      'yaml',
      /2 YAML documents/,
    ],
    [
      'bad YAML, with its position',
      'title: t\nlogsource:\n  category: [process_creation\ndetection: {}\n',
      'yaml (line',
      /./,
    ],
    [
      'an unknown search identifier, with its column',
      procRule('  s:\n    CommandLine: x\n  condition: s and other'),
      'detection.condition (column 7)',
      /no search identifier named "other"/,
    ],
    [
      'N of other than 1',
      procRule('  s1:\n    CommandLine: x\n  s2:\n    CommandLine: y\n  condition: 2 of s*'),
      'detection.condition (column 1)',
      /"2 of" is not supported/,
    ],
    [
      'keywords without a field',
      procRule('  keywords:\n    - mimikatz\n  condition: keywords'),
      'detection.keywords',
      /keyword searches/,
    ],
    [
      'a text modifier on a number field',
      'title: t\nlogsource:\n  category: network_connection\n  product: windows\ndetection:\n  s:\n    DestinationPort|startswith: 44\n  condition: s',
      'detection.s.DestinationPort|startswith',
      /number in OCSF/,
    ],
    [
      'an enum value OCSF has no equivalent for',
      'title: t\nlogsource:\n  product: okta\n  service: okta\ndetection:\n  s:\n    outcome.result: CHALLENGE\n  condition: s',
      'detection.s.outcome.result',
      /no OCSF equivalent/,
    ],
    [
      'a Security log event Weir maps only to Base Event',
      'title: t\nlogsource:\n  product: windows\n  service: security\ndetection:\n  s:\n    EventID: 5379\n  condition: s',
      'detection.condition',
      /no event Weir maps for logsource product: windows, service: security can match this rule/,
    ],
    [
      'a missing title',
      'logsource:\n  category: process_creation\ndetection:\n  s:\n    Image: x\n  condition: s',
      'title',
      /required/,
    ],
    [
      'an unknown level',
      procRule('  s:\n    Image: x\n  condition: s', 'level: severe\n'),
      'level',
      /one of informational/,
    ],
  ])('%s', (_name, yaml, location, message) => {
    const e = refusal(yaml);
    expect(e.location.startsWith(location), e.location).toBe(true);
    expect(e.reason).toMatch(message);
  });

  it('locates bad YAML by line and column', () => {
    expect(refusal('title: t\nlogsource:\n  category: [process_creation\ndetection: {}\n').location).toMatch(
      /^yaml \(line \d+, column \d+\)$/,
    );
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
        expect(
          variants.some((v) => encoded.includes(v)),
          `${prefix}|${suffix}`,
        ).toBe(true);
      }
    }
  });
});

describe('cloud logsources on what the built-in mappings write', () => {
  // Every built-in stream's fixtures, mapped: a rule must match exactly the events named, in its own stream only.
  const streams = [
    'okta/system_log',
    'microsoft_graph/signins',
    'aws_cloudtrail/cloudtrail',
    'github/audit_log',
    'google_workspace/login',
    'google_workspace/admin',
    'microsoft_graph/directory_audits',
  ];
  const events = streams.flatMap((key) => {
    const [platform, name] = key.split('/') as [string, string];
    return stream(platform, name).out.map((ocsf, i) => ({ key: `${key}#${i}`, ocsf }));
  });
  const rule = (product: string, service: string, detection: string) =>
    `title: t\nlogsource:\n  product: ${product}\n  service: ${service}\ndetection:\n${detection}`;
  it.each([
    [
      'okta failed sign-in',
      rule('okta', 'okta', '  s:\n    eventtype: user.session.start\n    outcome.result: failure\n  condition: s'),
      ['okta/system_log#1'],
    ],
    [
      'okta actor (not the target user)',
      rule(
        'okta',
        'okta',
        "  s:\n    actor.alternateid: 'IT.ADMIN@example.com'\n    eventtype|startswith: 'user.'\n  condition: s",
      ),
      ['okta/system_log#5', 'okta/system_log#7'],
    ],
    [
      'okta target only is not the actor',
      rule('okta', 'okta', "  s:\n    actor.alternateid: 'sam.lee@example.com'\n  condition: s"),
      [],
    ],
    [
      'Entra ID sign-in errors from a network',
      rule(
        'azure',
        'signinlogs',
        '  s:\n    ResultType:\n      - 50126\n      - 50053\n    IPAddress|cidr: 203.0.113.0/24\n  condition: s',
      ),
      ['microsoft_graph/signins#1', 'microsoft_graph/signins#5'],
    ],
    [
      'CloudTrail IAM changes',
      rule(
        'aws',
        'cloudtrail',
        '  s:\n    eventSource: iam.amazonaws.com\n    eventName: [CreateUser, AttachUserPolicy]\n  condition: s',
      ),
      ['aws_cloudtrail/cloudtrail#3', 'aws_cloudtrail/cloudtrail#4'],
    ],
    [
      'CloudTrail denied calls',
      rule('aws', 'cloudtrail', '  s:\n    errorCode: AccessDenied\n  condition: s'),
      ['aws_cloudtrail/cloudtrail#8'],
    ],
    [
      'GitHub failed login and a bot actor',
      rule(
        'github',
        'audit',
        "  a:\n    action: user.failed_login\n  b:\n    actor|endswith: '[bot]'\n  condition: a or b",
      ),
      ['github/audit_log#3', 'github/audit_log#7'],
    ],
    [
      'Google Workspace login failure',
      rule(
        'gcp',
        'google_workspace.login',
        '  s:\n    protoPayload.metadata.event.eventName: login_failure\n  condition: s',
      ),
      ['google_workspace/login#1'],
    ],
    [
      'Google Workspace role assignment',
      rule('gcp', 'google_workspace.admin', '  s:\n    eventName: ASSIGN_ROLE\n  condition: s'),
      ['google_workspace/admin#7'],
    ],
  ])('%s', (_name, yaml, expected) => {
    const { definition } = compileSigma(yaml);
    expect(checkRule(definition)).toEqual([]);
    const d = compileDetection({ fingerprint: 'f', rules: [{ id: 'r', name: 'r', version: 1, definition }] });
    const matched = events.filter((e) => d.evaluate([rec(e.ocsf)]).hits.length === 1).map((e) => e.key);
    expect(matched).toEqual(expected);
  });
});

describe('the published logsource mapping', () => {
  it('is the one docs/sigma.md publishes (npx tsx scripts/sigma-docs.ts)', () => {
    const doc = readFileSync(new URL('../../../../docs/sigma.md', import.meta.url), 'utf8');
    const published = doc.split(DOC_BEGIN)[1]?.split(DOC_END)[0];
    expect(published?.trim()).toBe(renderLogsources().trim());
  });
});
