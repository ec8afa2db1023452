// The HTTP client every connector calls its vendor with. It owns what all vendors share:
// the SSRF guard on every connection (vendor base URLs are configurable), a per-request
// timeout, retries of 5xx and network failures with backoff, 429 handling (Retry-After or
// the vendor's reset headers: waits when short, else VendorError('rate_limited') with the
// time to come back), pausing before the next request when the vendor says the quota is spent,
// and usage counters (requests, rate-limited answers, errors, bytes) for the cost summary.
// Connectors add auth headers and read JSON; they never retry by themselves. The connection,
// the body cap, Retry-After and the backoff are the outbound module's (platform/net).
import type { IncomingHttpHeaders } from 'node:http';
import { createRedactor, redactAndCut } from '../core/redaction.js';
import { findNetError } from '../platform/net/errors.js';
import { BodyTooLargeError, createGuardedAgent, readBody } from '../platform/net/http.js';
import type { NetPolicy } from '../platform/net/policy.js';
import { MAX_RETRY_AFTER_MS, parseRetryAfter, pause, retryPolicy } from '../platform/net/retry.js';
import { VendorError, type TokenCache } from './sdk.js';

export const VENDOR_USER_AGENT = 'Weir-Collector/1';
/** Largest vendor answer read (a page of events); larger is refused as invalid_response. */
const MAX_RESPONSE_BYTES = 64 * 1024 * 1024;

export interface VendorRequest {
  method?: 'GET' | 'POST' | 'PUT';
  url: string | URL;
  /** Added to url's search params (undefined values are skipped). */
  query?: Record<string, string | number | undefined>;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Statuses returned to the caller instead of raised (e.g. [401] to refresh a token, [404]). */
  accept?: number[];
}

export interface VendorResponse {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  /** The body parsed as JSON; VendorError('invalid_response') when it is not. */
  json<T = unknown>(): T;
  /** A header's first value, lower-case name. */
  header(name: string): string | undefined;
}

export interface VendorUsage {
  requests: number;
  rateLimited: number;
  errors: number;
  bytes: number;
}

export interface VendorHttp {
  request(req: VendorRequest): Promise<VendorResponse>;
  readonly usage: VendorUsage;
}

export interface VendorHttpOptions {
  net: NetPolicy;
  signal: AbortSignal;
  requestTimeoutMs: number;
  /** Longest Retry-After waited inside the call; longer raises rate_limited. */
  maxRetryWaitMs: number;
  /** Attempts for 5xx/network failures (and short 429 waits), default 4. */
  attempts?: number;
  /** Base backoff between failed attempts, default 500 ms (full jitter). */
  backoffMs?: number;
  /** Secrets to strip from any error message (tokens, keys). */
  secrets?: () => readonly string[];
  now?: () => number;
}

/**
 * Milliseconds until the vendor's quota resets, from the rate-limit headers vendors use:
 * Retry-After (RFC 9110), X-Rate-Limit-Reset (Okta, epoch s), X-RateLimit-Reset (GitHub,
 * epoch s), X-RateLimit-RetryAfter (CrowdStrike, epoch s).
 */
export function waitFromHeaders(headers: IncomingHttpHeaders, now = Date.now()): number | undefined {
  const retryAfter = parseRetryAfter(headers['retry-after'], now);
  if (retryAfter !== undefined) return retryAfter;
  for (const name of ['x-ratelimit-retryafter', 'x-rate-limit-reset', 'x-ratelimit-reset']) {
    const raw = headers[name];
    const v = (Array.isArray(raw) ? raw[0] : raw)?.trim();
    if (v && /^\d+$/.test(v)) {
      const n = Number(v);
      // Epoch seconds (vendors' reset headers); a small number is a delta in seconds.
      const ms = n > 1_000_000_000 ? n * 1000 - now : n * 1000;
      return Math.min(Math.max(0, ms), MAX_RETRY_AFTER_MS);
    }
  }
  return undefined;
}

