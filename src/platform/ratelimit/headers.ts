// RateLimit header fields (IETF httpapi draft, the RateLimit-Limit / -Remaining / -Reset
// form with RateLimit-Policy) from a limiter's decision, and the one 429 every rate limit
// answers with. The window is sliding, so Reset is when the oldest counted request leaves
// it: the moment at least one more request is allowed (on a 429, the same as Retry-After).
import { AppError } from '../../core/errors.js';
import type { RateDecision } from './port.js';

export const RATE_LIMIT_HEADER_NAMES = [
  'RateLimit-Limit',
  'RateLimit-Remaining',
  'RateLimit-Reset',
  'RateLimit-Policy',
] as const;

const seconds = (ms: number) => Math.ceil(ms / 1000);

export function rateLimitHeaders(d: RateDecision): Record<string, string> {
  return {
    'ratelimit-limit': String(d.limit),
    'ratelimit-remaining': String(d.remaining),
    'ratelimit-reset': String(seconds(d.resetMs)),
    'ratelimit-policy': `${d.limit};w=${seconds(d.windowMs)}`,
  };
}

/** The 429 of a refused decision: RateLimit-* and Retry-After (whole seconds, at least 1). */
export function rateLimited(
  d: RateDecision,
  detail: (retryAfterSeconds: number) => string,
  details: Record<string, unknown> = {},
): AppError {
  const retry = Math.max(1, seconds(d.retryAfterMs));
  return new AppError('rate_limit.exceeded', {
    detail: detail(retry),
    details: { limit: d.limit, window_seconds: seconds(d.windowMs), retry_after_seconds: retry, ...details },
    headers: { ...rateLimitHeaders(d), 'retry-after': String(retry) },
  });
}
