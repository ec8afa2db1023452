import type { RateDecision, RateLimiterPort } from './port.js';

/** Hit times of one key in arrival order; `head` skips the ones that left the window. */
interface Log {
  times: number[];
  head: number;
}

/** Timestamps of recent hits per key; refused hits are not recorded. */
export class MemoryRateLimiter implements RateLimiterPort {
  readonly backend = 'memory' as const;
  readonly #hits = new Map<string, Log>();
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
    let log = this.#hits.get(key);
    if (!log) {
      log = { times: [], head: 0 };
      this.#hits.set(key, log);
    }
    // Times are appended in order, so the expired ones are a prefix: advance past them
    // (amortized O(1) per hit) and compact only once the dead prefix is large.
    const { times } = log;
    while (log.head < times.length && (times[log.head] as number) <= since) log.head++;
    if (log.head > 1024 && log.head * 2 > times.length) {
      times.splice(0, log.head);
      log.head = 0;
    }
    const count = times.length - log.head;
    if (count >= limit) {
      const oldest = times[log.head] ?? now;
      const wait = Math.max(1, oldest + windowMs - now);
      return { allowed: false, limit, windowMs, remaining: 0, retryAfterMs: wait, resetMs: wait };
    }
    times.push(now);
    const oldest = times[log.head] ?? now;
    return {
      allowed: true,
      limit,
      windowMs,
      remaining: limit - count - 1,
      retryAfterMs: 0,
      resetMs: Math.max(0, oldest + windowMs - now),
    };
  }

  async reset(key: string): Promise<void> {
    this.#hits.delete(key);
  }

  #prune(): void {
    const cutoff = this.#now() - 3_600_000;
    for (const [key, log] of this.#hits) if ((log.times.at(-1) ?? 0) < cutoff) this.#hits.delete(key);
  }

  async close(): Promise<void> {
    clearInterval(this.#sweep);
    this.#hits.clear();
  }
}
