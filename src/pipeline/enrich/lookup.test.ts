import { describe, expect, it } from 'vitest';
import ipaddr from 'ipaddr.js';
import { isReserved, parseAddress, parseIPv4, parseIPv6, parseNetwork, networkText } from './ip.js';
import { buildTable, tableFromJson } from './table.js';
import type { MatchKind } from './types.js';
import { globMatch } from './wildcard-index.js';

const build = (match: MatchKind, rows: Record<string, unknown>[]) => buildTable(tableFromJson(rows, 'k', match));

describe('exact and case_insensitive', () => {
  it('answers by key; the last row of a key wins; number keys compare as text', () => {
    const t = build('exact', [
      { k: 'a', v: 1 },
      { k: 'A', v: 2 },
      { k: 'a', v: 3 },
      { k: 443, v: 4 },
    ]);
    expect(t.get('a')).toEqual({ k: 'a', v: 3 });
    expect(t.get('A')).toEqual({ k: 'A', v: 2 });
    expect(t.get('443')?.v).toBe(4);
    expect(t.get('b')).toBeUndefined();
    expect(t.size).toBe(3);
  });

  it('folds case on both sides', () => {
    const t = build('case_insensitive', [
      { k: 'Alice', v: 1 },
      { k: 'BOB', v: 2 },
    ]);
    expect(t.get('alice')?.v).toBe(1);
    expect(t.get('ALICE')?.v).toBe(1);
    expect(t.get('bob')?.v).toBe(2);
    expect(t.get('carol')).toBeUndefined();
  });
});

describe('cidr', () => {
  const t = build('cidr', [
    { k: '10.0.0.0/8', v: 'corp' },
    { k: '10.1.0.0/16', v: 'paris' },
    { k: '10.1.2.3', v: 'printer' },
    { k: '0.0.0.0/0', v: 'internet' },
    { k: '2001:db8::/32', v: 'v6 doc' },
    { k: '2001:db8:1::/48', v: 'v6 lab' },
    { k: '2001:db8:1:0:0:0:0:1', v: 'v6 host' },
    { k: '::ffff:192.168.0.0/112', v: 'mapped' },
    { k: 'not a network', v: 'skipped' },
  ]);

  it('picks the longest prefix', () => {
    expect(t.get('10.1.2.3')?.v).toBe('printer');
    expect(t.get('10.1.2.4')?.v).toBe('paris');
    expect(t.get('10.200.0.1')?.v).toBe('corp');
    expect(t.get('8.8.8.8')?.v).toBe('internet');
    expect(t.get('2001:db8:1::1')?.v).toBe('v6 host');
    expect(t.get('2001:db8:1::2')?.v).toBe('v6 lab');
    expect(t.get('2001:DB8:ffff::2')?.v).toBe('v6 doc');
    expect(t.get('2001:db9::1')).toBeUndefined();
    expect(t.size).toBe(8);
  });

  it('looks IPv4-mapped IPv6 up as IPv4, in keys and in values', () => {
    expect(t.get('::ffff:10.1.2.3')?.v).toBe('printer');
    expect(t.get('192.168.4.5')?.v).toBe('mapped');
  });

  it('misses on text that is not an address', () => {
    for (const s of ['', 'x', '10.1.2', '010.1.2.3', '10.1.2.3/32', '256.1.1.1', '10.1.2.3 ', '::g'])
      expect(t.get(s)).toBeUndefined();
  });

  it('answers the same as a linear scan on random networks', () => {
    let seed = 42;
    const rnd = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0), seed);
    const nets = Array.from({ length: 300 }, (_, i) => ({ n: rnd() >>> 0, len: 8 + (rnd() % 25), v: i }));
    const rows = nets.map((x) => ({
      k: `${x.n >>> 24}.${(x.n >>> 16) & 255}.${(x.n >>> 8) & 255}.${x.n & 255}/${x.len}`,
      v: x.v,
    }));
    const lk = build('cidr', rows);
    const mask = (l: number) => (l === 0 ? 0 : (0xffffffff << (32 - l)) >>> 0);
    for (let i = 0; i < 3000; i++) {
      // Addresses near the networks, so that many hit.
      const base = nets[rnd() % nets.length]!.n;
      const a = (base ^ (rnd() & 0xffff)) >>> 0;
      let best: { len: number; v: number } | undefined;
      for (const x of nets) {
        if ((a & mask(x.len)) >>> 0 === (x.n & mask(x.len)) >>> 0 && (!best || x.len >= best.len)) best = x;
      }
      const text = `${a >>> 24}.${(a >>> 16) & 255}.${(a >>> 8) & 255}.${a & 255}`;
      expect(lk.get(text)?.v, text).toBe(best?.v);
    }
  });
});

