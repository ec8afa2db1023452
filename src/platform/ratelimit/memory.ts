import type { RateDecision, RateLimiterPort } from './port.js';

/** Timestamps of recent hits per key; refused hits are not recorded. */
export class MemoryRateLimiter implements RateLimiterPort {
  readonly backend = 'memory' as const;
  readonly #hits = new Map<string, number[]>();
  readonly #now: () => number;
  readonly #sweep: NodeJS.Timeout;

  constructor(now: () => number = Date.now) {
    this.#now = now;
    // Keys idle for a long time are dropped so the map does not grow without bound.
    this.#sweep = setInterval(() => this.#prune(), 60_000);
    this.#sweep.unref();
  }

  async hit(key: string, limit: number, windowMs: number): Promise<RateDecision> {
    const now = this.#now();
    const since = now - windowMs;
    const list = (this.#hits.get(key) ?? []).filter((t) => t > since);
    if (list.length >= limit) {
      this.#hits.set(key, list);
      const oldest = list[0] ?? now;
      return { allowed: false, remaining: 0, retryAfterMs: Math.max(1, oldest + windowMs - now) };
    }
    list.push(now);
    this.#hits.set(key, list);
    return { allowed: true, remaining: limit - list.length, retryAfterMs: 0 };
  }

  async reset(key: string): Promise<void> {
    this.#hits.delete(key);
  }

  #prune(): void {
    const cutoff = this.#now() - 3_600_000;
    for (const [key, list] of this.#hits) if ((list.at(-1) ?? 0) < cutoff) this.#hits.delete(key);
  }

  async close(): Promise<void> {
    clearInterval(this.#sweep);
    this.#hits.clear();
  }
}
