import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  guarded,
  json,
  loopbackAllowed,
  startTestServer,
  type TestServer,
} from '../../../test/support/enrich-server.js';
import {
  buildCall,
  flattenRow,
  resolveHttpSourceConfig,
  resultRow,
  testHttpSource,
  validateHttpSourceConfig,
  type HttpSourceConfig,
} from './http-source.js';

const base: HttpSourceConfig = { url_template: 'https://api.example.com/v1/ip/{key}?full=1', method: 'GET' };
const at = (config: unknown) => validateHttpSourceConfig(config).map((i) => i.at);

describe('validateHttpSourceConfig', () => {
  it('accepts a minimal GET and a POST with a body template', () => {
    expect(validateHttpSourceConfig(base)).toEqual([]);
    expect(
      validateHttpSourceConfig({
        ...base,
        method: 'POST',
        body_template: '{"q":"{key}"}',
        headers: { 'X-Tenant': 'acme' },
        result_path: 'data.0',
        timeout_ms: 30_000,
      }),
    ).toEqual([]);
  });

  it('refuses what cannot work, naming the field', () => {
    expect(validateHttpSourceConfig(null)).toEqual([{ at: '', message: 'must be an object' }]);
    expect(at({ ...base, url_template: 'https://api.example.com/v1/ip' })).toEqual(['url_template']);
    expect(at({ ...base, url_template: 'ftp://api.example.com/{key}' })).toEqual(['url_template']);
    expect(at({ ...base, url_template: 'https://{key}.example.com/' })).toEqual(['url_template']);
    expect(at({ ...base, url_template: 'https://user:pw@api.example.com/{key}' })).toEqual(['url_template']);
    expect(at({ ...base, method: 'PUT' })).toEqual(['method']);
    expect(at({ ...base, body_template: '{key}' })).toEqual(['body_template']);
    expect(at({ ...base, timeout_ms: 30_001 })).toEqual(['timeout_ms']);
    expect(at({ ...base, concurrency: 0, rate_limit_per_second: 1.5 })).toEqual([
      'rate_limit_per_second',
      'concurrency',
    ]);
    expect(at({ ...base, result_path: 'a..b' })).toEqual(['result_path']);
    expect(at({ ...base, headers: { host: 'x' } })).toEqual(['headers']);
  });

  it('sends secret headers to the credential', () => {
    expect(validateHttpSourceConfig({ ...base, headers: { Authorization: 'Bearer x' } })).toEqual([
      { at: 'headers.authorization', message: 'carries a secret: put it in the credential instead' },
    ]);
  });

  it('fills the defaults', () => {
    expect(resolveHttpSourceConfig(base)).toMatchObject({
      timeout_ms: 2000,
      rate_limit_per_second: 10,
      cache_ttl_seconds: 3600,
      negative_ttl_seconds: 300,
      max_cache_entries: 100_000,
      concurrency: 4,
      headers: {},
    });
  });
});

describe('buildCall', () => {
  it('URL-encodes the key in the path and JSON-escapes it in the body', () => {
    expect(buildCall(base, 'a b/../c?d').path).toBe('/v1/ip/a%20b%2F..%2Fc%3Fd?full=1');
    expect(buildCall({ ...base, url_template: 'https://API.Example.com:443/v1/{key}' }, 'k').path).toBe('/v1/k');
    expect(buildCall({ ...base, url_template: 'https://api.example.com?ip={key}' }, '1.2.3.4').path).toBe(
      '/?ip=1.2.3.4',
    );
    const post = buildCall({ ...base, method: 'POST', body_template: '{"q":"{key}"}' }, 'x"y\\z');
    expect(JSON.parse(post.body!)).toEqual({ q: 'x"y\\z' });
  });
});

