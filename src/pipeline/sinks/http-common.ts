// What the HTTP-family sinks (webhook, Splunk HEC, Elasticsearch, OTLP) share: one guarded pool per
// sink (platform/net/http.ts), HTTP status and NetError → DeliveryError mapping, gzip, and the
// timing/catching wrapper of test(), the sink's lazily built pool and its closing (httpSink).
import { promisify } from 'node:util';
import { gzip as gzipCb, constants as zlibConstants } from 'node:zlib';
import { Type } from 'typebox';
import type { Pool } from 'undici';
import { STATUS_CODES, type IncomingHttpHeaders } from 'node:http';
import { redactAndCut, type Redactor } from '../../core/redaction.js';
import { timeoutError as netTimeout, toNetError } from '../../platform/net/errors.js';
import { createGuardedPool, readBody } from '../../platform/net/http.js';
import { parseRetryAfter } from '../../platform/net/retry.js';
import {
  DeliveryError,
  deliveryErrorIn,
  fromNetError,
  type Sink,
  type SinkBatch,
  type SinkContext,
  type SinkResult,
  type TestResult,
} from './types.js';

const gzipAsync = promisify(gzipCb);

export const USER_AGENT = 'Weir-Delivery/1';

/** The `url` config field of an HTTP-family type: an http:// or https:// URL. */
export function HttpUrlField(description: string) {
  return Type.String({
    pattern: '^[Hh][Tt][Tt][Pp][Ss]?://',
    errorMessage: { pattern: 'must be an http:// or https:// URL' },
    maxLength: 2048,
    description,
  });
}

/** Config fields every HTTP-family type accepts for TLS. */
export const TlsConfigFields = {
  tls_reject_unauthorized: Type.Boolean({
    default: true,
    description:
      'Verify the server certificate (turn off only for a test server with a self-signed certificate; prefer tls_ca)',
  }),
  tls_ca: Type.Optional(
    Type.String({
      maxLength: 65_536,
      description:
        'PEM certificate(s) of the authority that signed the server certificate, when it is not a public one',
    }),
  ),
};

/** Header names users may not set: the transport and the sink own them. */
const RESERVED_HEADERS = new Set([
  'host',
  'content-length',
  'content-encoding',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'upgrade',
  'te',
  'trailer',
  'expect',
]);
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/** Parses and checks a destination URL; DeliveryError('config') when it cannot work. */
export function parseHttpUrl(raw: unknown, field = 'url'): URL {
  if (typeof raw !== 'string' || raw === '') throw new DeliveryError('config', `${field} is required`);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new DeliveryError('config', `${field} is not a valid URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new DeliveryError('config', `${field} must be http:// or https://`);
  // Credentials belong in the encrypted credential, never in a URL that is shown and logged.
  if (url.username || url.password)
    throw new DeliveryError('config', `${field} must not contain a user name or password: use the credential`);
  url.hash = '';
  return url;
}

/** Checks a headers map from config or credential; returns it lower-cased. */
export function checkHeaders(raw: unknown, field: string): Record<string, string> {
  if (raw === undefined || raw === null) return {};
  if (typeof raw !== 'object' || Array.isArray(raw))
    throw new DeliveryError('config', `${field} must be an object of header names to values`);
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(raw as Record<string, unknown>)) {
    const lower = name.toLowerCase();
    if (!HEADER_NAME.test(name)) throw new DeliveryError('config', `${field}: "${name}" is not a valid header name`);
    if (RESERVED_HEADERS.has(lower) || lower.startsWith('x-weir-'))
      throw new DeliveryError('config', `${field}: header ${name} is set by Weir and cannot be overridden`);
    if (typeof value !== 'string' || /[\r\n\0]/.test(value))
      throw new DeliveryError('config', `${field}: the value of ${name} must be a single-line string`);
    out[lower] = value;
  }
  return out;
}

export interface HttpPoolOptions {
  rejectUnauthorized?: boolean;
  ca?: string;
  /** Most sockets to the origin (the lane's concurrency bounds real use). */
  connections?: number;
}

/** The pool options of TlsConfigFields as the config holds them. */
export function tlsOptions(config: Record<string, unknown>): HttpPoolOptions {
  return {
    rejectUnauthorized: config.tls_reject_unauthorized !== false,
    ca: typeof config.tls_ca === 'string' && config.tls_ca ? config.tls_ca : undefined,
  };
}

