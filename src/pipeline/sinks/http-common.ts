// What the HTTP-family sinks (webhook, Splunk HEC, Elasticsearch) share: one undici pool per
// sink whose every connection passes the SSRF guard, HTTP status → DeliveryError mapping,
// Retry-After parsing, gzip, and the timing/catching wrapper of test().
import { isIP } from 'node:net';
import { promisify } from 'node:util';
import { gzip as gzipCb, constants as zlibConstants } from 'node:zlib';
import { Type } from 'typebox';
import { buildConnector, Pool } from 'undici';
import { STATUS_CODES, type IncomingHttpHeaders } from 'node:http';
import { redactAndCut, type Redactor } from '../../core/redaction.js';
import { DeliveryError, type SinkContext, type TestResult } from './types.js';

const gzipAsync = promisify(gzipCb);

export const USER_AGENT = 'Weir-Delivery/1';

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

/**
 * A keep-alive pool to the URL's origin. Names resolve through the SSRF guard's lookup; a
 * literal address never reaches a lookup (net.connect skips it), so it is checked here.
 */
export function createHttpPool(ctx: SinkContext, url: URL, options: HttpPoolOptions = {}): Pool {
  const base = buildConnector({
    lookup: ctx.net.lookup,
    rejectUnauthorized: options.rejectUnauthorized ?? true,
    ...(options.ca ? { ca: options.ca } : {}),
    timeout: 10_000,
  });
  const connect: buildConnector.connector = (opts, callback) => {
    const host = opts.hostname.startsWith('[') ? opts.hostname.slice(1, -1) : opts.hostname;
    if (isIP(host)) {
      try {
        ctx.net.checkAddress(host);
      } catch (err) {
        callback(err as Error, null);
        return;
      }
    }
    base(opts, callback);
  };
  return new Pool(url.origin, { connect, connections: options.connections ?? 64, keepAliveTimeout: 4_000 });
}

export interface HttpAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  /** The body as text, cut at maxBytes. */
  text: string;
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
    const limit = call.maxBytes ?? 65_536;
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of res.body as AsyncIterable<Buffer>) {
      if (size < limit) chunks.push(chunk);
      size += chunk.length;
    }
    const text = Buffer.concat(chunks).subarray(0, limit).toString('utf8');
    return { status: res.statusCode, headers: res.headers, text };
  } catch (err) {
    throw transportError(err, call.signal);
  }
}

function timeoutError(cause?: unknown): DeliveryError {
  return new DeliveryError('timeout', 'no answer within the time limit', { cause });
}

const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ECONNABORTED',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
  'UND_ERR_DESTROYED',
]);
const TIMEOUT_CODES = new Set([
  'ETIMEDOUT',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
]);
const DNS_CODES = new Set(['ENOTFOUND', 'EAI_AGAIN', 'EAI_FAIL', 'EAI_NONAME']);

/** Maps a network-level failure to a DeliveryError whose message names no secret. */
export function transportError(err: unknown, signal?: AbortSignal): DeliveryError {
  if (signal?.aborted) return timeoutError(err);
  for (let e: unknown = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    if (e instanceof DeliveryError) return e;
  }
  const e = err as NodeJS.ErrnoException | undefined;
  const code = e?.code ?? (e?.cause as NodeJS.ErrnoException | undefined)?.code ?? '';
  if (e?.name === 'AbortError') return timeoutError(err);
  if (TIMEOUT_CODES.has(code)) return timeoutError(err);
  if (DNS_CODES.has(code)) return new DeliveryError('dns', `cannot resolve the host (${code})`, { cause: err });
  if (CONNECTION_CODES.has(code)) return new DeliveryError('connection', `connection failed (${code})`, { cause: err });
  if (
    /^(ERR_TLS|ERR_SSL|CERT_|UNABLE_TO|DEPTH_ZERO|SELF_SIGNED|HOSTNAME_MISMATCH|ERR_OSSL)/.test(code) ||
    /certificate|ssl|tls/i.test(e?.message ?? '')
  ) {
    return new DeliveryError('tls', `TLS handshake failed (${code || 'certificate not accepted'})`, { cause: err });
  }
  return new DeliveryError('connection', `request failed (${code || e?.name || 'unknown error'})`, { cause: err });
}

/** Milliseconds to wait from a Retry-After value (delta seconds or HTTP date); undefined when absent or unreadable. */
export function parseRetryAfter(value: string | string[] | undefined, now = Date.now()): number | undefined {
  const v = (Array.isArray(value) ? value[0] : value)?.trim();
  if (!v) return undefined;
  if (/^\d+$/.test(v)) return Math.min(Number(v), 86_400) * 1000;
  // An HTTP date names a weekday and month; Date.parse alone would read "-5" as a year.
  const at = /[a-z]{3}/i.test(v) ? Date.parse(v) : NaN;
  if (Number.isNaN(at)) return undefined;
  return Math.min(Math.max(0, at - now), 86_400_000);
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
  check: () => Promise<{ ok: boolean; detail: string; error_kind?: TestResult['error_kind'] }>,
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
