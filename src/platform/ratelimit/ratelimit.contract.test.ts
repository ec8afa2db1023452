// The rate-limit contract: one suite, memory and (with REDIS_URL) Redis.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deletePrefix, redisUrl, uniquePrefix } from '../../../test/support/redis.js';
import { createRateLimiter, type RateLimiterPort } from './index.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const prefix = uniquePrefix();
const fixtures = [
  { title: 'memory', enabled: true, redisUrl: undefined },
  { title: redisUrl ? 'redis' : 'redis (skipped: set REDIS_URL to run)', enabled: Boolean(redisUrl), redisUrl },
];

describe.each(fixtures)('rate limit contract: $title', (fx) => {
  if (!fx.enabled) {
    it.skip('needs REDIS_URL', () => {});
    return;
  }
  let rl: RateLimiterPort;
  let n = 0;
  const key = () => `k${++n}`;
  beforeAll(() => {
    rl = createRateLimiter({ redisUrl: fx.redisUrl, redisPrefix: prefix });
  });
  afterAll(async () => {
    await rl.close();
    await deletePrefix(prefix);
  });

  it('allows `limit` hits in the window, then refuses with the time to wait', async () => {
    const k = key();
    const decisions = [];
    for (let i = 0; i < 4; i++) decisions.push(await rl.hit(k, 3, 10_000));
    expect(decisions.map((d) => d.allowed)).toEqual([true, true, true, false]);
    expect(decisions.map((d) => d.remaining)).toEqual([2, 1, 0, 0]);
    expect(decisions[3]?.retryAfterMs).toBeGreaterThan(9_000);
    expect(decisions[3]?.retryAfterMs).toBeLessThanOrEqual(10_000);
  });

  it('states the limit, its window and when the oldest counted hit leaves it (RateLimit-* fields)', async () => {
    const k = key();
    const first = await rl.hit(k, 2, 10_000);
    expect(first).toMatchObject({ allowed: true, limit: 2, windowMs: 10_000, remaining: 1 });
    expect(first.resetMs).toBeGreaterThan(9_000);
    expect(first.resetMs).toBeLessThanOrEqual(10_000);
    await sleep(50);
    const second = await rl.hit(k, 2, 10_000);
    // Still the first hit's departure: it frees the next request, not the second's.
    expect(second.resetMs).toBeLessThanOrEqual(first.resetMs - 40);
    const refused = await rl.hit(k, 2, 10_000);
    expect(refused).toMatchObject({ allowed: false, limit: 2, windowMs: 10_000, remaining: 0 });
    expect(refused.resetMs).toBe(refused.retryAfterMs);
  });

  it('slides: a hit leaves the window after windowMs, refused hits do not count', async () => {
    const k = key();
    expect((await rl.hit(k, 2, 300)).allowed).toBe(true);
    await sleep(150);
    expect((await rl.hit(k, 2, 300)).allowed).toBe(true);
    expect((await rl.hit(k, 2, 300)).allowed).toBe(false);
    await sleep(200); // the first hit has left the window, the second has not
    expect((await rl.hit(k, 2, 300)).allowed).toBe(true);
    expect((await rl.hit(k, 2, 300)).allowed).toBe(false);
  });

  it('keeps keys apart and forgets a key on reset', async () => {
    const a = key();
    const b = key();
    expect((await rl.hit(a, 1, 10_000)).allowed).toBe(true);
    expect((await rl.hit(a, 1, 10_000)).allowed).toBe(false);
    expect((await rl.hit(b, 1, 10_000)).allowed).toBe(true);
    await rl.reset(a);
    expect((await rl.hit(a, 1, 10_000)).allowed).toBe(true);
  });
});
