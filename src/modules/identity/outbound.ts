// Every call to the identity provider (discovery, JWKS, token endpoint, SCIM) goes through
// the SSRF guard: the outbound module's guarded fetch (platform/net/http.ts).
import { createGuardedFetch as guardedFetch, type GuardedFetch } from '../../platform/net/http.js';
import type { NetPolicy } from '../../platform/net/policy.js';

export type { GuardedFetch };

export function createGuardedFetch(net: NetPolicy): { fetch: GuardedFetch; close(): Promise<void> } {
  return guardedFetch(net, { timeoutMs: 10_000 });
}

/** The message of a failed call, with its cause (undici wraps the connection error). */
export function reason(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause = (err as { cause?: unknown }).cause;
  const inner = cause instanceof Error ? `: ${cause.message}` : '';
  return `${err.message}${inner && !err.message.includes(inner.slice(2)) ? inner : ''}`.slice(0, 500);
}