/** A keep-alive pool to the URL's origin, every connection through the SSRF guard (platform/net). */
export function createHttpPool(ctx: SinkContext, url: URL, options: HttpPoolOptions = {}): Pool {
  return createGuardedPool(url.origin, ctx.net, {
    rejectUnauthorized: options.rejectUnauthorized ?? true,
    ...(options.ca ? { ca: options.ca } : {}),
    connections: options.connections ?? 64,
  });
}

export interface HttpAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  /** The body as text, cut at maxBytes. */
  text: string;
  /** The same body as received, for binary answers (OTLP's protobuf). */
  bytes?: Buffer;
}

export interface HttpCall {
  method: 'GET' | 'HEAD' | 'OPTIONS' | 'POST' | 'PUT';
  path: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  signal: AbortSignal;
  /** Most response bytes kept (default 64 KiB); the rest is discarded. */
  maxBytes?: number;
}

/** One request; transport failures come back as DeliveryError, HTTP statuses as answers. */
export async function httpRequest(pool: Pool, call: HttpCall): Promise<HttpAnswer> {
  if (call.signal.aborted) throw timeoutError();
  try {
    const res = await pool.request({
      method: call.method,
      path: call.path,
      headers: { 'user-agent': USER_AGENT, ...call.headers },
      body: call.body,
      signal: call.signal,
    });
    const { bytes } = await readBody(res.body, { maxBytes: call.maxBytes ?? 65_536, overflow: 'cut' });
    const text = bytes.toString('utf8');
    return { status: res.statusCode, headers: res.headers, text, bytes };
  } catch (err) {
    throw transportError(err, call.signal);
  }
}

function timeoutError(cause?: unknown): DeliveryError {
  return fromNetError(netTimeout(cause));
}

/** Maps a network-level failure to a DeliveryError whose message names no secret. */
export function transportError(err: unknown, signal?: AbortSignal): DeliveryError {
  if (signal?.aborted) return timeoutError(err);
  return deliveryErrorIn(err) ?? fromNetError(toNetError(err));
}

/**
 * The start of a server's answer, on one line, with the destination's secrets removed. The
 * redaction runs on the answer as received (a secret may span lines), before the cut.
 */
export function shortAnswer(text: string, redact: Redactor): string {
  return redactAndCut((t) => redact(t).replace(/\s+/g, ' ').trim(), text, 201);
}

/** `302 Found`: the status with its reason phrase, as a person reads it. */
export function statusLine(status: number): string {
  const reason = STATUS_CODES[status];
  return reason ? `${status} ${reason}` : String(status);
}

/**
 * Where a redirect points, for a message: the Location without its query (which may carry a
 * token) and redacted, or undefined when the answer has none.
 */
