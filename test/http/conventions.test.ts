import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';
import { fixtureRoutes } from '../support/fixture-routes.js';

let t: TestApp;

beforeAll(async () => {
  t = await createTestApp({
    extraRoutes: [fixtureRoutes],
    captureLogs: true,
    env: { WEIR_BODY_LIMIT_BYTES: '4096', WEIR_JSON_MAX_DEPTH: '8' },
  });
});
afterAll(async () => t?.close());

function expectErrorBody(body: unknown, code: string) {
  const b = body as { detail: unknown; error?: { code: string; message: string; details: unknown } };
  expect(typeof b.detail).toBe('string');
  expect(b.error?.code).toBe(code);
  expect(typeof b.error?.message).toBe('string');
  expect(typeof b.error?.details).toBe('object');
}

describe('trailing slash', () => {
  it('answers 307 from the unslashed form to the declared slashed path, query kept', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/fixtures/things?limit=2' });
    expect(res.statusCode).toBe(307);
    expect(res.headers.location).toBe('/api/fixtures/things/?limit=2');
  });

  it('answers 307 from the slashed form to a path declared without slash', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/fixtures/page-body/' });
    expect(res.statusCode).toBe(307);
    expect(res.headers.location).toBe('/api/fixtures/page-body');
  });

  it('redirects only to a route declared for the same method', async () => {
    const res = await t.app.inject({ method: 'DELETE', url: '/api/fixtures/things' });
    expect(res.statusCode).toBe(404);
    expectErrorBody(res.json(), 'route.not_found');
  });
});

describe('correlation id', () => {
  it('echoes a sent X-Correlation-Id', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/livez', headers: { 'x-correlation-id': 'abc-123' } });
    expect(res.headers['x-correlation-id']).toBe('abc-123');
  });

  it("reuses any printable ASCII value up to 200 characters, an AWS load balancer's trace header among them", async () => {
    const aws = 'Root=1-67891233-abcdef012345678912345678;Parent=53995c3f42cd8ad8;Sampled=1';
    for (const value of [aws, 'a b c', 'x'.repeat(200), '!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~']) {
      const res = await t.app.inject({ method: 'GET', url: '/livez', headers: { 'x-correlation-id': value } });
      expect(res.headers['x-correlation-id']).toBe(value);
    }
  });

  it('generates one when absent or unusable (too long, not printable ASCII, blank)', async () => {
    const a = await t.app.inject({ method: 'GET', url: '/livez' });
    expect(a.headers['x-correlation-id']).toMatch(/^[0-9a-f-]{36}$/);
    for (const value of ['x'.repeat(201), 'caf\u00e9', '   ', 'tab\there']) {
      const res = await t.app.inject({ method: 'GET', url: '/livez', headers: { 'x-correlation-id': value } });
      expect(res.headers['x-correlation-id'], value).toMatch(/^[0-9a-f-]{36}$/);
    }
  });

  it('is on error answers too', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/nope', headers: { 'x-correlation-id': 'err-1' } });
    expect(res.statusCode).toBe(404);
    expect(res.headers['x-correlation-id']).toBe('err-1');
  });

  it('is present in every log line of the request', async () => {
    const before = t.logs.length;
    await t.app.inject({
      method: 'POST',
      url: '/api/fixtures/echo',
      headers: { 'x-correlation-id': 'log-42' },
      payload: { name: 'n' },
    });
    await t.app.inject({ method: 'GET', url: '/api/fixtures/crash', headers: { 'x-correlation-id': 'log-43' } });
    const lines = t.logs.slice(before);
    const handler = lines.find((l) => l.msg === 'echo handler ran');
    expect(handler?.correlation_id).toBe('log-42');
    expect(lines.filter((l) => l.msg === 'request completed').map((l) => l.correlation_id)).toEqual([
      'log-42',
      'log-43',
    ]);
    expect(lines.find((l) => l.msg === 'request failed')?.correlation_id).toBe('log-43');
    expect(lines.every((l) => typeof l.correlation_id === 'string')).toBe(true);
  });

  it('is not logged at info for an answered health probe', async () => {
    const before = t.logs.length;
    const res = await t.app.inject({ method: 'GET', url: '/healthz', headers: { 'x-correlation-id': 'probe-1' } });
    expect(res.statusCode).toBe(200);
    await t.app.inject({ method: 'GET', url: '/api/fixtures/crash', headers: { 'x-correlation-id': 'after-probe' } });
    const completed = t.logs.slice(before).filter((l) => l.msg === 'request completed');
    expect(completed.map((l) => l.correlation_id)).toEqual(['after-probe']);
  });
});

