// The console (web/, built to dist/web by `npm run build`) served by the api role at `/`:
// its files with long-lived caching (hashed names) and pre-compressed variants, and
// index.html for the console's own routes (the SPA fallback), with a Content-Security-Policy
// that fits the built app: scripts, styles and API calls from this origin only. Nothing
// under /api, the health probes or /metrics is touched: the fallback answers only browser
// navigations (Accept: text/html) to paths the API does not serve.
import { existsSync } from 'node:fs';
import path from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

export const CONSOLE_SECURITY_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'content-security-policy':
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; connect-src 'self'; " +
    "object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'",
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
  'permissions-policy': 'camera=(), microphone=(), geolocation=(), payment=()',
});

const RESERVED = ['/livez', '/readyz', '/healthz', '/metrics'];

/** Whether a request that no route answered is a navigation to one of the console's pages. */
export function isConsolePage(request: FastifyRequest): boolean {
  if (request.method !== 'GET' && request.method !== 'HEAD') return false;
  const pathname = request.url.split('?')[0] ?? '/';
  if (pathname === '/api' || pathname.startsWith('/api/') || RESERVED.includes(pathname)) return false;
  // A missing file (an old hashed asset) is a 404, not the page.
  if (path.posix.basename(pathname).includes('.')) return false;
  return String(request.headers.accept ?? '').includes('text/html');
}

export const CONSOLE_MISSING =
  'The console is not built on this server: run `npm run build` (or set WEIR_CONSOLE_DIR). The API is at /api, its document at /api/openapi.json.';

/** What the not-found handler needs of the console: which requests are its pages, and how to answer them. */
export interface ConsoleFallback {
  isPage(request: FastifyRequest): boolean;
  /** index.html; unset while the console is not (or not yet) registered. */
  page?: (reply: FastifyReply) => FastifyReply;
  /** Why there is no console (its build is missing), said to a browser asking for a page. */
  missing?: string;
}

export interface ConsoleSite {
  readonly dir: string;
  /** Answers index.html (the SPA fallback). */
  page(reply: FastifyReply): FastifyReply;
}

/** The console when its build is there; undefined (with the reason) otherwise. */
export function locateConsole(dir: string | undefined): { site?: string; missing?: string } {
  if (!dir) return {};
  return existsSync(path.join(dir, 'index.html')) ? { site: dir } : { missing: dir };
}

export async function registerConsole(app: FastifyInstance, dir: string): Promise<ConsoleSite> {
  await app.register(fastifyStatic, {
    root: dir,
    prefix: '/',
    // One route per built file, registered now: every other path stays with the API's
    // not-found handling (and the SPA fallback there).
    wildcard: false,
    preCompressed: true,
    index: false,
    // Hashed asset names change with their content: cached for a year; index.html never.
    cacheControl: false,
    setHeaders(res, file) {
      for (const [name, value] of Object.entries(CONSOLE_SECURITY_HEADERS)) res.setHeader(name, value);
      res.setHeader(
        'cache-control',
        file.includes(`${path.sep}assets${path.sep}`) ? 'public, max-age=31536000, immutable' : 'no-cache',
      );
    },
  });
  app.get('/', { schema: { hide: true } }, (_req, reply) => reply.sendFile('index.html'));
  return { dir, page: (reply) => reply.sendFile('index.html') };
}
