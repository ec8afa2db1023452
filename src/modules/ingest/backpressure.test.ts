import { describe, expect, it } from 'vitest';
import { manualClock } from '../../core/clock.js';
import { InflightBudget, pendingGauge, saturated } from './backpressure.js';

describe('InflightBudget', () => {
  it('lets a request alone through even beyond the budget', () => {
    const budget = new InflightBudget(100);
    const lease = budget.open();
    expect(() => lease.grow(500)).not.toThrow();
    expect(budget.used).toBe(500);
    lease.release();
    expect(budget.used).toBe(0);
  });

  it('refuses a new request while others hold the whole budget (429, Retry-After: 1)', () => {
    const budget = new InflightBudget(100);
    const a = budget.open();
    a.grow(100);
    expect(() => budget.open()).toThrow(
      expect.objectContaining({
        status: 429,
        headers: expect.objectContaining({ 'retry-after': '1' }) as unknown,
      }) as Error,
    );
    a.release();
    expect(() => budget.open()).not.toThrow();
  });

  it('stops a request that grows past the budget while others hold bytes', () => {
    const budget = new InflightBudget(100);
    const a = budget.open();
    const b = budget.open();
    a.grow(60);
    b.grow(30);
    expect(() => b.grow(20)).toThrow(expect.objectContaining({ code: 'rate_limit.exceeded' }) as Error);
    b.release();
    expect(budget.used).toBe(60);
  });

  it('releases once, however often release is called', () => {
    const budget = new InflightBudget(100);
    const a = budget.open();
    const b = budget.open();
    a.grow(10);
    b.grow(20);
    a.release();
    a.release();
    a.grow(5); // after release: ignored
    expect(budget.used).toBe(20);
  });
});

describe('pendingGauge', () => {
  it('reads the queue at most once per interval and adds local enqueues in between', async () => {
    const clock = manualClock();
    let reads = 0;
    let depth = 7;
    const gauge = pendingGauge(
      async () => {
        reads++;
        return depth;
      },
      clock,
      1000,
    );
    expect(await gauge.current()).toBe(7);
    gauge.add(2);
    depth = 100;
    clock.advance(999);
    expect(await gauge.current()).toBe(9);
    expect(reads).toBe(1);
    clock.advance(1);
    expect(await gauge.current()).toBe(100);
    expect(reads).toBe(2);
  });

  it('shares one read among concurrent callers', async () => {
    let reads = 0;
    const gauge = pendingGauge(async () => {
      reads++;
      await new Promise((r) => setTimeout(r, 10));
      return 3;
    }, manualClock());
    expect(await Promise.all([gauge.current(), gauge.current(), gauge.current()])).toEqual([3, 3, 3]);
    expect(reads).toBe(1);
  });

  it('keeps the last value when a read fails', async () => {
    const clock = manualClock();
    let fail = false;
    const errors: unknown[] = [];
    const gauge = pendingGauge(
      async () => {
        if (fail) throw new Error('down');
        return 4;
      },
      clock,
      1000,
      (e) => errors.push(e),
    );
    expect(await gauge.current()).toBe(4);
    fail = true;
    clock.advance(1000);
    expect(await gauge.current()).toBe(4);
    expect(errors).toHaveLength(1);
  });
});

describe('saturated', () => {
  it('is a 503 with Retry-After', () => {
    expect(saturated(10, 5)).toMatchObject({ code: 'ingest.saturated', status: 503, headers: { 'retry-after': '5' } });
  });
});
