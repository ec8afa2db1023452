// What the HTTP lookup sources and the indicator feeds share on the way out: a guarded pool
// and a capped body read (both platform/net/http.ts), the separate credential header, and
// issue lists.
import type { Pool } from 'undici';
import { BodyTooLargeError, readBody, type Guard } from '../../platform/net/http.js';
import { checkHeaders, transportError } from '../sinks/http-common.js';
import { DeliveryError } from '../sinks/types.js';

export const ENRICH_USER_AGENT = 'Weir-Enrichment/1';

export interface Issue {
  at: string;
  message: string;
}

/** The secret header of a source or feed, given decrypted; it never appears in a stat, error or log. */
export interface HeaderCredential {
  header: string;
  value: string;
}

/** The SSRF guard's lookup (NetPolicy.lookup) and, optionally, its checkAddress. */
export type GuardDeps = Guard;

/** Headers that would carry a secret: they belong in the credential, which is encrypted and never shown. */
const SECRET_HEADERS = new Set([
  'authorization',
  'proxy-authorization',
  'cookie',
  'x-api-key',
  'api-key',
  'apikey',
  'x-auth-token',
]);

export function headerIssues(raw: unknown, at: string): Issue[] {
  try {
    const headers = checkHeaders(raw, at);
    return Object.keys(headers)
      .filter((h) => SECRET_HEADERS.has(h))
      .map((h) => ({ at: `${at}.${h}`, message: 'carries a secret: put it in the credential instead' }));
  } catch (err) {
    return [{ at, message: (err as Error).message.replace(`${at}: `, '') }];
  }
}

export function credentialIssues(raw: unknown, at = 'credential'): Issue[] {
  if (raw === undefined || raw === null) return [];
  if (typeof raw !== 'object' || Array.isArray(raw)) return [{ at, message: 'must be {header, value}' }];
  const { header, value } = raw as Record<string, unknown>;
  if (typeof header !== 'string' || header === '') return [{ at: `${at}.header`, message: 'is required' }];
  if (typeof value !== 'string' || value === '') return [{ at: `${at}.value`, message: 'is required' }];
  // The same rules as configured headers (name shape, reserved names, one line), without
  // quoting the value in any message.
  return headerIssues({ [header]: 'x' }, `${at}.header`)
    .filter((i) => !i.message.startsWith('carries a secret'))
    .concat(/[\r\n\0]/.test(value) ? [{ at: `${at}.value`, message: 'must be a single line' }] : []);
}

/** Config headers plus the credential header (which wins), lower-cased. */
export function requestHeaders(
  configured: Record<string, string> | undefined,
  credential: HeaderCredential | null | undefined,
): Record<string, string> {
  const out: Record<string, string> = { 'user-agent': ENRICH_USER_AGENT };
  for (const [k, v] of Object.entries(configured ?? {})) out[k.toLowerCase()] = v;
  if (credential) out[credential.header.toLowerCase()] = credential.value;
  return out;
}

export function checkUrlShape(url: URL, at: string): Issue[] {
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    return [{ at, message: 'must be an http:// or https:// URL' }];
  // Credentials belong in the encrypted credential, never in a URL that is shown and logged.
  if (url.username || url.password)
    return [{ at, message: 'must not contain a user name or password: use the credential' }];
  return [];
}

export interface Fetched {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/**
 * One request with a deadline; the body is read up to maxBytes and the request aborted past
 * it (TooLargeError). Transport failures come back as DeliveryError
 * with messages that name no secret.
 */
export async function fetchCapped(
  pool: Pool,
  call: {
    method: 'GET' | 'POST';
    path: string;
    headers: Record<string, string>;
    body?: string;
    timeoutMs: number;
    maxBytes: number;
  },
): Promise<Fetched> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), call.timeoutMs);
  try {
    const res = await pool.request({
      method: call.method,
      path: call.path,
      headers: call.headers,
      body: call.body,
      signal: controller.signal,
    });
    const { bytes } = await readBody(res.body, {
      maxBytes: call.maxBytes,
      overflow: 'fail',
      contentLength: res.headers['content-length'],
    });
    return { status: res.statusCode, headers: res.headers, body: bytes };
  } catch (err) {
    if (err instanceof DeliveryError) throw err;
    if (err instanceof BodyTooLargeError) throw new TooLargeError(err.maxBytes);
    throw transportError(err, controller.signal);
  } finally {
    clearTimeout(timer);
  }
}

/** The answer passed the byte cap; the download was aborted there. */
export class TooLargeError extends DeliveryError {
  constructor(readonly maxBytes: number) {
    super('protocol', `the answer is larger than the limit of ${maxBytes} bytes`);
  }
}

/** A failure as one line that names no secret: transport errors are built from codes only. */
export function failureText(err: unknown): string {
  if (err instanceof DeliveryError) return err.message;
  return transportError(err).message;
}

/** A positive integer setting in [min, max], or an issue. */
export function intIssue(config: Record<string, unknown>, field: string, min: number, max: number): Issue[] {
  const v = config[field];
  if (v === undefined) return [];
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max)
    return [{ at: field, message: `must be a whole number from ${min} to ${max}` }];
  return [];
}
