// One way to make ioredis clients, shared by the cache, lock and BullMQ adapters.
import { Redis } from 'ioredis';
import type { Logger } from 'pino';

export interface RedisClientOptions {
  /** Shown by CLIENT LIST, so an operator can tell Weir's connections apart. */
  name: string;
  /**
   * BullMQ workers block on Redis and must retry a command forever across reconnects
   * (maxRetriesPerRequest null). Everything else fails a command after a few reconnect
   * attempts, so a Redis outage becomes an error the caller can report, not a hang.
   */
  blocking?: boolean;
  logger?: Logger | undefined;
}

/** Reconnect after 100 ms, 200 ms, ... up to 3 s between attempts, forever. */
export function reconnectDelay(attempt: number): number {
  return Math.min(attempt * 100, 3000);
}

export function createRedisClient(url: string, options: RedisClientOptions): Redis {
  const client = new Redis(url, {
    connectionName: options.name,
    lazyConnect: false,
    maxRetriesPerRequest: options.blocking ? null : 3,
    retryStrategy: reconnectDelay,
    // BullMQ forbids ioredis key prefixes; the adapters prefix their keys themselves.
    keyPrefix: undefined,
  });
  // Without a listener ioredis prints every connection error to stderr; log them once per
  // outage instead, and say when the connection is back.
  let failing = false;
  client.on('error', (err: Error) => {
    if (failing) return;
    failing = true;
    options.logger?.warn({ err, redis: options.name }, 'redis: connection failed, reconnecting');
  });
  client.on('ready', () => {
    if (!failing) return;
    failing = false;
    options.logger?.info({ redis: options.name }, 'redis: connection restored');
  });
  return client;
}

/** Closes a client politely, falling back to a hard disconnect when Redis is unreachable. */
export async function closeRedisClient(client: Redis): Promise<void> {
  if (client.status === 'end') return;
  if (client.status !== 'ready') {
    client.disconnect();
    return;
  }
  try {
    await client.quit();
  } catch {
    client.disconnect();
  }
}