export function redirectTarget(headers: IncomingHttpHeaders, redact: Redactor): string | undefined {
  const raw = Array.isArray(headers.location) ? headers.location[0] : headers.location;
  if (!raw) return undefined;
  const bare = raw.split(/[?#]/)[0]!.replace(/\/\/[^/@]*@/, '//');
  return redactAndCut(redact, bare, 200);
}

/** "answered 302 Found (redirect to https://...): deliveries do not follow redirects; set the final URL". */
export function redirectMessage(answer: HttpAnswer, redact: Redactor): string {
  const target = redirectTarget(answer.headers, redact);
  return `${statusLine(answer.status)}${target ? ` (redirect to ${target})` : ''}: deliveries do not follow redirects; set the final URL`;
}

/** The DeliveryError for a non-2xx answer (the brief's mapping, shared by every HTTP sink). */
export function statusError(answer: HttpAnswer, redact: Redactor, what = 'HTTP'): DeliveryError {
  const { status } = answer;
  const said = shortAnswer(answer.text, redact);
  const message = `${what} ${status}${said ? `: ${said}` : ''}`;
  const retryAfterMs = parseRetryAfter(answer.headers['retry-after']);
  if (status === 401 || status === 403) return new DeliveryError('auth', message, { statusCode: status });
  if (status === 429) return new DeliveryError('rate_limited', message, { statusCode: status, retryAfterMs });
  if (status === 408) return new DeliveryError('http_4xx', message, { statusCode: status, retryable: true });
  if (status >= 500) return new DeliveryError('http_5xx', message, { statusCode: status, retryAfterMs });
  if (status >= 400) return new DeliveryError('http_4xx', message, { statusCode: status });
  // Redirects are not followed: a delivery must reach the configured address, not wherever it points.
  if (status >= 300)
    return new DeliveryError('config', `${what} ${redirectMessage(answer, redact)}`, { statusCode: status });
  return new DeliveryError('protocol', message, { statusCode: status });
}

/**
 * The verdict on a connection test's answer to a safe request (HEAD, OPTIONS or GET) to the
 * delivery URL. A delivery succeeds on 2xx only, so the test does too, with two readings of
 * what a safe request can prove: 405 and 501 say the resource exists and takes other
 * methods (deliveries POST or PUT), so they count as reachable; any redirect, auth refusal,
 * other 4xx or 5xx is a failure that says what the server answered.
 */
export function probeVerdict(
  answer: HttpAnswer,
  request: string,
  redact: Redactor,
): { ok: boolean; detail: string; error_kind?: TestResult['error_kind'] } {
  const { status } = answer;
  const said = `${request} answered ${statusLine(status)}`;
  if (status >= 200 && status < 300) return { ok: true, detail: said };
  if (status === 405 || status === 501)
    return { ok: true, detail: `${said}: the address exists and takes other methods (deliveries use POST or PUT)` };
  if (status >= 300 && status < 400)
    return { ok: false, detail: `${request} answered ${redirectMessage(answer, redact)}`, error_kind: 'config' };
  if (status === 401 || status === 403)
    return { ok: false, detail: `${said}: the credential was not accepted`, error_kind: 'auth' };
  const e = statusError(answer, redact);
  const server = shortAnswer(answer.text, redact);
  const hint = status === 404 ? ': nothing at this path (check the URL)' : '';
  return { ok: false, detail: `${said}${hint}${server ? ` (${server})` : ''}`, error_kind: e.kind };
}

/** gzip at a low level: delivery is throughput-bound, and levels 1-3 keep most of the gain. */
export function gzip(body: string | Buffer): Promise<Buffer> {
  return gzipAsync(body, { level: 2, strategy: zlibConstants.Z_DEFAULT_STRATEGY, chunkSize: 1 << 20 });
}

/** Runs a connection check: measures it and turns any failure into ok false (test() never throws). */
export async function timedTest(
  check: () => Promise<CheckResult>,
  signal: AbortSignal,
  redact: Redactor,
): Promise<TestResult> {
  const started = performance.now();
  const latency = () => Math.round(performance.now() - started);
  try {
    const r = await check();
    return { ...r, detail: redactAndCut(redact, r.detail, 1000), latency_ms: latency() };
  } catch (err) {
    const e = err instanceof DeliveryError ? err : transportError(err, signal);
    return { ok: false, detail: redactAndCut(redact, e.message, 1000), latency_ms: latency(), error_kind: e.kind };
  }
}

/** Closes a pool, waiting briefly for requests in flight, then cutting them. */
export async function closePool(pool: Pool): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const graceful = pool.close().then(
    () => true,
    () => true,
  );
  const late = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), 2_000);
  });
  const done = await Promise.race([graceful, late]);
  clearTimeout(timer);
  if (!done) await pool.destroy().catch(() => undefined);
}

/** Lazily built resource: a config error surfaces on each use instead of at construction. */
export interface Lazy<T> {
  (): T;
  /** The value when it was built without error (close() must not build a pool just to close it). */
  peek(): T | undefined;
}

export function lazy<T>(build: () => T): Lazy<T> {
  let value: T | undefined;
  let error: unknown;
  let built = false;
  const get = (() => {
    if (!built) {
      try {
        value = build();
      } catch (err) {
        error = err;
      }
      built = true;
    }
    if (error) throw error;
    return value as T;
  }) as Lazy<T>;
  get.peek = () => (built && !error ? value : undefined);
  return get;
}

/** What an HTTP sink's connection check returns (timedTest measures and catches it). */
export type CheckResult = { ok: boolean; detail: string; error_kind?: TestResult['error_kind'] };

/**
 * An HTTP-family sink around its prepared settings and pool: built on first use (a config
 * error surfaces on each send and test), the connection check measured by timedTest, the pool
 * closed on close() when it was ever built.
 */
export function httpSink<P extends { pool: Pool }>(
  ctx: SinkContext,
  prepare: (ctx: SinkContext) => P,
  parts: {
    send(p: P, batch: SinkBatch, signal: AbortSignal): Promise<SinkResult>;
    check(p: P, signal: AbortSignal): Promise<CheckResult>;
  },
): Sink {
  const prepared = lazy(() => prepare(ctx));
  return {
    async send(batch, signal) {
      return parts.send(prepared(), batch, signal);
    },
    test: (signal) => timedTest(() => parts.check(prepared(), signal), signal, ctx.redact),
    async close() {
      const p = prepared.peek();
      if (p) await closePool(p.pool);
    },
  };
}
