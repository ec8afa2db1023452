import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  cacheWorker,
  guarded,
  json,
  loopbackAllowed,
  startTestServer,
  type TestServer,
} from '../../../test/support/enrich-server.js';
import { createHttpCache, httpCache } from './http-cache.js';
import { createHttpFetcher, type HttpFetcherDeps } from './http-fetcher.js';
import type { HttpSource, HttpSourceConfig } from './http-source.js';

const SECRET = 'k3y-0f-the-threat-intel-api';
let server: TestServer;
let active = 0;
let mostActive = 0;
const held: ServerResponse[] = [];

beforeAll(async () => {
  server = await startTestServer((req, res) => {
    const key = decodeURIComponent(req.url.split('/').pop()!.split('?')[0]!);
    if (key.startsWith('slow')) return held.push(res); // answered never (the close cuts it)
    if (key.startsWith('nf')) return json(res, 404, {});
    if (key.startsWith('empty')) return json(res, 200, { data: null });
    if (key.startsWith('err')) return json(res, 500, { echo: req.headers['x-api-key'] });
    active++;
    mostActive = Math.max(mostActive, active);
    setTimeout(
      () => {
        active--;
        json(res, 200, { data: { key, geo: { country: 'NL' }, tags: ['a'] } });
      },
      key.startsWith('wait') ? 150 : 0,
    );
  });
});
afterAll(() => server.close());

let n = 0;
function source(over: Partial<HttpSourceConfig> = {}): HttpSource {
  return {
    id: `src-${++n}`,
    config: {
      url_template: `${server.url}/lookup/{key}`,
      method: 'GET',
      result_path: 'data',
      rate_limit_per_second: 1000,
      ...over,
    },
    credential: { header: 'X-Api-Key', value: SECRET },
  };
}
function calls(key: string): number {
  return server.seen.filter((r) => r.url.endsWith(`/${encodeURIComponent(key)}`)).length;
}
function setup(over: Partial<HttpFetcherDeps> = {}) {
  let t = Date.parse('2026-01-01T00:00:00Z');
  const now = () => t;
  const cache = createHttpCache({ now });
  const logs: unknown[] = [];
  const logger = {
    warn: (...a: unknown[]) => logs.push(a),
    info: (...a: unknown[]) => logs.push(a),
  } as unknown as HttpFetcherDeps['logger'];
  const fetcher = createHttpFetcher({
    lookup: loopbackAllowed.lookup,
    checkAddress: loopbackAllowed.checkAddress,
    now,
    cache,
    logger,
    ...over,
  });
  return { fetcher, cache, logs, advance: (ms: number) => (t += ms) };
}