describe('error body', () => {
  it('maps typed errors from the catalog', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/api/fixtures/conflict' });
    expect(res.statusCode).toBe(409);
    expect(res.json()).toEqual({
      detail: 'Already exists',
      error: { code: 'resource.conflict', message: 'Already exists', details: { name: 'x' } },
    });
  });

  it('hides unexpected faults behind a 500 with a string detail', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/fixtures/crash' });
    expect(res.statusCode).toBe(500);
    expectErrorBody(res.json(), 'internal.error');
    expect(res.body).not.toContain('secret internal detail');
  });

  it('answers 405 with Allow for a known path under another method', async () => {
    const res = await t.app.inject({ method: 'PUT', url: '/api/fixtures/echo', payload: {} });
    expect(res.statusCode).toBe(405);
    expect(res.headers.allow).toBe('POST');
    expectErrorBody(res.json(), 'route.method_not_allowed');
  });

  it('answers 422 naming the field for a body that does not match the schema', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/api/fixtures/echo', payload: { name: 5 } });
    expect(res.statusCode).toBe(422);
    expectErrorBody(res.json(), 'request.validation_failed');
    expect(res.json().detail).toContain('body/name');
    const missing = await t.app.inject({ method: 'POST', url: '/api/fixtures/echo', payload: {} });
    expect(missing.statusCode).toBe(422);
    expect(missing.json().detail).toContain('body/name');
  });

  it('refuses a non-public route without credentials with 401', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/fixtures/private' });
    expect(res.statusCode).toBe(401);
    expectErrorBody(res.json(), 'auth.unauthenticated');
  });
});

describe('strict query parameters', () => {
  it('answers 422 naming an unknown parameter', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/fixtures/things/?limt=5' });
    expect(res.statusCode).toBe(422);
    expectErrorBody(res.json(), 'request.unknown_parameter');
    expect(res.json().detail).toContain("'limt'");
    expect(res.json().error.details.parameter).toBe('limt');
  });

  it('refuses parameters on a route that declares none', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/livez?verbose=1' });
    expect(res.statusCode).toBe(422);
    expect(res.json().detail).toContain("'verbose'");
  });

  it('accepts org_id and organization_id as aliases', async () => {
    const a = await t.app.inject({ method: 'GET', url: '/api/fixtures/things/?org_id=7' });
    expect(a.statusCode).toBe(200);
    expect(a.json().organization_id).toBe(7);
    const b = await t.app.inject({ method: 'GET', url: '/api/fixtures/page-body?organization_id=3' });
    expect(b.statusCode).toBe(200);
  });

  it('refuses the two aliases with different values', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/fixtures/things/?org_id=7&organization_id=8' });
    expect(res.statusCode).toBe(422);
    expectErrorBody(res.json(), 'request.conflicting_parameters');
  });

  it('validates types of declared parameters', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/fixtures/things/?limit=abc' });
    expect(res.statusCode).toBe(422);
    expect(res.json().detail).toContain('querystring/limit');
  });
});

describe('dates', () => {
  it('honours offsets and answers in UTC with Z', async () => {
    const res = await t.app.inject({
      method: 'GET',
      url: `/api/fixtures/things/?since=${encodeURIComponent('2026-01-01T02:00:03+02:00')}`,
    });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.since).toBe('2026-01-01T00:00:03.000Z');
    expect(body.total).toBe(4);
    expect(body.items[0].at).toBe('2026-01-01T00:00:03.000Z');
  });

  it('reads a value without zone as UTC', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/fixtures/things/?since=2026-01-01T00:00:05' });
    expect(res.json().since).toBe('2026-01-01T00:00:05.000Z');
  });

  it('answers 422 for an unparseable date instead of dropping the filter', async () => {
    for (const bad of ['yesterday', '2026-13-01T00:00:00Z', '2026-02-30', '2026-01-01T25:00:00Z']) {
      const res = await t.app.inject({ method: 'GET', url: `/api/fixtures/things/?since=${encodeURIComponent(bad)}` });
      expect(res.statusCode, bad).toBe(422);
      expectErrorBody(res.json(), 'request.invalid_date');
      expect(res.json().detail).toContain("'since'");
    }
  });
});

describe('pagination shapes', () => {
  it('limit/offset envelope echoes limit and offset with the total', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/fixtures/things/?limit=3&offset=5' });
    expect(res.json()).toMatchObject({ total: 7, limit: 3, offset: 5 });
    expect(res.json().items.map((i: { n: number }) => i.n)).toEqual([5, 6]);
    const dflt = await t.app.inject({ method: 'GET', url: '/api/fixtures/things/' });
    expect(dflt.json()).toMatchObject({ total: 7, limit: 50, offset: 0 });
  });

  it('limit beyond the maximum is refused, not silently capped', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/fixtures/things/?limit=100000' });
    expect(res.statusCode).toBe(422);
  });

  it('page/size with X-Total-Count, X-Page and X-Size headers', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/fixtures/pages/?page=2&size=3' });
    expect(res.headers['x-total-count']).toBe('7');
    expect(res.headers['x-page']).toBe('2');
    expect(res.headers['x-size']).toBe('3');
    expect(res.json().map((i: { n: number }) => i.n)).toEqual([3, 4, 5]);
  });

  it('page/size with the count in the body', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/fixtures/page-body?page=3&size=3' });
    expect(res.json()).toMatchObject({ total: 7, page: 3, size: 3 });
    expect(res.json().items).toHaveLength(1);
  });
});

