// When a failed delivery batch is tried again (docs/delivery.md, Failure): exponential
// backoff with full jitter, so a fleet of dispatchers retrying one destination spreads out
// instead of hammering it in step, and never earlier than the server's Retry-After.
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
  const exponent = Math.min(Math.max(attempts - 1, 0), 40);
  const ceiling = Math.min(settings.backoff_max_ms, settings.backoff_base_ms * 2 ** exponent);
  const jittered = Math.floor(random() * ceiling);
  return Math.max(retryAfterMs ?? 0, jittered);
}
