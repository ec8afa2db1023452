// The rate-limit port: a sliding window log per key. In memory in the embedded mode, in
// Redis in the distributed mode so that a limit holds across every process.

export interface RateDecision {
  allowed: boolean;
  /** The limit the hit was counted against, and its window: what RateLimit-* headers state. */
  limit: number;
  windowMs: number;
  /** Hits left in the window after this one (0 when refused). */
  remaining: number;
  /** When refused: ms until a hit would be allowed again. */
  retryAfterMs: number;
  /**
   * Ms until the oldest hit counted leaves the window, freeing one more (0 when none is
   * counted). When refused, equal to retryAfterMs.
   */
  resetMs: number;
}

export interface RateLimiterPort {
  readonly backend: 'memory' | 'redis';
  /** Records a hit on `key` if fewer than `limit` hits fell in the last `windowMs`. */
  hit(key: string, limit: number, windowMs: number): Promise<RateDecision>;
  /** Forgets a key (e.g. a successful login clears its failures). */
  reset(key: string): Promise<void>;
  close(): Promise<void>;
}
