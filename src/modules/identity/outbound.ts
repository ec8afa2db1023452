// Every call to the identity provider (discovery, JWKS, token endpoint, SCIM) goes through
// the SSRF guard: an undici Agent whose connections resolve names through the guard's
// lookup and whose literal addresses are checked before connecting.
import { isIP } from 'node:net';
import { Agent, buildConnector, fetch as undiciFetch } from 'undici';
import type { NetPolicy } from '../../platform/net/policy.js';

export type GuardedFetch = (url: string, init?: RequestInit & { timeoutMs?: number }) => Promise<Response>;

const TIMEOUT_MS = 10_000;

export function createGuardedFetch(net: NetPolicy): { fetch: GuardedFetch; close(): Promise<void> } {
  const base = buildConnector({ lookup: net.lookup, timeout: TIMEOUT_MS });
  const connect: buildConnector.connector = (opts, callback) => {
    const host = opts.hostname.startsWith('[') ? opts.hostname.slice(1, -1) : opts.hostname;
    if (isIP(host)) {
      try {
        net.checkAddress(host);
      } catch (err) {
        return callback(err as Error, null);
      }
    }
    return base(opts, callback);
  };
  const agent = new Agent({ connect, keepAliveTimeout: 4_000 });
  return {
    fetch: async (url, init = {}) => {
      const { timeoutMs, ...rest } = init;
      const signal = rest.signal ?? AbortSignal.timeout(timeoutMs ?? TIMEOUT_MS);
      // Redirects are not followed: every hop would have to be judged again, and no step needs one.
      return (await undiciFetch(url, {
        ...(rest as object),
        signal,
        redirect: 'manual',
        dispatcher: agent,
      } as never)) as unknown as Response;
    },
    close: () => agent.close(),
  };
}

/** The message of a failed call, with its cause (undici wraps the connection error). */
export function reason(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause = (err as { cause?: unknown }).cause;
  const inner = cause instanceof Error ? `: ${cause.message}` : '';
  return `${err.message}${inner && !err.message.includes(inner.slice(2)) ? inner : ''}`.slice(0, 500);
}
