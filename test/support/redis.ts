// Redis for tests: only when REDIS_URL is set. Each suite takes a unique key prefix so
// parallel files and runs never collide, and deletes its keys afterwards.
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';

export const redisUrl = process.env.REDIS_URL || undefined;

export function uniquePrefix(): string {
  return `weir-test-${randomUUID()}`;
}

/** Deletes every key under `prefix:`. */
export async function deletePrefix(prefix: string): Promise<void> {
  if (!redisUrl) return;
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: 3 });
  try {
    for await (const keys of redis.scanStream({ match: `${prefix}:*`, count: 1000 })) {
      if ((keys as string[]).length > 0) await redis.unlink(...(keys as string[]));
    }
  } finally {
    redis.disconnect();
  }
}
