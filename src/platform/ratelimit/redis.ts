// Sliding window log in a sorted set per key, decided atomically in one Lua script with
// Redis's own clock, so every process agrees on the window whatever its local clock.
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { closeRedisClient } from '../redis.js';
import type { RateDecision, RateLimiterPort } from './port.js';

const HIT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local window = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local n = redis.call('ZCARD', KEYS[1])
local allowed = 0
if n < tonumber(ARGV[1]) then
  redis.call('ZADD', KEYS[1], now, ARGV[3])
  redis.call('PEXPIRE', KEYS[1], window)
  allowed = 1
  n = n + 1
end
local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
return {allowed, tonumber(ARGV[1]) - n, tonumber(oldest[2]) + window - now}
`;

export class RedisRateLimiter implements RateLimiterPort {
  readonly backend = 'redis' as const;
  readonly #redis: Redis;
  readonly #prefix: string;

  /** Takes ownership of `redis`: close() closes it. */
  constructor(redis: Redis, prefix: string) {
    this.#redis = redis;
    this.#prefix = `${prefix}:rl:`;
  }

  async hit(key: string, limit: number, windowMs: number): Promise<RateDecision> {
    const [allowed, remaining, untilOldestLeaves] = (await this.#redis.eval(
      HIT,
      1,
      this.#prefix + key,
      limit,
      windowMs,
      randomUUID(),
    )) as [number, number, number];
    if (allowed === 1)
      return {
        allowed: true,
        limit,
        windowMs,
        remaining: Math.max(0, remaining),
        retryAfterMs: 0,
        resetMs: Math.max(0, untilOldestLeaves),
      };
    const wait = Math.max(1, untilOldestLeaves);
    return { allowed: false, limit, windowMs, remaining: 0, retryAfterMs: wait, resetMs: wait };
  }

  async reset(key: string): Promise<void> {
    await this.#redis.del(this.#prefix + key);
  }

  async close(): Promise<void> {
    await closeRedisClient(this.#redis);
  }
}
