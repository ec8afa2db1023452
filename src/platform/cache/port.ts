// The cache port: memory (embedded) and Redis (distributed), one contract test.

export interface CachePort {
  readonly backend: 'memory' | 'redis';
  get<T = unknown>(key: string): Promise<T | undefined>;
  /** Stores a JSON-serialisable value; ttlMs omitted keeps it until deleted. */
  set(key: string, value: unknown, ttlMs?: number): Promise<void>;
  del(key: string): Promise<void>;
  /** Remaining life in ms; -1 without expiry; -2 when absent (Redis PTTL semantics). */
  ttl(key: string): Promise<number>;
  ping(): Promise<void>;
  close(): Promise<void>;
}
