// The embedded lock: leases in a Map. Same rules as the Redis adapter: a lease that expired
// is gone, even if nobody took the key since; only the token holder renews or releases.
import { randomUUID } from 'node:crypto';
import { positiveMs } from '../duration.js';
import type { Lease, LockPort } from './port.js';

interface Held {
  token: string;
  expiresAt: number;
}

export class MemoryLock implements LockPort {
  readonly backend = 'memory' as const;
  readonly #held = new Map<string, Held>();
  readonly #sweep: NodeJS.Timeout;

  constructor() {
    this.#sweep = setInterval(() => {
      for (const key of this.#held.keys()) this.#live(key);
    }, 60_000);
    this.#sweep.unref();
  }

  async acquire(key: string, ttlMs: number): Promise<Lease | null> {
    const ttl = positiveMs('ttlMs', ttlMs);
    if (this.#live(key)) return null;
    const token = randomUUID();
    this.#held.set(key, { token, expiresAt: Date.now() + ttl });
    return {
      key,
      renew: async (renewTtlMs?: number) => {
        const next = renewTtlMs === undefined ? ttl : positiveMs('ttlMs', renewTtlMs);
        const held = this.#live(key);
        if (held?.token !== token) return false;
        held.expiresAt = Date.now() + next;
        return true;
      },
      release: async () => {
        if (this.#live(key)?.token === token) this.#held.delete(key);
      },
    };
  }

  async close(): Promise<void> {
    clearInterval(this.#sweep);
    this.#held.clear();
  }

  #live(key: string): Held | undefined {
    const held = this.#held.get(key);
    if (held && held.expiresAt <= Date.now()) {
      this.#held.delete(key);
      return undefined;
    }
    return held;
  }
}
