import { BroadcastChannel } from 'node:worker_threads';
import { afterAll, describe, expect, it } from 'vitest';
import { cacheWorker } from '../../../test/support/enrich-server.js';
import { createHttpCache, httpCache, HTTP_ANSWER_CHANNEL, MAX_WANTED_PER_SOURCE } from './http-cache.js';

describe('http answer cache', () => {
  it('answers hits, remembered misses and unknown keys, and forgets expired answers', () => {
    let t = 1_000;
    const cache = createHttpCache({ now: () => t });
    cache.set({ sourceId: 's', key: 'a', row: { score: 9 }, expiresAt: 2_000 });
    cache.set({ sourceId: 's', key: 'b', row: null, expiresAt: 1_500 });
    expect(cache.get('s', 'a')).toEqual({ hit: { score: 9 } });
    expect(cache.get('s', 'b')).toEqual({ miss: true });
    expect(cache.get('s', 'c')).toBeUndefined();
    expect(cache.get('other', 'a')).toBeUndefined();
    t = 1_500;
    expect(cache.get('s', 'b')).toBeUndefined();
    expect(cache.get('s', 'a')).toEqual({ hit: { score: 9 } });
    t = 2_000;
    expect(cache.get('s', 'a')).toBeUndefined();
    expect(cache.size('s')).toBe(0);
  });

  it('evicts the oldest answer past the source bound', () => {
    const cache = createHttpCache({ now: () => 0 });
    for (const key of ['a', 'b', 'c']) cache.set({ sourceId: 's', key, row: { key }, expiresAt: 10, maxEntries: 3 });
    cache.set({ sourceId: 's', key: 'a', row: { key: 'a2' }, expiresAt: 10, maxEntries: 3 }); // refreshed: now the newest
    cache.set({ sourceId: 's', key: 'd', row: { key: 'd' }, expiresAt: 10, maxEntries: 3 });
    expect(cache.get('s', 'b')).toBeUndefined();
    expect(cache.get('s', 'a')).toEqual({ hit: { key: 'a2' } });
    expect(cache.get('s', 'c')).toBeDefined();
    expect(cache.get('s', 'd')).toBeDefined();
    expect(cache.size('s')).toBe(3);
  });

  it('records wanted keys once per pass, bounded, and drops those answered meanwhile', () => {
    const cache = createHttpCache({ now: () => 0 });
    cache.want('s', 'a');
    cache.want('s', 'a');
    cache.want('s', 'b');
    cache.want('t', 'x');
    cache.set({ sourceId: 's', key: 'b', row: null, expiresAt: 10 });
    expect(cache.drainWanted()).toEqual(
      new Map([
        ['s', ['a']],
        ['t', ['x']],
      ]),
    );
    expect(cache.drainWanted().size).toBe(0);
    for (let i = 0; i < MAX_WANTED_PER_SOURCE + 50; i++) cache.want('s', `k${i}`);
    expect(cache.drainWanted().get('s')).toHaveLength(MAX_WANTED_PER_SOURCE);
  });

  it('shares answers between caches on the channel (not to the sender object itself, which is set directly)', async () => {
    const a = new BroadcastChannel(HTTP_ANSWER_CHANNEL);
    const b = new BroadcastChannel(HTTP_ANSWER_CHANNEL);
    try {
      const sender = createHttpCache({ channel: a });
      const receiver = createHttpCache({ channel: b });
      sender.publish({ sourceId: 's', key: 'k', row: { v: 1 }, expiresAt: Date.now() + 60_000 });
      expect(sender.get('s', 'k')).toEqual({ hit: { v: 1 } });
      await expect.poll(() => receiver.get('s', 'k'), { timeout: 10_000 }).toEqual({ hit: { v: 1 } });
      sender.forget('s');
      expect(sender.get('s', 'k')).toBeUndefined();
      await expect.poll(() => receiver.get('s', 'k'), { timeout: 10_000 }).toBeUndefined();
    } finally {
      a.close();
      b.close();
    }
  });
});

describe('http answer cache across a worker thread', () => {
  const worker = cacheWorker();
  afterAll(() => worker.close());

  it('an answer published on this thread reaches the worker thread cache', async () => {
    await worker.ready;
    expect(await worker.ask('src', '203.0.113.9')).toBeNull();
    httpCache().publish({
      sourceId: 'src',
      key: '203.0.113.9',
      row: { 'geo.country': 'NL' },
      expiresAt: Date.now() + 60_000,
    });
    expect(httpCache().get('src', '203.0.113.9')).toEqual({ hit: { 'geo.country': 'NL' } });
    await expect
      .poll(() => worker.ask('src', '203.0.113.9'), { timeout: 10_000 })
      .toEqual({ hit: { 'geo.country': 'NL' } });
  });
});
