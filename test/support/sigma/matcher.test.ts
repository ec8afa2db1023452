// The reference matcher against the Sigma specification's own statements and examples: each
// case is a detection with events it must match and events it must not.
import { describe, expect, it } from 'vitest';
import {
  base64OffsetVariants,
  matches,
  parseDetection,
  parseSigmaCondition,
  UnsupportedSigma,
  type SigmaEvent,
} from './matcher.js';

const sel = (items: Record<string, unknown>) => ({ selection: items, condition: 'selection' });

interface Case {
  name: string;
  detection: Record<string, unknown>;
  match: SigmaEvent[];
  miss: SigmaEvent[];
}

const CASES: Case[] = [
  {
    name: 'field names ignore case, values ignore case',
    detection: sel({ image: 'C:\\Windows\\System32\\whoami.exe' }),
    match: [{ Image: 'c:\\windows\\system32\\WHOAMI.EXE' }],
    miss: [{ Image: 'C:\\Windows\\System32\\whoami.exe.bak' }, {}],
  },
  {
    name: 'cased',
    detection: sel({ 'CommandLine|cased|contains': 'FromBase64String' }),
    match: [{ CommandLine: 'x [Convert]::FromBase64String(y)' }],
    miss: [{ CommandLine: 'x [convert]::frombase64string(y)' }],
  },
  {
    name: 'wildcards and their escapes',
    // `\*` is a literal star, `\\*` a backslash and a wildcard, `\W` a backslash and W.
    detection: sel({
      CommandLine: ['schtasks*/create*/tn ?update', 'echo \\*really\\?', 'C:\\Windows\\\\*', 'D:\\Temp\\*'],
    }),
    match: [
      { CommandLine: 'SCHTASKS /Create /TN xupdate' },
      { CommandLine: 'echo *really?' },
      { CommandLine: 'c:\\windows\\system32' },
      { CommandLine: 'D:\\Temp*' },
    ],
    miss: [
      { CommandLine: 'schtasks /create /tn update' },
      { CommandLine: 'echo yes-really!' },
      { CommandLine: 'E:\\Windows\\x' },
      { CommandLine: 'D:\\Temp\\x' },
    ],
  },
  {
    name: 'contains, startswith, endswith; a list is OR, |all is AND',
    detection: {
      a: { 'Image|endswith': ['\\pwsh.exe', '\\powershell.exe'] },
      b: { 'CommandLine|contains|all': ['net', ' user ', '/add'] },
      c: { 'ParentImage|startswith': 'C:\\Temp\\' },
      condition: 'a or b or c',
    },
    match: [
      { Image: 'C:\\x\\PowerShell.exe' },
      { CommandLine: 'NET USER eve /ADD' },
      { ParentImage: 'c:\\temp\\x.exe' },
    ],
    miss: [{ Image: 'C:\\x\\cmd.exe' }, { CommandLine: 'net user eve' }, { ParentImage: 'D:\\C:\\Temp\\x.exe' }],
  },
  {
    name: 'null is an absent or empty field, an empty string only an empty one',
    detection: { n: { CommandLine: null }, e: { ParentImage: '' }, condition: 'n and e' },
    match: [{ ParentImage: '' }, { CommandLine: '', ParentImage: '' }],
    miss: [{ CommandLine: 'x', ParentImage: '' }, {}, { ParentImage: 'x' }],
  },
  {
    name: 're: searched, case-sensitive unless i; m and s as flags',
    detection: {
      a: { 'CommandLine|re': '-[Ee]nc [A-Za-z0-9+/=]{8,}' },
      b: { 'Payload|re|i': '^invoke-mimikatz' },
      c: { 'Data|re|m': '^second$' },
      d: { 'Text|re|s': 'a.b' },
      condition: '1 of them',
    },
    match: [
      { CommandLine: 'powershell -enc SQBFAFgAIAAo' },
      { Payload: 'INVOKE-Mimikatz x' },
      { Data: 'first\nsecond\nthird' },
      { Text: 'a\nb' },
    ],
    miss: [
      { CommandLine: 'powershell -ENC SQBFAFgAIAAo' },
      { Payload: 'x invoke-mimikatz' },
      { Data: 'first second' },
      { Text: 'a\n\nb' },
    ],
  },
  {
    name: 'cidr, IPv4 and IPv6',
    detection: sel({ 'DestinationIp|cidr': ['10.0.0.0/8', 'fe80::/10'] }),
    match: [{ DestinationIp: '10.1.2.3' }, { DestinationIp: 'fe80::1' }],
    miss: [{ DestinationIp: '11.0.0.1' }, { DestinationIp: '2001:db8::1' }, { DestinationIp: 'not an address' }],
  },
  {
    name: 'exists',
    detection: { a: { 'ParentImage|exists': true }, b: { 'User|exists': false }, condition: 'a and b' },
    match: [{ ParentImage: 'x' }],
    miss: [{ ParentImage: 'x', User: 'eve' }, {}],
  },
  {
    name: 'gt, gte, lt, lte compare numbers',
    detection: {
      a: { 'DestinationPort|gte': 49152, 'SourcePort|lt': 1024 },
      b: { 'Count|gt': '5', 'Count|lte': 7 },
      condition: 'a or b',
    },
    match: [{ DestinationPort: 50000, SourcePort: '53' }, { Count: 6 }, { Count: '7' }],
    miss: [{ DestinationPort: 50000, SourcePort: 2000 }, { Count: 5 }, { Count: 8 }, { Count: 'x' }],
  },
  {
    name: 'windash: a dash starting a word is any dash character',
    detection: sel({ 'CommandLine|windash|contains': ' -encodedcommand ' }),
    match: [
      { CommandLine: 'ps -EncodedCommand x' },
      { CommandLine: 'ps /encodedcommand x' },
      { CommandLine: 'ps \u2013encodedcommand x' },
      { CommandLine: 'ps \u2015encodedcommand x' },
    ],
    miss: [{ CommandLine: 'ps +encodedcommand x' }],
  },
  {
    name: 'base64, base64offset, utf16',
    detection: {
      a: { 'CommandLine|base64': 'http://' },
      b: { 'CommandLine|base64offset|contains': '/bin/bash' },
      c: { 'CommandLine|wide|base64|contains': 'ping' },
      condition: '1 of them',
    },
    match: [
      { CommandLine: 'aHR0cDovLw==' },
      { CommandLine: 'x L2Jpbi9iYXNo x' },
      { CommandLine: 'x9iaW4vYmFza' },
      { CommandLine: 'vYmluL2Jhc2y' },
      { CommandLine: 'JAB4ACAAcABpAG4AZwA=' },
    ],
    miss: [{ CommandLine: 'AHR0CDOVLW==' }, { CommandLine: 'l2jpbi9iyxno' }, { CommandLine: 'cGluZw==' }],
  },
  {
    name: 'a list of maps is OR; a map is AND',
    detection: { selection: [{ Image: 'a', User: 'u' }, { Image: 'b' }], condition: 'selection' },
    match: [{ Image: 'a', User: 'u' }, { Image: 'b' }],
    miss: [{ Image: 'a' }, { Image: 'c', User: 'u' }],
  },
  {
    name: 'not binds tighter than and, and tighter than or; parentheses',
    detection: { a: { A: 1 }, b: { B: 1 }, c: { C: 1 }, condition: 'a or b and not c' },
    match: [{ A: 1, B: 1, C: 1 }, { B: 1 }],
    miss: [{ B: 1, C: 1 }, {}],
  },
  {
    name: '1 of, all of, them without underscore identifiers',
    detection: {
      sel_a: { A: 1 },
      sel_b: { B: 1 },
      _helper: { H: 1 },
      condition: 'all of sel_* or (1 of them and not 1 of _*)',
    },
    match: [{ A: 1, B: 1 }, { A: 1 }, { A: 1, B: 1, H: 1 }],
    miss: [{ H: 1 }, { A: 1, H: 1 }],
  },
  {
    name: 'a list of conditions is OR; an aggregation is not part of one event',
    detection: { a: { A: 1 }, b: { B: 1 }, condition: ['a', 'b | count() by C > 3'] },
    match: [{ A: 1 }, { B: 1 }],
    miss: [{ C: 1 }],
  },
];

describe('the reference Sigma matcher', () => {
  for (const c of CASES) {
    it(c.name, () => {
      const d = parseDetection(c.detection);
      expect(c.match.map((e) => matches(d, e))).toEqual(c.match.map(() => true));
      expect(c.miss.map((e) => matches(d, e))).toEqual(c.miss.map(() => false));
    });
  }

  it("base64offset cuts the three alignments as the specification's example", () => {
    expect(base64OffsetVariants(Buffer.from('/bin/bash'))).toEqual(['L2Jpbi9iYXNo', '9iaW4vYmFza', 'vYmluL2Jhc2']);
    expect(base64OffsetVariants(Buffer.from('http://'))).toEqual(['aHR0cDovL', 'h0dHA6Ly', 'odHRwOi8v']);
  });

  it('refuses what it does not evaluate', () => {
    expect(() => parseDetection({ keywords: ['a', 'b'], condition: 'keywords' })).toThrow(UnsupportedSigma);
    expect(() => parseDetection(sel({ 'A|fieldref': 'B' }))).toThrow(UnsupportedSigma);
    expect(() => parseSigmaCondition('a and', ['a'])).toThrow(UnsupportedSigma);
  });
});
