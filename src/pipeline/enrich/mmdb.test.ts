import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { GEO_COLUMNS } from './geoip.js';
import { flattenRecord, MmdbError, mmdbInfo, openMmdb } from './mmdb.js';

const dir = dirname(createRequire(import.meta.url).resolve('@ip-location-db/geo-whois-asn-country-mmdb/package.json'));
// The shipped country database, as a user would upload it: plain bytes, not a Buffer.
const upload = new Uint8Array(readFileSync(join(dir, 'geo-whois-asn-country.mmdb')));
const v4only = new Uint8Array(readFileSync(join(dir, 'geo-whois-asn-country-ipv4.mmdb')));

describe('openMmdb', () => {
  it('answers an uploaded database with GEO columns', () => {
    const db = openMmdb(upload);
    expect(db.get('8.8.8.8')).toEqual({ country_code: 'US' });
    expect(db.get('1.1.1.1')).toEqual({ country_code: 'AU' });
    expect(db.get('2001:4860:4860::8888')).toEqual({ country_code: 'US' });
    expect(db.get('::ffff:8.8.8.8')).toEqual({ country_code: 'US' });
    expect(db.get('10.0.0.1')).toBeUndefined();
    expect(db.get('not an ip')).toBeUndefined();
    expect(db.size).toBeGreaterThan(100_000);
  });

  it('misses on IPv6 in an IPv4-only database', () => {
    const db = openMmdb(v4only);
    expect(db.get('8.8.8.8')).toEqual({ country_code: 'US' });
    expect(db.get('2001:4860:4860::8888')).toBeUndefined();
  });

  it('tells what the database is', () => {
    expect(mmdbInfo(upload)).toEqual({
      database_type: 'country ipvAll',
      build_epoch: expect.stringMatching(/^20\d\d-/),
      ip_version: 6,
      node_count: expect.any(Number),
    });
  });

  it('refuses what is not a MaxMind DB with an MmdbError', () => {
    const garbage = new TextEncoder().encode('ip,country\n8.8.8.8,US\n'.repeat(100));
    expect(() => openMmdb(garbage)).toThrow(MmdbError);
    expect(() => openMmdb(garbage)).toThrow(/not a MaxMind DB/);
    expect(() => openMmdb(new Uint8Array(0))).toThrow(MmdbError);
    expect(() => mmdbInfo(new Uint8Array(1000))).toThrow(MmdbError);
  });

  it('refuses a truncated or corrupted one', () => {
    // The metadata (at the end) survives; the search tree does not.
    const truncated = new Uint8Array([...upload.subarray(0, 1000), ...upload.subarray(upload.length - 20_000)]);
    expect(() => openMmdb(truncated)).toThrow(MmdbError);
    // Damage the probes do not reach cannot be seen at upload: those lookups miss instead of throwing.
    const scrambled = upload.slice();
    for (let i = 0; i < upload.length - 20_000; i += 7) scrambled[i] = (scrambled[i]! * 31 + 17) & 255;
    let db: ReturnType<typeof openMmdb> | undefined;
    try {
      db = openMmdb(scrambled);
    } catch (e) {
      expect(e).toBeInstanceOf(MmdbError);
    }
    for (let i = 0; db && i < 2000; i++) db.get(`${(i * 7) & 255}.${(i * 13) & 255}.${i & 255}.1`);
  });
});

describe('flattenRecord', () => {
  it('reads a GeoIP2 City record', () => {
    const city = {
      continent: { code: 'EU', names: { en: 'Europe' } },
      country: { iso_code: 'FR', names: { en: 'France', fr: 'France' } },
      subdivisions: [{ iso_code: 'IDF', names: { en: 'Île-de-France' } }],
      city: { names: { en: 'Paris' } },
      postal: { code: '75001' },
      location: { latitude: 48.86, longitude: 2.34, accuracy_radius: 20 },
      traits: { isp: 'Orange' },
    };
    expect(flattenRecord(city)).toEqual({
      country_code: 'FR',
      country: 'France',
      continent_code: 'EU',
      region: 'Île-de-France',
      city: 'Paris',
      postal_code: '75001',
      lat: 48.86,
      long: 2.34,
      isp: 'Orange',
    });
  });

  it('reads GeoLite2 ASN, ip-location-db and ipinfo style records', () => {
    expect(flattenRecord({ autonomous_system_number: 15169, autonomous_system_organization: 'Google LLC' })).toEqual({
      asn: 15169,
      as_org: 'Google LLC',
    });
    expect(
      flattenRecord({
        country_code: 'DE',
        state1: 'Berlin',
        city: 'Berlin',
        postcode: '10115',
        latitude: 52.5,
        longitude: 13.4,
      }),
    ).toEqual({
      country_code: 'DE',
      region: 'Berlin',
      city: 'Berlin',
      postal_code: '10115',
      lat: 52.5,
      long: 13.4,
    });
    expect(flattenRecord({ asn: 'AS13335', as_name: 'Cloudflare, Inc.', country: 'US', continent: 'NA' })).toEqual({
      asn: 13335,
      as_org: 'Cloudflare, Inc.',
      country: 'US',
      continent_code: 'NA',
    });
  });

  it('produces only GEO columns, and nothing for an empty record', () => {
    const row = flattenRecord({
      country: { iso_code: 'US' },
      registered_country: { iso_code: 'US' },
      represented_country: {},
      traits: { is_anycast: true },
    });
    expect(row).toEqual({ country_code: 'US' });
    for (const k of Object.keys(row!)) expect(GEO_COLUMNS).toContain(k);
    expect(flattenRecord({})).toBeUndefined();
    expect(flattenRecord('x')).toBeUndefined();
  });
});
