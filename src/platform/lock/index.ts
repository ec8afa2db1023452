// createLock: Redis when REDIS_URL is set (one lock across every process), else in memory.
import type { Logger } from 'pino';
import { createRedisClient } from '../redis.js';
import { MemoryLock } from './memory.js';
import type { LockPort } from './port.js';
import { RedisLock } from './redis.js';

export type { Lease, LockPort } from './port.js';

export interface LockOptions {
  redisUrl?: string | undefined;
  redisPrefix: string;
  logger?: Logger | undefined;
}

export function createLock(options: LockOptions): LockPort {
  if (!options.redisUrl) return new MemoryLock();
  const redis = createRedisClient(options.redisUrl, { name: `${options.redisPrefix}:lock`, logger: options.logger });
  return new RedisLock(redis, options.redisPrefix);
}
