import { describe, expect, it } from 'vitest';
import { defaultGeoip, findV4, GEO_COLUMNS, GEOIP_ATTRIBUTION, geoipVersion, loadAsnRanges } from './geoip.js';
import { parseIPv4 } from './ip.js';

// Facts of the shipped data (ip-location-db 2.3.2026061719) that are stable across its updates.
describe('defaultGeoip', () => {
  const geo = defaultGeoip();

  it('is one instance per thread', () => {
    expect(defaultGeoip()).toBe(geo);
    expect(geo.size).toBeGreaterThan(400_000);
  });

  it('answers country, AS number and organization of public addresses', () => {
    expect(geo.get('8.8.8.8')).toEqual({ country_code: 'US', asn: 15169, as_org: 'Google LLC' });
    expect(geo.get('1.1.1.1')).toEqual({ country_code: 'AU', asn: 13335, as_org: 'Cloudflare, Inc.' });
    expect(geo.get('2001:4860:4860::8888')).toEqual({ country_code: 'US', asn: 15169, as_org: 'Google LLC' });
    expect(geo.get('2606:4700:4700::1111')).toMatchObject({ asn: 13335 });
    expect(geo.get('193.0.6.139')).toMatchObject({ country_code: 'NL', asn: 3333 });
  });

  it('looks IPv4-mapped IPv6 up as IPv4 and remembers answers', () => {
    expect(geo.get('::ffff:8.8.8.8')).toEqual(geo.get('8.8.8.8'));
    expect(geo.get('8.8.8.8')).toBe(geo.get('8.8.8.8'));
  });

  it('misses on private, reserved and invalid addresses', () => {
    for (const ip of [
      '10.0.0.1',
      '192.168.1.1',
      '172.16.0.1',
      '127.0.0.1',
      '100.64.0.1',
      '169.254.1.1',
      '192.0.2.1',
      '224.0.0.1',
      '255.255.255.255',
      '::1',
      'fe80::1',
      'fd00::1',
      '2001:db8::1',
      '::',
      'x',
      '',
      '8.8.8',
      '8.8.8.8.8',
      '08.8.8.8',
    ]) {
      expect(geo.get(ip), ip).toBeUndefined();
    }
  });

  it('only produces GEO columns', () => {
    for (const k of Object.keys(geo.get('8.8.8.8')!)) expect(GEO_COLUMNS).toContain(k);
  });
});

describe('AS ranges', () => {
  it('are sorted and found by binary search, with quoted org names unquoted', () => {
    const r = loadAsnRanges();
    let unsorted = 0;
    for (let i = 1; i < r.v4Start.length; i++) if (r.v4Start[i]! <= r.v4Start[i - 1]!) unsorted++;
    expect(unsorted).toBe(0);
    expect(r.v4Start[0]).toBe(parseIPv4('1.0.0.0'));
    expect(findV4(r, 0)).toBe(-1);
    expect(r.v4Asn[findV4(r, parseIPv4('1.0.0.0'))]).toBe(13335);
    expect(r.orgs.some((o) => o.includes('"') && !o.startsWith('"'))).toBe(true);
    expect(r.orgs.length).toBeLessThan(r.v4Asn.length / 2);
  });
});

describe('attribution and version', () => {
  it('names the licensors the CC BY 4.0 data asks for', () => {
    for (const s of ['NRO', 'nro.net', 'routeviews.org', 'DB-IP', 'CC BY 4.0']) expect(GEOIP_ATTRIBUTION).toContain(s);
  });

  it('reports the package versions', () => {
    expect(geoipVersion()).toEqual({
      country: {
        package: '@ip-location-db/geo-whois-asn-country-mmdb',
        version: expect.stringMatching(/^\d+\.\d+\.\d+$/),
      },
      asn: { package: '@ip-location-db/asn', version: expect.stringMatching(/^\d+\.\d+\.\d+$/) },
    });
  });
});
