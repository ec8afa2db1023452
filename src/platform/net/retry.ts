// When to try an outbound call again: the one Retry-After reading and the one backoff
// formula. Full jitter (AWS Architecture Blog, "Exponential Backoff and Jitter") spreads a
// fleet of clients retrying one server instead of hammering it in step; a server's
// Retry-After is a floor, never shortened.
import { setTimeout as sleep } from 'node:timers/promises';

/** The longest wait any server may ask for: a day. */
export const MAX_RETRY_AFTER_MS = 86_400_000;

/** Milliseconds to wait from a Retry-After value (delta seconds or HTTP date); undefined when absent or unreadable. */
export function parseRetryAfter(value: string | string[] | undefined, now = Date.now()): number | undefined {
  const v = (Array.isArray(value) ? value[0] : value)?.trim();
  if (!v) return undefined;
  if (/^\d+$/.test(v)) return Math.min(Number(v) * 1000, MAX_RETRY_AFTER_MS);
  // An HTTP date names a weekday and month; Date.parse alone would read "-5" as a year.
  const at = /[a-z]{3}/i.test(v) ? Date.parse(v) : NaN;
  if (Number.isNaN(at)) return undefined;
  return Math.min(Math.max(0, at - now), MAX_RETRY_AFTER_MS);
}

export interface BackoffOptions {
  /** The failed tries so far (1 after the first failure). */
  attempt: number;
  baseMs: number;
  /** Ceiling of the exponential part (a Retry-After may exceed it). */
  maxMs: number;
  /** The server's wait: the result is never shorter. */
  retryAfterMs?: number;
  /** Full jitter (default); false for a schedule a person reads ("30 s, then 60 s, ..."). */
  jitter?: boolean;
  random?: () => number;
}

/** max(retryAfter, random(0, min(max, base × 2^(attempt-1)))), whole milliseconds. */
export function backoffDelay(o: BackoffOptions): number {
  const exponent = Math.min(Math.max(o.attempt - 1, 0), 40);
  const ceiling = Math.min(o.maxMs, o.baseMs * 2 ** exponent);
  const wait = o.jitter === false ? ceiling : Math.floor((o.random ?? Math.random)() * ceiling);
  return Math.max(o.retryAfterMs ?? 0, wait);
}

/** How an outbound client tries a call again within one operation. */
export interface RetryPolicy {
  /** Tries in all, the first included. */
  readonly attempts: number;
  /**
   * The wait after failed try `attempt`: full jitter, the server's Retry-After as a floor.
   * jitter false gives the ceiling, for a wait that is also reported ("retry in 4 s").
   */
  delay(attempt: number, retryAfterMs?: number, jitter?: boolean): number;
}

export function retryPolicy(o: {
  attempts: number;
  baseMs: number;
  maxMs: number;
  random?: () => number;
}): RetryPolicy {
  return {
    attempts: o.attempts,
    delay: (attempt, retryAfterMs, jitter = true) =>
      backoffDelay({ attempt, baseMs: o.baseMs, maxMs: o.maxMs, retryAfterMs, jitter, random: o.random }),
  };
}

/** Waits ms unless the signal ends it first; then throws what `stopped` builds. */
export async function pause(ms: number, signal: AbortSignal | undefined, stopped: () => Error): Promise<void> {
  if (ms <= 0) return;
  await sleep(ms, undefined, signal ? { signal } : {}).catch(() => {
    throw stopped();
  });
}
