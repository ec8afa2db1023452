// The lock contract: one suite, run against the memory adapter and (with REDIS_URL) Redis.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deletePrefix, redisUrl, uniquePrefix } from '../../../test/support/redis.js';
import { InvalidDurationError } from '../duration.js';
import { createLock, type LockPort } from './index.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const prefix = uniquePrefix();
const fixtures = [
  { title: 'memory', enabled: true, redisUrl: undefined },
  { title: redisUrl ? 'redis' : 'redis (skipped: set REDIS_URL to run)', enabled: Boolean(redisUrl), redisUrl },
];

describe.each(fixtures)('lock contract: $title', (fx) => {
  if (!fx.enabled) {
    it.skip('needs REDIS_URL', () => {});
    return;
  }
  let lock: LockPort;
  let n = 0;
  const key = () => `k${++n}`;
  beforeAll(() => {
    lock = createLock({ redisUrl: fx.redisUrl, redisPrefix: prefix });
  });
  afterAll(async () => {
    await lock.close();
    await deletePrefix(prefix);
  });

  it('acquires a free lock, and refuses it to others while held', async () => {
    const k = key();
    const lease = await lock.acquire(k, 5000);
    expect(lease?.key).toBe(k);
    expect(await lock.acquire(k, 5000)).toBeNull();
    // Keys are independent.
    expect(await lock.acquire(key(), 5000)).not.toBeNull();
  });

  it('renew extends the lease past its first expiry', async () => {
    const k = key();
    const lease = await lock.acquire(k, 200);
    await sleep(120);
    expect(await lease?.renew(400)).toBe(true);
    await sleep(200);
    expect(await lock.acquire(k, 1000)).toBeNull();
    // Without an argument, renew uses the acquire ttl.
    expect(await lease?.renew()).toBe(true);
  });

  it('release lets the next caller acquire', async () => {
    const k = key();
    const lease = await lock.acquire(k, 5000);
    await lease?.release();
    const next = await lock.acquire(k, 5000);
    expect(next).not.toBeNull();
    // Releasing twice is a no-op, and does not free the new holder's lease.
    await lease?.release();
    expect(await lock.acquire(k, 5000)).toBeNull();
  });

  it('expiry frees the lock, and the expired lease cannot be renewed', async () => {
    const k = key();
    const lease = await lock.acquire(k, 100);
    await sleep(180);
    expect(await lease?.renew()).toBe(false);
    expect(await lock.acquire(k, 5000)).not.toBeNull();
  });

  it('a holder whose lease expired cannot release or renew the new holder’s lease', async () => {
    const k = key();
    const stale = await lock.acquire(k, 100);
    await sleep(180);
    const current = await lock.acquire(k, 5000);
    expect(current).not.toBeNull();
    await stale?.release();
    expect(await stale?.renew(5000)).toBe(false);
    expect(await lock.acquire(k, 5000)).toBeNull();
    expect(await current?.renew()).toBe(true);
    await current?.release();
    expect(await lock.acquire(k, 5000)).not.toBeNull();
  });

  it('refuses durations that are not positive', async () => {
    for (const ttl of [0, -1, Number.NaN, Number.POSITIVE_INFINITY]) {
      await expect(lock.acquire(key(), ttl)).rejects.toBeInstanceOf(InvalidDurationError);
    }
    const lease = await lock.acquire(key(), 1000);
    await expect(lease?.renew(0) ?? Promise.resolve()).rejects.toBeInstanceOf(InvalidDurationError);
  });
});
