// CORS per the contract: local development origins by default, a setting otherwise, and
// the custom headers exposed so scripts on an allowed origin can read them.
import type { FastifyCorsOptions } from '@fastify/cors';
import { RATE_LIMIT_HEADER_NAMES } from '../ratelimit/headers.js';

export const EXPOSED_HEADERS = [
  'X-Total-Count',
  'X-Page',
  'X-Size',
  'X-Correlation-Id',
  'Retry-After',
  'WWW-Authenticate',
  ...RATE_LIMIT_HEADER_NAMES,
];

/** `http://localhost:*` matches any port; `*` matches any origin. */
export function originMatcher(patterns: readonly string[]): (origin: string) => boolean {
  if (patterns.includes('*')) return () => true;
  const exact = new Set<string>();
  const anyPort: string[] = [];
  for (const p of patterns) {
    if (p.endsWith(':*')) anyPort.push(p.slice(0, -2));
    else exact.add(p.replace(/\/$/, ''));
  }
  return (origin) => {
    if (exact.has(origin)) return true;
    return anyPort.some(
      (base) => origin === base || (origin.startsWith(`${base}:`) && /^\d{1,5}$/.test(origin.slice(base.length + 1))),
    );
  };
}

export function corsOptions(patterns: readonly string[]): FastifyCorsOptions {
  const allowed = originMatcher(patterns);
  return {
    origin: (origin, cb) => cb(null, origin === undefined ? false : allowed(origin)),
    credentials: true,
    methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
    allowedHeaders: ['Authorization', 'Content-Type', 'Content-Encoding', 'X-Correlation-Id', 'X-Ingest-Token'],
    exposedHeaders: EXPOSED_HEADERS,
    maxAge: 600,
  };
}