/** True when the answer says the quota is spent (remaining 0) though it succeeded. */
function quotaSpent(headers: IncomingHttpHeaders): boolean {
  for (const name of ['x-rate-limit-remaining', 'x-ratelimit-remaining']) {
    const raw = headers[name];
    const v = (Array.isArray(raw) ? raw[0] : raw)?.trim();
    if (v !== undefined && v === '0') return true;
  }
  return false;
}

/** The start of a vendor's answer on one line, its secrets hidden before the cut (a cut echo still shows a prefix). */
function short(text: string, secrets: readonly string[]): string {
  const redact = createRedactor(secrets);
  return redactAndCut((t) => redact(t).replace(/\s+/g, ' ').trim(), text, 201);
}

/** One client per cycle (or test): its agent is closed with it. */
export function createVendorHttp(options: VendorHttpOptions): VendorHttp & { close(): Promise<void> } {
  const now = options.now ?? Date.now;
  const policy = retryPolicy({ attempts: options.attempts ?? 4, baseMs: options.backoffMs ?? 500, maxMs: 60_000 });
  const attempts = policy.attempts;
  const secrets = options.secrets ?? (() => []);
  const usage: VendorUsage = { requests: 0, rateLimited: 0, errors: 0, bytes: 0 };
  const agent = createGuardedAgent(options.net, { connectTimeoutMs: Math.min(10_000, options.requestTimeoutMs) });
  /** Do not send before this time (the vendor said its quota is spent). */
  let notBefore = 0;

  const wait = (ms: number) =>
    pause(
      ms,
      options.signal,
      () => new VendorError('unavailable', 'collection was stopped while waiting for the vendor'),
    );

  async function once(req: VendorRequest, url: URL): Promise<VendorResponse> {
    const signal = AbortSignal.any([options.signal, AbortSignal.timeout(options.requestTimeoutMs)]);
    usage.requests += 1;
    let res;
    try {
      res = await agent.request({
        origin: url.origin,
        path: `${url.pathname}${url.search}`,
        method: req.method ?? 'GET',
        headers: { 'user-agent': VENDOR_USER_AGENT, accept: 'application/json', ...req.headers },
        body: req.body,
        signal,
      });
    } catch (err) {
      usage.errors += 1;
      const code = (err as NodeJS.ErrnoException).code ?? (err as Error).name;
      // The guard's refusal is final; its failure to resolve is the vendor being unreachable.
      const guard = findNetError(err);
      if (guard?.kind === 'blocked_address' || guard?.kind === 'dns')
        throw new VendorError(guard.kind === 'dns' ? 'unavailable' : 'blocked_address', guard.message);
      if (options.signal.aborted) throw new VendorError('unavailable', 'collection was stopped');
      throw new VendorError('unavailable', `${url.host}: request failed (${code || 'network error'})`);
    }
    let body: Buffer;
    try {
      body = (await readBody(res.body, { maxBytes: MAX_RESPONSE_BYTES, overflow: 'fail' })).bytes;
    } catch (err) {
      usage.errors += 1;
      if (err instanceof BodyTooLargeError)
        throw new VendorError('invalid_response', `${url.host}: the answer exceeds ${MAX_RESPONSE_BYTES} bytes`);
      throw new VendorError('unavailable', `${url.host}: the answer was cut off`);
    }
    usage.bytes += body.length;
    const text = body.toString('utf8');
    const headers = res.headers;
    return {
      status: res.statusCode,
      headers,
      text,
      json<T>() {
        try {
          return JSON.parse(text) as T;
        } catch {
          throw new VendorError(
            'invalid_response',
            `${url.host}: HTTP ${res.statusCode} answer is not JSON: ${short(text, secrets())}`,
            { status: res.statusCode },
          );
        }
      },
      header(name) {
        const v = headers[name.toLowerCase()];
        return Array.isArray(v) ? v[0] : v;
      },
    };
  }

  async function request(req: VendorRequest): Promise<VendorResponse> {
    const url = new URL(String(req.url));
    if (url.protocol !== 'https:' && url.protocol !== 'http:')
      throw new VendorError('config', `${url.protocol} is not an HTTP URL`);
    for (const [k, v] of Object.entries(req.query ?? {})) if (v !== undefined) url.searchParams.set(k, String(v));
    let lastError: VendorError | undefined;
    for (let attempt = 1; attempt <= attempts; attempt++) {
      await wait(notBefore - now());
      let res: VendorResponse;
      try {
        res = await once(req, url);
      } catch (err) {
        if (!(err instanceof VendorError) || err.kind !== 'unavailable' || options.signal.aborted) throw err;
        lastError = err;
        if (attempt < attempts) await wait(policy.delay(attempt));
        continue;
      }
      if (req.accept?.includes(res.status)) return res;
      if (res.status === 429) {
        usage.rateLimited += 1;
        // Without the vendor's figure, the backoff's ceiling: this wait is also reported to the caller.
        const waitMs = waitFromHeaders(res.headers, now()) ?? policy.delay(attempt, undefined, false);
        if (waitMs > options.maxRetryWaitMs || attempt === attempts) {
          throw new VendorError(
            'rate_limited',
            `${url.host}: rate limited (HTTP 429), retry in ${Math.ceil(waitMs / 1000)} s`,
            { status: 429, retryAfterMs: waitMs },
          );
        }
        notBefore = now() + waitMs;
        continue;
      }
      if (res.status >= 500) {
        usage.errors += 1;
        lastError = new VendorError(
          'unavailable',
          `${url.host}: HTTP ${res.status}${res.text ? `: ${short(res.text, secrets())}` : ''}`,
          {
            status: res.status,
            ...(waitFromHeaders(res.headers, now()) !== undefined
              ? { retryAfterMs: waitFromHeaders(res.headers, now()) }
              : {}),
          },
        );
        if (attempt < attempts)
          await wait(Math.min(options.maxRetryWaitMs, policy.delay(attempt, waitFromHeaders(res.headers, now()))));
        continue;
      }
      if (res.status === 401 || res.status === 403) {
        usage.errors += 1;
        throw new VendorError(
          'auth',
          `${url.host}: HTTP ${res.status} (credentials refused)${res.text ? `: ${short(res.text, secrets())}` : ''}`,
          { status: res.status },
        );
      }
      if (res.status >= 400 || res.status < 200 || res.status >= 300) {
        usage.errors += 1;
        throw new VendorError(
          'bad_request',
          `${url.host}: HTTP ${res.status}${res.text ? `: ${short(res.text, secrets())}` : ''}`,
          { status: res.status },
        );
      }
      if (quotaSpent(res.headers)) {
        const waitMs = waitFromHeaders(res.headers, now());
        if (waitMs !== undefined) notBefore = now() + Math.min(waitMs, options.maxRetryWaitMs);
      }
      return res;
    }
    throw lastError ?? new VendorError('unavailable', `${url.host}: no answer`);
  }

  return {
    request,
    usage,
    close: () => agent.close(),
  };
}

/** A token cache shared by every cycle of a process, keyed by integration and purpose. */
export function createTokenCache(now: () => number = Date.now): {
  scoped(prefix: string): TokenCache;
} {
  const tokens = new Map<string, { token: string; expiresAt: number }>();
  const inflight = new Map<string, Promise<string>>();
  return {
    scoped(prefix) {
      return {
        async get(key, fetch) {
          const k = `${prefix}:${key}`;
          const hit = tokens.get(k);
          // A minute of margin: a token must not expire between the check and the vendor's.
          if (hit && hit.expiresAt - 60_000 > now()) return hit.token;
          const running = inflight.get(k);
          if (running) return running;
          const p = fetch()
            .then(({ token, expiresInMs }) => {
              tokens.set(k, { token, expiresAt: now() + expiresInMs });
              return token;
            })
            .finally(() => inflight.delete(k));
          inflight.set(k, p);
          return p;
        },
        invalidate(key) {
          tokens.delete(`${prefix}:${key}`);
        },
      };
    },
  };
}
