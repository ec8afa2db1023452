// The lock port: leases with an owner token, so only the holder renews or releases and a
// dead holder's lock expires by itself. Memory (embedded) and Redis adapters.

export interface Lease {
  readonly key: string;
  /** Extends the lease; false if it was lost: it expired (whether or not someone else took it since). */
  renew(ttlMs?: number): Promise<boolean>;
  /** Releases the lease if still held; a no-op otherwise. */
  release(): Promise<void>;
}

export interface LockPort {
  readonly backend: 'memory' | 'redis';
  /** Acquires the lock for ttlMs, or null when someone else holds it. */
  acquire(key: string, ttlMs: number): Promise<Lease | null>;
  close(): Promise<void>;
}
