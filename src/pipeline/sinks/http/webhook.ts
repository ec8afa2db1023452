import { createHash, createHmac } from 'node:crypto';
import type { Pool } from 'undici';
import {
  checkHeaders,
  createHttpPool,
  gzip,
  httpRequest,
  httpSink,
  parseHttpUrl,
  probeVerdict,
  statusError,
  tlsOptions,
  type HttpAnswer,
} from '../http-common.js';
import { credentialString } from '../../../core/credentials.js';
import type { Sink, SinkContext } from '../types.js';

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

function prepare(ctx: SinkContext): Prepared {
  const c = ctx.config;
  const url = parseHttpUrl(c.url);
  const cred = ctx.credential;
  const headers: Record<string, string> = {
    ...checkHeaders(c.headers, 'headers'),
    ...checkHeaders(cred?.secret_headers, 'secret_headers'),
  };
  const bearer = credentialString(cred, 'bearer_token');
  const user = credentialString(cred, 'basic_username');
  if (bearer) headers.authorization = `Bearer ${bearer}`;
  else if (user)
    headers.authorization = `Basic ${Buffer.from(`${user}:${credentialString(cred, 'basic_password') ?? ''}`).toString('base64')}`;
  const hmacSecret = credentialString(cred, 'hmac_secret');
  const format = c.format === 'json' ? 'json' : 'ndjson';
  return {
    pool: createHttpPool(ctx, url, tlsOptions(c)),
    path: `${url.pathname}${url.search}`,
    method: c.method === 'PUT' ? 'PUT' : 'POST',
    format,
    gzip: c.gzip === true,
    headers,
    hmacSecret,
    display: `${url.origin}${url.pathname}`,
  };
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
  return httpSink(ctx, prepare, {
    async send(p, batch, signal) {
      const text = webhookBody(batch.lines, p.format);
      const body = p.gzip ? await gzip(text) : text;
      const extra: Record<string, string> = {
        'content-type': p.format === 'json' ? 'application/json' : 'application/x-ndjson',
        'x-weir-batch-id': batchId(batch.ids),
        'x-weir-event-count': String(batch.lines.length),
      };
      if (p.gzip) extra['content-encoding'] = 'gzip';
      const answer = await httpRequest(p.pool, {
        method: p.method,
        path: p.path,
        headers: signedHeaders(p, body, extra),
        body,
        signal,
        maxBytes: 4096,
      });
      if (answer.status >= 200 && answer.status < 300) return {};
      throw statusError(answer, ctx.redact);
    },

    async check(p, signal) {
      let answer: HttpAnswer | undefined;
      let method: 'HEAD' | 'OPTIONS' | 'GET' = 'HEAD';
      // Servers that only accept POST answer HEAD with 405 or 501: try the other safe methods.
      for (const m of ['HEAD', 'OPTIONS', 'GET'] as const) {
        method = m;
        answer = await httpRequest(p.pool, {
          method: m,
          path: p.path,
          headers: signedHeaders(p, '', {}),
          signal,
          maxBytes: 4096,
        });
        if (answer.status !== 405 && answer.status !== 501) break;
      }
      return probeVerdict(answer as HttpAnswer, `${method} ${p.display}`, ctx.redact);
    },
  });
}
