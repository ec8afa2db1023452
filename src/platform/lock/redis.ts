// The distributed lock: SET key token NX PX ttl under `${prefix}:lock:`. Renew and release
// compare the token and act in one Lua script, so a holder whose lease expired can never
// extend or delete the lease someone else acquired since.
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { positiveMs } from '../duration.js';
import { closeRedisClient } from '../redis.js';
import type { Lease, LockPort } from './port.js';

const RENEW = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) else return 0 end`;
const RELEASE = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end`;

export class RedisLock implements LockPort {
  readonly backend = 'redis' as const;
  readonly #redis: Redis;
  readonly #prefix: string;

  /** Takes ownership of `redis`: close() closes it. */
  constructor(redis: Redis, prefix: string) {
    this.#redis = redis;
    this.#prefix = `${prefix}:lock:`;
  }

  async acquire(key: string, ttlMs: number): Promise<Lease | null> {
    const ttl = positiveMs('ttlMs', ttlMs);
    const redisKey = this.#prefix + key;
    const token = randomUUID();
    const ok = await this.#redis.set(redisKey, token, 'PX', ttl, 'NX');
    if (ok !== 'OK') return null;
    const redis = this.#redis;
    return {
      key,
      async renew(renewTtlMs?: number) {
        const next = renewTtlMs === undefined ? ttl : positiveMs('ttlMs', renewTtlMs);
        return (await redis.eval(RENEW, 1, redisKey, token, next)) === 1;
      },
      async release() {
        await redis.eval(RELEASE, 1, redisKey, token);
      },
    };
  }

  close(): Promise<void> {
    return closeRedisClient(this.#redis);
  }
}