describe('request bodies', () => {
  it('answers 400 with a string detail for malformed JSON', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/fixtures/echo',
      headers: { 'content-type': 'application/json' },
      payload: '{"name": "a",',
    });
    expect(res.statusCode).toBe(400);
    expectErrorBody(res.json(), 'request.malformed_json');
  });

  it('answers 400 for JSON nested beyond the limit', async () => {
    const deep = `{"name":"a","payload":${'['.repeat(20)}${']'.repeat(20)}}`;
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/fixtures/echo',
      headers: { 'content-type': 'application/json' },
      payload: deep,
    });
    expect(res.statusCode).toBe(400);
    expectErrorBody(res.json(), 'request.json_too_deep');
    const ok = `{"name":"a","payload":${'['.repeat(5)}${']'.repeat(5)}}`;
    expect(
      (
        await t.app.inject({
          method: 'POST',
          url: '/api/fixtures/echo',
          headers: { 'content-type': 'application/json' },
          payload: ok,
        })
      ).statusCode,
    ).toBe(200);
  });

  it('counts brackets inside strings as text, not nesting', async () => {
    const payload = JSON.stringify({ name: 'a', payload: '[[[[[[[[[[[[[[[[[[[[' });
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/fixtures/echo',
      headers: { 'content-type': 'application/json' },
      payload,
    });
    expect(res.statusCode).toBe(200);
  });

  it('answers 413 for a body over the limit', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/fixtures/echo',
      payload: { name: 'a', payload: 'x'.repeat(10_000) },
    });
    expect(res.statusCode).toBe(413);
    expectErrorBody(res.json(), 'request.body_too_large');
  });

  it('refuses prototype poisoning with 400', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/fixtures/echo',
      headers: { 'content-type': 'application/json' },
      payload: '{"name":"a","__proto__":{"x":1}}',
    });
    expect(res.statusCode).toBe(400);
    expectErrorBody(res.json(), 'request.malformed_json');
  });

  it('answers 415 for an unsupported content type, never 5xx', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/fixtures/echo',
      headers: { 'content-type': 'application/xml' },
      payload: '<a/>',
    });
    expect(res.statusCode).toBe(415);
    expectErrorBody(res.json(), 'request.unsupported_media_type');
  });

  it('treats an empty JSON body as absent (schema decides)', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/fixtures/conflict',
      headers: { 'content-type': 'application/json' },
      payload: '',
    });
    expect(res.statusCode).toBe(409);
    const echo = await t.app.inject({
      method: 'POST',
      url: '/api/fixtures/echo',
      headers: { 'content-type': 'application/json' },
      payload: '',
    });
    expect(echo.statusCode).toBe(422);
  });

  it('does not mistake a gzip body for JSON', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/fixtures/echo',
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
      payload: gzipSync(Buffer.from('{"name":"z"}')),
    });
    expect(res.statusCode).toBeGreaterThanOrEqual(400);
    expect(res.statusCode).toBeLessThan(500);
  });
});

describe('CORS', () => {
  it('allows local development origins and exposes the custom headers', async () => {
    const pre = await t.app.inject({
      method: 'OPTIONS',
      url: '/api/fixtures/things/',
      headers: { origin: 'http://localhost:5173', 'access-control-request-method': 'GET' },
    });
    expect(pre.statusCode).toBe(204);
    expect(pre.headers['access-control-allow-origin']).toBe('http://localhost:5173');
    const res = await t.app.inject({
      method: 'GET',
      url: '/api/fixtures/pages/',
      headers: { origin: 'http://127.0.0.1:3000' },
    });
    expect(res.headers['access-control-allow-origin']).toBe('http://127.0.0.1:3000');
    const exposed = String(res.headers['access-control-expose-headers']).toLowerCase();
    for (const h of [
      'x-total-count',
      'x-page',
      'x-size',
      'x-correlation-id',
      'retry-after',
      'ratelimit-limit',
      'ratelimit-remaining',
      'ratelimit-reset',
      'ratelimit-policy',
    ])
      expect(exposed).toContain(h);
  });

  it('does not allow other origins by default', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/livez', headers: { origin: 'https://evil.example' } });
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
    const lookalike = await t.app.inject({
      method: 'GET',
      url: '/livez',
      headers: { origin: 'http://localhost.evil.example' },
    });
    expect(lookalike.headers['access-control-allow-origin']).toBeUndefined();
  });
});
