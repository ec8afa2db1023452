// When a failed delivery batch is tried again (docs/delivery.md, Failure): exponential
// backoff with full jitter, so a fleet of dispatchers retrying one destination spreads out
// instead of hammering it in step, and never earlier than the server's Retry-After.
import { backoffDelay } from '../../platform/net/retry.js';
import type { DeliverySettings } from './settings.js';

/**
 * Delay before attempt `attempts + 1`, where `attempts` counts the failed ones so far (≥ 1):
 * max(retryAfter, random(0, min(backoff_max, base × 2^(attempts-1)))).
 */
export function retryDelayMs(
  settings: Pick<DeliverySettings, 'backoff_base_ms' | 'backoff_max_ms'>,
  attempts: number,
  retryAfterMs: number | undefined,
  random: () => number = Math.random,
): number {
  return backoffDelay({
    attempt: attempts,
    baseMs: settings.backoff_base_ms,
    maxMs: settings.backoff_max_ms,
    retryAfterMs,
    random,
  });
}
