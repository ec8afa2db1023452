import { describe, expect, it } from 'vitest';
import { backoffDelay, parseRetryAfter, pause, retryPolicy } from './retry.js';

describe('parseRetryAfter', () => {
  it('reads delta seconds or an HTTP date, capped at a day, and ignores garbage', () => {
    const now = Date.parse('2025-01-01T00:00:00Z');
    expect(parseRetryAfter('120', now)).toBe(120_000);
    expect(parseRetryAfter(' 7 ', now)).toBe(7_000);
    expect(parseRetryAfter(['3', '9'], now)).toBe(3000);
    expect(parseRetryAfter('Wed, 01 Jan 2025 00:00:30 GMT', now)).toBe(30_000);
    expect(parseRetryAfter('Tue, 31 Dec 2024 23:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('Sat, 01 Feb 2025 00:00:00 GMT', now)).toBe(86_400_000);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter('-5', now)).toBeUndefined();
    expect(parseRetryAfter('', now)).toBeUndefined();
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
    expect(parseRetryAfter('99999999', now)).toBe(86_400_000);
  });
});

describe('backoffDelay', () => {
  const base = { baseMs: 100, maxMs: 1_000 };

  it('stays within [0, min(max, base × 2^(attempt-1))) with full jitter', () => {
    for (let attempt = 1; attempt <= 50; attempt++) {
      const ceiling = Math.min(1_000, 100 * 2 ** Math.min(attempt - 1, 40));
      expect(backoffDelay({ ...base, attempt, random: () => 0 })).toBe(0);
      expect(backoffDelay({ ...base, attempt, random: () => 0.999999 })).toBe(ceiling - 1);
      const d = backoffDelay({ ...base, attempt });
      expect(d).toBeGreaterThanOrEqual(0);
      expect(d).toBeLessThan(ceiling);
    }
  });

  it('never goes under the server Retry-After, which may exceed the ceiling', () => {
    expect(backoffDelay({ ...base, attempt: 1, retryAfterMs: 5_000, random: () => 0.5 })).toBe(5_000);
    expect(backoffDelay({ ...base, attempt: 5, retryAfterMs: 10, random: () => 0.5 })).toBe(500);
  });

  it('gives the ceiling itself without jitter', () => {
    expect([0, 1, 2, 3, 4, 5].map((attempt) => backoffDelay({ ...base, attempt, jitter: false }))).toEqual([
      100, 100, 200, 400, 800, 1_000,
    ]);
  });
});

describe('retryPolicy', () => {
  it('carries the attempts and one backoff', () => {
    const policy = retryPolicy({ attempts: 3, baseMs: 500, maxMs: 60_000, random: () => 0.5 });
    expect(policy.attempts).toBe(3);
    expect(policy.delay(1)).toBe(250);
    expect(policy.delay(3)).toBe(1_000);
    expect(policy.delay(3, undefined, false)).toBe(2_000);
    expect(policy.delay(1, 4_000)).toBe(4_000);
  });

  it('pauses until the signal stops it', async () => {
    const controller = new AbortController();
    const waiting = pause(60_000, controller.signal, () => new Error('stopped'));
    controller.abort();
    await expect(waiting).rejects.toThrow('stopped');
    await expect(pause(0, undefined, () => new Error('never'))).resolves.toBeUndefined();
  });
});
