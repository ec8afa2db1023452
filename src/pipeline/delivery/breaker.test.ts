import { describe, expect, it } from 'vitest';
import { retryDelayMs } from './backoff.js';
import { Breaker } from './breaker.js';

describe('Breaker', () => {
  it('opens after threshold consecutive failures, waits the cooldown, then admits one probe', () => {
    const changes: string[] = [];
    const b = new Breaker(3, 1_000, (from, to) => changes.push(`${from}>${to}`));
    for (let i = 0; i < 2; i++) b.failure(b.begin(false), 0);
    expect(b.gate(0)).toEqual({ kind: 'go' });
    b.success(b.begin(false)); // a success resets the count
    for (let i = 0; i < 3; i++) b.failure(b.begin(false), 100);
    expect(b.state).toBe('open');
    expect(b.snapshot()).toMatchObject({ state: 'open', consecutive_failures: 3, opened_at: new Date(100) });
    expect(b.gate(600)).toEqual({ kind: 'wait', ms: 500 });
    expect(b.gate(1_100)).toEqual({ kind: 'probe' });
    expect(b.state).toBe('half_open');
    const probe = b.begin(true);
    expect(b.gate(1_100)).toMatchObject({ kind: 'wait' }); // one probe at a time
    b.failure(probe, 1_200);
    expect(b.state).toBe('open');
    expect(b.gate(2_100)).toEqual({ kind: 'wait', ms: 100 });
    expect(b.gate(2_200)).toEqual({ kind: 'probe' });
    b.success(b.begin(true));
    expect(b.snapshot()).toEqual({ state: 'closed', consecutive_failures: 0, opened_at: null });
    expect(changes).toEqual(['closed>open', 'open>half_open', 'half_open>open', 'open>half_open', 'half_open>closed']);
  });

  it('ignores outcomes of requests that began before the breaker opened', () => {
    const b = new Breaker(1, 1_000);
    const early = b.begin(false);
    b.failure(b.begin(false), 0);
    expect(b.state).toBe('open');
    b.success(early);
    expect(b.state).toBe('open');
    b.gate(1_000);
    b.success(b.begin(true));
    b.failure(early, 1_000); // late failure of the old generation: no effect on the closed breaker
    expect(b.snapshot().consecutive_failures).toBe(0);
    expect(b.state).toBe('closed');
  });
});

describe('retryDelayMs', () => {
  const s = { backoff_base_ms: 100, backoff_max_ms: 1_000 };
  it('uses full jitter under an exponential ceiling capped at backoff_max', () => {
    expect(retryDelayMs(s, 1, undefined, () => 0.999)).toBe(99);
    expect(retryDelayMs(s, 3, undefined, () => 0.5)).toBe(200);
    expect(retryDelayMs(s, 30, undefined, () => 0.999)).toBe(999);
    expect(retryDelayMs(s, 2, undefined, () => 0)).toBe(0);
  });
  it('never retries before Retry-After', () => {
    expect(retryDelayMs(s, 1, 5_000, () => 0.5)).toBe(5_000);
    expect(retryDelayMs(s, 5, 10, () => 0.5)).toBe(500);
  });
});
