// createCache: Redis when REDIS_URL is set (shared by every process), else in memory.
import type { Logger } from 'pino';
import { createRedisClient } from '../redis.js';
import { MemoryCache } from './memory.js';
import type { CachePort } from './port.js';
import { RedisCache } from './redis.js';

export type { CachePort } from './port.js';
export { CacheValueError } from './serialize.js';

export interface CacheOptions {
  redisUrl?: string | undefined;
  redisPrefix: string;
  logger?: Logger | undefined;
}

export function createCache(options: CacheOptions): CachePort {
  if (!options.redisUrl) return new MemoryCache();
  const redis = createRedisClient(options.redisUrl, { name: `${options.redisPrefix}:cache`, logger: options.logger });
  return new RedisCache(redis, options.redisPrefix);
}