describe('address parsing', () => {
  it('reads strict dotted quads only', () => {
    expect(parseIPv4('0.0.0.0')).toBe(0);
    expect(parseIPv4('255.255.255.255')).toBe(0xffffffff);
    expect(parseIPv4('1.2.3.4')).toBe(0x01020304);
    for (const s of ['1.2.3', '1.2.3.4.5', '1..2.3', '01.2.3.4', '1.2.3.256', ' 1.2.3.4', '1.2.3.4x'])
      expect(parseIPv4(s), s).toBe(-1);
  });

  it('reads IPv6 as ipaddr.js does', () => {
    const forms = [
      '::',
      '::1',
      '1::',
      '2001:db8::1',
      '2001:DB8:0:0:0:0:0:1',
      '1:2:3:4:5:6:7:8',
      '1::8',
      '1:2:3:4:5:6:7::',
      '::2:3:4:5:6:7:8',
      '::ffff:1.2.3.4',
      '1:2:3:4:5:6:1.2.3.4',
      '64:ff9b::192.0.2.33',
      'fe80::1%eth0',
      'ff02::1:ff00:0',
    ];
    for (const s of forms) expect(parseIPv6(s), s).toEqual(ipaddr.IPv6.parse(s.replace(/%.*/, '')).parts);
    // IPv4-compatible (RFC 4291 2.5.5.1, deprecated), where ipaddr.js reads IPv4-mapped.
    expect(parseIPv6('::1.2.3.4')).toEqual([0, 0, 0, 0, 0, 0, 0x0102, 0x0304]);
    for (const s of [
      '',
      ':',
      '1:2:3:4:5:6:7:8:9',
      '1::2::3',
      '12345::',
      'g::',
      '::1.2.3',
      '1.2.3.4',
      '::ffff:01.2.3.4',
    ])
      expect(parseIPv6(s), s).toBeUndefined();
  });

  it('tells public addresses from reserved ones', () => {
    const reserved = (s: string) => isReserved(parseAddress(s)!);
    for (const s of ['8.8.8.8', '1.1.1.1', '2001:4860:4860::8888', '2a00:1450::1', '2606:4700::1111', '::ffff:8.8.8.8'])
      expect(reserved(s), s).toBe(false);
    for (const s of [
      '10.1.1.1',
      '172.31.0.1',
      '192.168.0.1',
      '127.0.0.1',
      '0.1.2.3',
      '100.64.0.1',
      '239.1.1.1',
      '::',
      '::1',
      'fe80::1',
      'fc00::1',
      'ff02::1',
      '2001::1',
      '2001:db8::1',
      '2002:c000:204::1',
      '3fff::1',
      '64:ff9b::1',
      '::ffff:10.0.0.1',
    ])
      expect(reserved(s), s).toBe(true);
  });

  it('normalizes networks', () => {
    const n = (s: string) => {
      const x = parseNetwork(s);
      return x && networkText(x);
    };
    expect(n('10.1.2.3/8')).toBe('10.0.0.0/8');
    expect(n('10.1.2.3')).toBe('10.1.2.3/32');
    expect(n('2001:DB8:0:0::1/32')).toBe('2001:db8::/32');
    expect(n('::ffff:10.0.0.0/104')).toBe('10.0.0.0/8');
    expect(n('10.0.0.0/08')).toBeUndefined();
    expect(n('fe80::1%eth0')).toBeUndefined();
  });
});

describe('wildcard', () => {
  const t = build('wildcard', [
    { k: '*', v: 'anything' },
    { k: '*.example.com', v: 'example' },
    { k: 'www.example.*', v: 'www' },
    { k: 'WWW.EXAMPLE.COM', v: 'exact' },
    { k: 'host-??.corp', v: 'two' },
    { k: 'host-*.corp', v: 'any' },
    { k: 'a*', v: 'tie first' },
    { k: '*z', v: 'tie second' },
  ]);

  it('prefers an exact key, then the most literal text, then fewer stars', () => {
    expect(t.get('www.example.com')?.v).toBe('exact');
    expect(t.get('www.example.org')?.v).toBe('www');
    expect(t.get('mail.example.com')?.v).toBe('example');
    expect(t.get('host-12.corp')?.v).toBe('two');
    expect(t.get('host-123.corp')?.v).toBe('any');
    expect(t.get('other')?.v).toBe('anything');
  });

  it('is case-insensitive and breaks ties by table order', () => {
    expect(t.get('MAIL.Example.COM')?.v).toBe('example');
    expect(t.get('abz')?.v).toBe('tie first');
    expect(t.get('ABZ')?.v).toBe('tie first'); // remembered and asked again
  });

  it('misses when nothing matches', () => {
    const u = build('wildcard', [{ k: '*.example.com', v: 1 }]);
    expect(u.get('example.com')).toBeUndefined();
    expect(u.get('example.com')).toBeUndefined();
    expect(u.size).toBe(1);
  });

  it('matches globs without exponential backtracking', () => {
    expect(globMatch('a*b?c', 'axxbyc')).toBe(true);
    expect(globMatch('a*b?c', 'axxbc')).toBe(false);
    expect(globMatch('*', '')).toBe(true);
    expect(globMatch('?', '')).toBe(false);
    expect(globMatch('**a**', 'bab')).toBe(true);
    const started = Date.now();
    expect(globMatch('*a*a*a*a*a*a*a*a*b', 'a'.repeat(1000))).toBe(false);
    expect(Date.now() - started).toBeLessThan(1000);
  });
});
