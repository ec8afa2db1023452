// The distributed cache: one Redis string per key, JSON-encoded, under `${prefix}:cache:`.
import type { Redis } from 'ioredis';
import { positiveMs } from '../duration.js';
import { closeRedisClient } from '../redis.js';
import type { CachePort } from './port.js';
import { decode, encode } from './serialize.js';

export class RedisCache implements CachePort {
  readonly backend = 'redis' as const;
  readonly #redis: Redis;
  readonly #prefix: string;

  /** Takes ownership of `redis`: close() closes it. */
  constructor(redis: Redis, prefix: string) {
    this.#redis = redis;
    this.#prefix = `${prefix}:cache:`;
  }

  async get<T = unknown>(key: string): Promise<T | undefined> {
    const text = await this.#redis.get(this.#prefix + key);
    return text === null ? undefined : decode<T>(text);
  }

  async set(key: string, value: unknown, ttlMs?: number): Promise<void> {
    const text = encode(key, value);
    if (ttlMs === undefined) await this.#redis.set(this.#prefix + key, text);
    else await this.#redis.set(this.#prefix + key, text, 'PX', positiveMs('ttlMs', ttlMs));
  }

  async del(key: string): Promise<void> {
    await this.#redis.del(this.#prefix + key);
  }

  ttl(key: string): Promise<number> {
    return this.#redis.pttl(this.#prefix + key);
  }

  async ping(): Promise<void> {
    await this.#redis.ping();
  }

  close(): Promise<void> {
    return closeRedisClient(this.#redis);
  }
}
