import { describe, expect, it } from 'vitest';
import { classifyIndicator, readCsv } from './indicators.js';

describe('classifyIndicator', () => {
  it.each([
    ['198.51.100.7', 'ipv4'],
    ['2001:db8::1', 'ipv6'],
    ['10.0.0.0/8', 'cidr'],
    ['2001:db8::/32', 'cidr'],
    ['evil.example.com', 'domain'],
    ['Evil.Example.COM.', 'domain'],
    ['xn--80ak6aa92e.xn--p1ai', 'domain'],
    ['https://evil.example.com/a?b=1', 'url'],
    ['d41d8cd98f00b204e9800998ecf8427e', 'md5'],
    ['DA39A3EE5E6B4B0D3255BFEF95601890AFD80709', 'sha1'],
    ['e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855', 'sha256'],
  ])('%s is %s', (text, type) => expect(classifyIndicator(text)).toBe(type));

  it.each([
    '',
    'hello',
    '10.0.0.999',
    '1.2.3',
    '10.0.0.0/33',
    'abc/def',
    'd41d8cd98f00b204e9800998ecf8427',
    'hxxp[:]//x',
    'a b.com',
    '-bad.com',
  ])('%j is not an indicator', (text) => expect(classifyIndicator(text)).toBeNull());
});

describe('readCsv', () => {
  it('reads quoted fields, doubled quotes, line breaks in quotes, CRLF, and leading comments', () => {
    const { records, leadingComments } = readCsv(
      '# feed v1\n# a,b\n1,"x, ""y"""\r\n2,"multi\nline"\n\n# trailing\n3,\n',
    );
    expect(leadingComments).toEqual([' feed v1', ' a,b']);
    expect(records).toEqual([
      { line: 3, cells: ['1', 'x, "y"'] },
      { line: 4, cells: ['2', 'multi\nline'] },
      { line: 8, cells: ['3', ''] },
    ]);
  });
});
