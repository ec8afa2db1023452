// The embedded cache: a Map with expiry. Expired entries are dropped when read and by a
// periodic sweep, so keys nobody reads again do not pile up.
import { positiveMs } from '../duration.js';
import type { CachePort } from './port.js';
import { decode, encode } from './serialize.js';

interface Entry {
  text: string;
  /** Epoch ms; undefined keeps the entry until deleted. */
  expiresAt: number | undefined;
}

export interface MemoryCacheOptions {
  /** Default 60 000. */
  sweepIntervalMs?: number;
}

export class MemoryCache implements CachePort {
  readonly backend = 'memory' as const;
  readonly #entries = new Map<string, Entry>();
  readonly #sweep: NodeJS.Timeout;

  constructor(options: MemoryCacheOptions = {}) {
    this.#sweep = setInterval(() => this.#dropExpired(), options.sweepIntervalMs ?? 60_000);
    this.#sweep.unref();
  }

  async get<T = unknown>(key: string): Promise<T | undefined> {
    const entry = this.#live(key);
    return entry ? decode<T>(entry.text) : undefined;
  }

  async set(key: string, value: unknown, ttlMs?: number): Promise<void> {
    const text = encode(key, value);
    const expiresAt = ttlMs === undefined ? undefined : Date.now() + positiveMs('ttlMs', ttlMs);
    this.#entries.set(key, { text, expiresAt });
  }

  async del(key: string): Promise<void> {
    this.#entries.delete(key);
  }

  async ttl(key: string): Promise<number> {
    const entry = this.#live(key);
    if (!entry) return -2;
    return entry.expiresAt === undefined ? -1 : entry.expiresAt - Date.now();
  }

  async ping(): Promise<void> {}

  async close(): Promise<void> {
    clearInterval(this.#sweep);
    this.#entries.clear();
  }

  #live(key: string): Entry | undefined {
    const entry = this.#entries.get(key);
    if (entry?.expiresAt !== undefined && entry.expiresAt <= Date.now()) {
      this.#entries.delete(key);
      return undefined;
    }
    return entry;
  }

  #dropExpired(): void {
    const now = Date.now();
    for (const [key, entry] of this.#entries) {
      if (entry.expiresAt !== undefined && entry.expiresAt <= now) this.#entries.delete(key);
    }
  }
}
