// The cache contract: one suite, run against the memory adapter and (with REDIS_URL) Redis.
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deletePrefix, redisUrl, uniquePrefix } from '../../../test/support/redis.js';
import { InvalidDurationError } from '../duration.js';
import { CacheValueError, createCache, type CachePort } from './index.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface CacheFixture {
  title: string;
  enabled: boolean;
  prefix: string;
  redisUrl: string | undefined;
}

const prefix = uniquePrefix();
const fixtures: CacheFixture[] = [
  { title: 'memory', enabled: true, prefix, redisUrl: undefined },
  { title: redisUrl ? 'redis' : 'redis (skipped: set REDIS_URL to run)', enabled: Boolean(redisUrl), prefix, redisUrl },
];

describe.each(fixtures)('cache contract: $title', (fx) => {
  if (!fx.enabled) {
    it.skip('needs REDIS_URL', () => {});
    return;
  }
  let cache: CachePort;
  beforeAll(() => {
    cache = createCache({ redisUrl: fx.redisUrl, redisPrefix: fx.prefix });
  });
  afterAll(async () => {
    await cache.close();
    await deletePrefix(fx.prefix);
  });

  it('gets what was set, and nothing after del', async () => {
    expect(await cache.get('missing')).toBeUndefined();
    await cache.set('k1', 'v1');
    expect(await cache.get('k1')).toBe('v1');
    await cache.set('k1', 'v2');
    expect(await cache.get('k1')).toBe('v2');
    await cache.del('k1');
    expect(await cache.get('k1')).toBeUndefined();
    await cache.del('never-set');
  });

  it('round-trips JSON values, as JSON', async () => {
    const value = {
      s: 'x',
      n: 1.5,
      b: false,
      nil: null,
      list: [1, 'two', { three: 3 }],
      nested: { deep: { er: true } },
    };
    await cache.set('json', value);
    expect(await cache.get('json')).toEqual(value);
    for (const scalar of [0, '', true, null, [1, 2]]) {
      await cache.set('scalar', scalar);
      expect(await cache.get('scalar')).toEqual(scalar);
    }
    await cache.set('date', { at: new Date('2026-01-02T03:04:05Z'), gone: undefined });
    expect(await cache.get('date')).toEqual({ at: '2026-01-02T03:04:05.000Z' });
  });

  it('keeps what was set, not later mutations of it', async () => {
    const value = { list: [1] };
    await cache.set('copy', value);
    value.list.push(2);
    const read = await cache.get<{ list: number[] }>('copy');
    read?.list.push(3);
    expect(await cache.get('copy')).toEqual({ list: [1] });
  });

  it('refuses values that are not JSON and durations that are not positive', async () => {
    await expect(cache.set('bad', undefined)).rejects.toBeInstanceOf(CacheValueError);
    await expect(cache.set('bad', () => 1)).rejects.toBeInstanceOf(CacheValueError);
    for (const ttl of [0, -5, Number.NaN]) {
      await expect(cache.set('bad', 1, ttl)).rejects.toBeInstanceOf(InvalidDurationError);
    }
    expect(await cache.ttl('bad')).toBe(-2);
  });

  it('expires entries after their ttl', async () => {
    await cache.set('short', { v: 1 }, 150);
    expect(await cache.get('short')).toEqual({ v: 1 });
    await sleep(250);
    expect(await cache.get('short')).toBeUndefined();
    expect(await cache.ttl('short')).toBe(-2);
  });

  it('reports ttl like PTTL: remaining ms, -1 without expiry, -2 when absent', async () => {
    await cache.set('timed', 1, 10_000);
    const left = await cache.ttl('timed');
    expect(left).toBeGreaterThan(9_000);
    expect(left).toBeLessThanOrEqual(10_000);
    await cache.set('forever', 1);
    expect(await cache.ttl('forever')).toBe(-1);
    expect(await cache.ttl('nope')).toBe(-2);
    // A set without ttl replaces the expiry too (as Redis SET does).
    await cache.set('timed', 2);
    expect(await cache.ttl('timed')).toBe(-1);
  });

  it('answers ping', async () => {
    await expect(cache.ping()).resolves.toBeUndefined();
  });

  if (fx.redisUrl) {
    it('keeps its keys under `${prefix}:cache:`', async () => {
      await cache.set('where', 1);
      const raw = new Redis(fx.redisUrl ?? '');
      try {
        expect(await raw.get(`${fx.prefix}:cache:where`)).toBe('1');
      } finally {
        raw.disconnect();
      }
    });
  }
});