describe('http fetcher', () => {
  it('fetches a miss once, however often it is wanted, and the answer is then a cache hit', async () => {
    const { fetcher, cache } = setup();
    const s = source();
    expect(cache.get(s.id, 'h1')).toBeUndefined();
    await Promise.all([fetcher.request(s, ['h1', 'h1', 'h2']), fetcher.request(s, ['h1'])]);
    expect(cache.get(s.id, 'h1')).toEqual({ hit: { key: 'h1', 'geo.country': 'NL', tags: '["a"]' } });
    expect(calls('h1')).toBe(1);
    await fetcher.request(s, ['h1']);
    expect(calls('h1')).toBe(1);
    expect(fetcher.stats(s.id)).toMatchObject({
      requests: 2,
      hits: 2,
      errors: 0,
      circuit: 'closed',
      in_flight: 0,
      queued: 0,
    });
    expect(fetcher.stats(s.id)!.latency_ms_p50).toBeGreaterThanOrEqual(0);
    expect(server.seen.find((r) => r.url.endsWith('/h1'))!.headers['x-api-key']).toBe(SECRET);
  });

  it('caches a 404 or empty answer as a miss for negative_ttl_seconds', async () => {
    const { fetcher, cache, advance } = setup();
    const s = source({ negative_ttl_seconds: 60, cache_ttl_seconds: 600 });
    await fetcher.request(s, ['nf-1', 'empty-1']);
    expect(cache.get(s.id, 'nf-1')).toEqual({ miss: true });
    expect(cache.get(s.id, 'empty-1')).toEqual({ miss: true });
    expect(fetcher.stats(s.id)).toMatchObject({ requests: 2, misses: 2, errors: 0 });
    advance(61_000);
    expect(cache.get(s.id, 'nf-1')).toBeUndefined();
    await fetcher.request(s, ['nf-1']);
    expect(calls('nf-1')).toBe(2);
  });

  it('counts 5xx as errors, does not cache them, and opens the circuit after consecutive failures', async () => {
    const { fetcher, cache, advance, logs } = setup({ circuitFailures: 3, circuitCooldownMs: 30_000 });
    const s = source({ concurrency: 1 });
    await fetcher.request(s, ['err-1', 'err-2', 'err-3', 'err-4', 'err-5']);
    const stats = fetcher.stats(s.id)!;
    expect(stats).toMatchObject({ requests: 3, errors: 3, skipped: 2, circuit: 'open', last_error: 'HTTP 500' });
    expect(Date.parse(stats.last_error_at!)).toBeGreaterThan(0);
    expect(cache.get(s.id, 'err-1')).toBeUndefined();
    await fetcher.request(s, ['err-6']);
    expect(calls('err-6')).toBe(0);
    // The credential the server echoed is in no stat and no log line.
    expect(JSON.stringify(fetcher.stats(s.id))).not.toContain(SECRET);
    expect(JSON.stringify(logs)).not.toContain(SECRET);
    expect(logs).toHaveLength(1);
    advance(30_000);
    await fetcher.request(s, ['h-after']);
    expect(cache.get(s.id, 'h-after')).toMatchObject({ hit: { key: 'h-after' } });
    expect(fetcher.stats(s.id)!.circuit).toBe('closed');
  });

  it('gives up on a call at timeout_ms and counts it', async () => {
    const { fetcher, cache } = setup();
    const s = source({ timeout_ms: 200 });
    await fetcher.request(s, ['slow-1']);
    expect(fetcher.stats(s.id)).toMatchObject({
      requests: 1,
      errors: 1,
      last_error: 'no answer within the time limit',
    });
    expect(cache.get(s.id, 'slow-1')).toBeUndefined();
  });

  it('keeps to the concurrency cap', async () => {
    const { fetcher } = setup();
    mostActive = 0;
    const s = source({ concurrency: 2 });
    await fetcher.request(s, ['wait-1', 'wait-2', 'wait-3', 'wait-4', 'wait-5', 'wait-6']);
    expect(fetcher.stats(s.id)).toMatchObject({ requests: 6, hits: 6 });
    expect(mostActive).toBeLessThanOrEqual(2);
  });

  it('keeps to rate_limit_per_second (a burst of one second, then the rate)', async () => {
    const { fetcher } = setup({ now: Date.now, cache: createHttpCache() });
    const s = source({ rate_limit_per_second: 5, concurrency: 4 });
    const keys = Array.from({ length: 12 }, (_, i) => `rate-${i}`);
    const started = performance.now();
    await fetcher.request(s, keys);
    const seconds = (performance.now() - started) / 1000;
    expect(fetcher.stats(s.id)).toMatchObject({ requests: 12, hits: 12 });
    // 5 at once, then 7 more at 5 per second: at least 1.4 s. Only a lower bound is asserted.
    expect(seconds).toBeGreaterThanOrEqual(1.2);
    expect((12 - 5) / seconds).toBeLessThanOrEqual(5 * 1.2);
  });

  it('refuses a loopback address without the allowance, and never calls it', async () => {
    const { fetcher, cache } = setup({ lookup: guarded.lookup, checkAddress: guarded.checkAddress });
    const s = source();
    await fetcher.request(s, ['ssrf-1']);
    expect(calls('ssrf-1')).toBe(0);
    expect(fetcher.stats(s.id)).toMatchObject({ errors: 1 });
    expect(fetcher.stats(s.id)!.last_error).toMatch(/refused to connect to 127\.0\.0\.1: loopback address/);
    expect(cache.get(s.id, 'ssrf-1')).toBeUndefined();
  });

  it('judges a literal address through the lookup when no checkAddress is given', async () => {
    const { fetcher } = setup({ lookup: guarded.lookup, checkAddress: undefined });
    const s = source();
    await fetcher.request(s, ['ssrf-2']);
    expect(calls('ssrf-2')).toBe(0);
    expect(fetcher.stats(s.id)!.last_error).toMatch(/loopback address/);
  });

  it('never throws: an invalid config or unaskable keys resolve without calls', async () => {
    const { fetcher, logs } = setup();
    await expect(
      fetcher.request({ id: 'bad', config: { url_template: 'x', method: 'GET' } }, ['a']),
    ).resolves.toBeUndefined();
    expect(fetcher.stats('bad')).toBeUndefined();
    expect(logs).toHaveLength(1);
    const s = source();
    await fetcher.request(s, ['', '.', '..']);
    expect(fetcher.stats(s.id)).toMatchObject({ requests: 0 });
  });

  it('a new config or credential starts afresh, and forget drops the answers', async () => {
    const { fetcher, cache } = setup();
    const s = source();
    await fetcher.request(s, ['f-1']);
    await fetcher.request({ ...s, credential: { header: 'X-Api-Key', value: 'other' } }, ['f-2']);
    expect(fetcher.stats(s.id)).toMatchObject({ requests: 1 });
    expect(cache.get(s.id, 'f-1')).toBeDefined(); // a rotated credential keeps the answers
    await fetcher.request({ ...s, config: { ...s.config, result_path: 'data.geo' } }, ['f-3']);
    expect(cache.get(s.id, 'f-1')).toBeUndefined(); // another result_path: other rows
    expect(cache.get(s.id, 'f-3')).toEqual({ hit: { country: 'NL' } });
    await fetcher.forget(s.id);
    expect(fetcher.stats(s.id)).toBeUndefined();
    expect(cache.get(s.id, 'f-1')).toBeUndefined();
    await fetcher.close();
  });
});

describe('http fetcher and a worker thread', () => {
  const worker = cacheWorker();
  afterAll(() => worker.close());

  it('an answer fetched on this thread becomes visible in the worker thread, and a held answer is sent again', async () => {
    await worker.ready;
    const fetcher = createHttpFetcher({ lookup: loopbackAllowed.lookup, checkAddress: loopbackAllowed.checkAddress });
    const s = source();
    expect(await worker.ask(s.id, 'w-1')).toBeNull();
    await fetcher.request(s, ['w-1']);
    expect(httpCache().get(s.id, 'w-1')).toMatchObject({ hit: { key: 'w-1' } });
    await expect
      .poll(() => worker.ask(s.id, 'w-1'), { timeout: 10_000 })
      .toMatchObject({ hit: { key: 'w-1', 'geo.country': 'NL' } });

    // A thread started later has no history: wanting the key again sends the held answer, no call.
    const late = cacheWorker();
    try {
      await late.ready;
      expect(await late.ask(s.id, 'w-1')).toBeNull();
      await fetcher.request(s, ['w-1']);
      await expect.poll(() => late.ask(s.id, 'w-1'), { timeout: 10_000 }).toMatchObject({ hit: { key: 'w-1' } });
      expect(calls('w-1')).toBe(1);
    } finally {
      await late.close();
      await fetcher.close();
    }
  });
});
