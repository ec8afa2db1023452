import { createHash, createHmac } from 'node:crypto';
import type { Pool } from 'undici';
import {
  checkHeaders,
  closePool,
  createHttpPool,
  gzip,
  httpRequest,
  lazy,
  parseHttpUrl,
  probeVerdict,
  secretValues,
  statusError,
  timedTest,
  type HttpAnswer,
} from '../http-common.js';
import { DeliveryError, type Sink, type SinkBatch, type SinkContext, type SinkResult } from '../types.js';

/** Stable for a resend of the same events: receivers deduplicate on it. */
export function batchId(ids: readonly string[]): string {
  return createHash('sha256').update(ids.join(',')).digest('hex').slice(0, 32);
}

/** The X-Weir-Signature value for a body as sent. */
export function signature(secret: string, timestamp: string, body: string | Buffer): string {
  return `sha256=${createHmac('sha256', secret).update(`${timestamp}.`).update(body).digest('hex')}`;
}

export function webhookBody(lines: readonly string[], format: 'ndjson' | 'json'): string {
  return format === 'json' ? `[${lines.join(',')}]` : `${lines.join('\n')}\n`;
}

interface Prepared {
  pool: Pool;
  path: string;
  method: 'POST' | 'PUT';
  format: 'ndjson' | 'json';
  gzip: boolean;
  /** Plain + secret + authorization headers, built once. */
  headers: Record<string, string>;
  hmacSecret?: string;
  display: string;
}

/** The secret headers map may reach us as an object or as its JSON text (credentials are string maps). */
function secretHeaders(raw: unknown): Record<string, string> {
  if (typeof raw === 'string') {
    try {
      return checkHeaders(JSON.parse(raw), 'secret_headers');
    } catch (err) {
      if (err instanceof DeliveryError) throw err;
      throw new DeliveryError('config', 'secret_headers must be an object of header names to values');
    }
  }
  return checkHeaders(raw, 'secret_headers');
}

function prepare(ctx: SinkContext): Prepared {
  const c = ctx.config;
  const url = parseHttpUrl(c.url);
  const cred = (ctx.credential ?? {}) as Record<string, unknown>;
  const headers: Record<string, string> = { ...checkHeaders(c.headers, 'headers'), ...secretHeaders(cred.secret_headers) };
  if (typeof cred.bearer_token === 'string' && cred.bearer_token) headers.authorization = `Bearer ${cred.bearer_token}`;
  else if (typeof cred.basic_username === 'string' && cred.basic_username) {
    headers.authorization = `Basic ${Buffer.from(`${cred.basic_username}:${typeof cred.basic_password === 'string' ? cred.basic_password : ''}`).toString('base64')}`;
  }
  const format = c.format === 'json' ? 'json' : 'ndjson';
  return {
    pool: createHttpPool(ctx, url, { rejectUnauthorized: c.tls_reject_unauthorized !== false, ca: typeof c.tls_ca === 'string' ? c.tls_ca : undefined }),
    path: `${url.pathname}${url.search}`,
    method: c.method === 'PUT' ? 'PUT' : 'POST',
    format,
    gzip: c.gzip === true,
    headers,
    hmacSecret: typeof cred.hmac_secret === 'string' && cred.hmac_secret ? cred.hmac_secret : undefined,
    display: `${url.origin}${url.pathname}`,
  };
}

/** All secret strings, the nested secret headers and derived authorization values included. */
function secretsOf(ctx: SinkContext): string[] {
  const out = secretValues(ctx.credential);
  const cred = (ctx.credential ?? {}) as Record<string, unknown>;
  const sh = cred.secret_headers;
  if (sh && typeof sh === 'object') for (const v of Object.values(sh)) if (typeof v === 'string') out.push(v);
  if (typeof cred.basic_username === 'string') {
    out.push(Buffer.from(`${cred.basic_username}:${typeof cred.basic_password === 'string' ? cred.basic_password : ''}`).toString('base64'));
  }
  return out;
}

function signedHeaders(p: Prepared, body: string | Buffer, extra: Record<string, string>): Record<string, string> {
  const headers = { ...p.headers, ...extra };
  if (p.hmacSecret) {
    const ts = String(Math.floor(Date.now() / 1000));
    headers['x-weir-timestamp'] = ts;
    headers['x-weir-signature'] = signature(p.hmacSecret, ts, body);
  }
  return headers;
}

export function createWebhookSink(ctx: SinkContext): Sink {
  const prepared = lazy(() => prepare(ctx));
  const secrets = secretsOf(ctx);

  return {
    async send(batch: SinkBatch, signal: AbortSignal): Promise<SinkResult> {
      const p = prepared();
      const text = webhookBody(batch.lines, p.format);
      const body = p.gzip ? await gzip(text) : text;
      const extra: Record<string, string> = {
        'content-type': p.format === 'json' ? 'application/json' : 'application/x-ndjson',
        'x-weir-batch-id': batchId(batch.ids),
        'x-weir-event-count': String(batch.lines.length),
      };
      if (p.gzip) extra['content-encoding'] = 'gzip';
      const answer = await httpRequest(p.pool, { method: p.method, path: p.path, headers: signedHeaders(p, body, extra), body, signal, maxBytes: 4096 });
      if (answer.status >= 200 && answer.status < 300) return {};
      throw statusError(answer, secrets);
    },

    test(signal: AbortSignal) {
      return timedTest(
        async () => {
          const p = prepared();
          let answer: HttpAnswer | undefined;
          let method: 'HEAD' | 'OPTIONS' | 'GET' = 'HEAD';
          // Servers that only accept POST answer HEAD with 405 or 501: try the other safe methods.
          for (const m of ['HEAD', 'OPTIONS', 'GET'] as const) {
            method = m;
            answer = await httpRequest(p.pool, { method: m, path: p.path, headers: signedHeaders(p, '', {}), signal, maxBytes: 4096 });
            if (answer.status !== 405 && answer.status !== 501) break;
          }
          return probeVerdict(answer as HttpAnswer, `${method} ${p.display}`, secrets);
        },
        signal,
        secrets,
      );
    },

    async close() {
      const p = prepared.peek();
      if (p) await closePool(p.pool);
    },
  };
}
