import type { Logger } from 'pino';
import { createRedisClient } from '../redis.js';
import { MemoryRateLimiter } from './memory.js';
import type { RateLimiterPort } from './port.js';
import { RedisRateLimiter } from './redis.js';

export type { RateDecision, RateLimiterPort } from './port.js';

export function createRateLimiter(options: {
  redisUrl?: string | undefined;
  redisPrefix: string;
  logger?: Logger | undefined;
}): RateLimiterPort {
  if (!options.redisUrl) return new MemoryRateLimiter();
  const redis = createRedisClient(options.redisUrl, {
    name: `${options.redisPrefix}:ratelimit`,
    logger: options.logger,
  });
  return new RedisRateLimiter(redis, options.redisPrefix);
}