describe('resultRow', () => {
  it('flattens nested objects to dotted keys and arrays to JSON text', () => {
    expect(
      flattenRow({
        geo: { country: 'NL', city: { name: 'Delft' } },
        tags: ['tor', 'a,b'],
        score: 7,
        ok: true,
        none: null,
      }),
    ).toEqual({
      'geo.country': 'NL',
      'geo.city.name': 'Delft',
      tags: '["tor","a,b"]',
      score: 7,
      ok: true,
      none: null,
    });
  });

  it('takes result_path, the first element of a list, and says nothing for empty answers', () => {
    expect(resultRow({ data: { attributes: { rep: -3 } } }, 'data.attributes')).toEqual({ rep: -3 });
    expect(resultRow({ results: [{ a: 1 }, { a: 2 }] }, 'results')).toEqual({ a: 1 });
    expect(resultRow({ results: [{ a: 1 }, { a: 2 }] }, 'results.1')).toEqual({ a: 2 });
    expect(resultRow({ verdict: 'bad' }, 'verdict')).toEqual({ value: 'bad' });
    for (const empty of [null, {}, []]) expect(resultRow(empty)).toBeNull();
    expect(resultRow({ data: {} }, 'missing.path')).toBeNull();
  });
});

describe('testHttpSource', () => {
  let server: TestServer;
  const secret = 'Bearer s3cr3t-t0ken-value';
  beforeAll(async () => {
    server = await startTestServer((req, res) => {
      if (req.url.startsWith('/ip/404')) return json(res, 404, { error: 'not found' });
      if (req.url.startsWith('/ip/500')) return json(res, 500, { echo: req.headers.authorization });
      json(res, 200, { data: { ip: decodeURIComponent(req.url.slice(4)), geo: { country: 'NL' } } });
    });
  });
  afterAll(() => server.close());
  const source = () => ({
    id: 's1',
    config: { url_template: `${server.url}/ip/{key}`, method: 'GET' as const, result_path: 'data' },
    credential: { header: 'Authorization', value: secret },
  });

  it('makes one real call and returns the flattened result, sending the credential', async () => {
    const r = await testHttpSource(source(), '198.51.100.7', loopbackAllowed);
    expect(r).toMatchObject({ ok: true, status: 200, result: { ip: '198.51.100.7', 'geo.country': 'NL' } });
    expect(r.latency_ms).toBeGreaterThanOrEqual(0);
    expect(server.seen.at(-1)!.headers.authorization).toBe(secret);
    expect(server.seen.at(-1)!.headers['user-agent']).toBe('Weir-Enrichment/1');
  });

  it('a 404 is an answer (ok, no result); a 500 is an error that never quotes the answer', async () => {
    expect(await testHttpSource(source(), '404', loopbackAllowed)).toMatchObject({ ok: true, status: 404 });
    const r = await testHttpSource(source(), '500', loopbackAllowed);
    expect(r).toMatchObject({ ok: false, status: 500, error: 'HTTP 500' });
    expect(JSON.stringify(r)).not.toContain('s3cr3t');
  });

  it('refuses a loopback address without the allowance, before any request', async () => {
    const before = server.seen.length;
    const r = await testHttpSource(source(), '1.2.3.4', guarded);
    expect(r.ok).toBe(false);
    expect(r.error).toMatch(/refused to connect to 127\.0\.0\.1: loopback address/);
    expect(server.seen.length).toBe(before);
  });

  it('refuses a name that resolves to loopback through the lookup', async () => {
    const r = await testHttpSource(
      {
        ...source(),
        config: { ...source().config, url_template: `${server.url.replace('127.0.0.1', 'localhost')}/ip/{key}` },
      },
      '1.2.3.4',
      guarded,
    );
    expect(r).toMatchObject({ ok: false });
    expect(r.error).toMatch(/loopback address/);
  });

  it('reports an invalid config without calling', async () => {
    const r = await testHttpSource({ id: 's', config: { url_template: 'nope', method: 'GET' } }, 'k', loopbackAllowed);
    expect(r).toMatchObject({ ok: false, latency_ms: 0 });
    expect(r.error).toMatch(/url_template/);
  });
});
