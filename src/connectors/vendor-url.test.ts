import { describe, expect, it } from 'vitest';
import { VendorError } from './sdk.js';
import { configUrl, linkRel, nextLink, under } from './vendor-url.js';

describe('vendor URLs', () => {
  it('reads the rel of RFC 8288 Link headers, quoted or not, among several links', () => {
    const h =
      '<https://x.okta.com/api/v1/logs?limit=2>; rel="self", <https://x.okta.com/api/v1/logs?limit=2&after=a,b>; rel="next"';
    expect(linkRel(h, 'next')).toBe('https://x.okta.com/api/v1/logs?limit=2&after=a,b');
    expect(linkRel(h, 'self')).toBe('https://x.okta.com/api/v1/logs?limit=2');
    expect(linkRel('<https://api.github.com/x?after=Y>; rel=next', 'next')).toBe('https://api.github.com/x?after=Y');
    expect(linkRel('<https://a/>; rel="prev first"', 'first')).toBe('https://a/');
    expect(linkRel(undefined, 'next')).toBeNull();
    expect(linkRel('<https://a/>; rel="prev"', 'next')).toBeNull();
  });

  it('follows a next link only on the configured vendor, under its base path', () => {
    const base = new URL('https://ghe.example.com/api/v3');
    const req = new URL('https://ghe.example.com/api/v3/orgs/o/audit-log');
    expect(nextLink('</api/v3/organizations/1/audit-log?after=X>; rel="next"', req, base)).toBe(
      'https://ghe.example.com/api/v3/organizations/1/audit-log?after=X',
    );
    for (const bad of [
      '<https://evil.example/api/v3/x>; rel="next"',
      '<https://ghe.example.com/other?after=X>; rel="next"',
      '<http://ghe.example.com/api/v3/x>; rel="next"',
    ]) {
      expect(() => nextLink(bad, req, base)).toThrow(VendorError);
    }
    expect(nextLink(undefined, req, base)).toBeNull();
  });

  it('reads base URLs from config and keeps their path', () => {
    expect(configUrl({}, 'base_url', 'https://api.github.com').href).toBe('https://api.github.com/');
    expect(() => configUrl({}, 'base_url')).toThrow(/required/);
    expect(() => configUrl({ base_url: 'not a url' }, 'base_url')).toThrow(/not a URL/);
    expect(() => configUrl({ base_url: 'file:///etc/passwd' }, 'base_url')).toThrow(/http/);
    expect(under(new URL('https://ghe.example.com/api/v3/'), '/orgs/o/audit-log').href).toBe(
      'https://ghe.example.com/api/v3/orgs/o/audit-log',
    );
    expect(under(new URL('https://api.github.com'), '/orgs/o/audit-log').href).toBe(
      'https://api.github.com/orgs/o/audit-log',
    );
  });
});
