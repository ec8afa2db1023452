// An HTTP lookup source (threat-intel or asset API): one call per key, whose JSON answer
// becomes a Row. The pass never calls it: it reads the answer cache (http-cache.ts), and the
// main thread's fetcher (http-fetcher.ts) calls the API in the background. This file holds
// the config, the one call both of them make, and the connection test.
import type { Pool } from 'undici';
import { createGuardedPool } from '../../platform/net/http.js';
import type { Cell, Row } from './types.js';
import {
  checkUrlShape,
  credentialIssues,
  failureText,
  fetchCapped,
  headerIssues,
  intIssue,
  requestHeaders,
  type GuardDeps,
  type HeaderCredential,
  type Issue,
} from './outbound.js';

export type { HeaderCredential, Issue } from './outbound.js';

export interface HttpSourceConfig {
  /** http(s) URL with a `{key}` placeholder in its path or query (URL-encoded when substituted). */
  url_template: string;
  method: 'GET' | 'POST';
  /** Non-secret headers; the secret one is the credential. */
  headers?: Record<string, string>;
  /** POST body with `{key}` (JSON-escaped when substituted). */
  body_template?: string;
  /** Dotted path into the JSON answer (`data.attributes`, `results.0`); the whole answer without it. */
  result_path?: string;
  timeout_ms?: number;
  rate_limit_per_second?: number;
  cache_ttl_seconds?: number;
  /** How long a 404 or empty answer is remembered. */
  negative_ttl_seconds?: number;
  max_cache_entries?: number;
  concurrency?: number;
}

export type ResolvedHttpSourceConfig = Required<Omit<HttpSourceConfig, 'body_template' | 'result_path'>> &
  Pick<HttpSourceConfig, 'body_template' | 'result_path'>;

export interface HttpSource {
  id: string;
  config: HttpSourceConfig;
  credential?: HeaderCredential | null;
}

export const HTTP_SOURCE_DEFAULTS = {
  timeout_ms: 2_000,
  rate_limit_per_second: 10,
  cache_ttl_seconds: 3_600,
  negative_ttl_seconds: 300,
  max_cache_entries: 100_000,
  concurrency: 4,
} as const;

const KEY = '{key}';
/** A lookup answer is one object; a bigger answer is a misconfigured URL, not a result. */
export const MAX_ANSWER_BYTES = 1 << 20;
const MAX_KEY_LENGTH = 1_024;

/** Where an issue lies (`at`, a config field) and what is wrong with it; empty when the config works. */
export function validateHttpSourceConfig(config: unknown): Issue[] {
  if (!config || typeof config !== 'object' || Array.isArray(config)) return [{ at: '', message: 'must be an object' }];
  const c = config as Record<string, unknown>;
  const issues: Issue[] = [...urlTemplateIssues(c.url_template)];
  if (c.method !== 'GET' && c.method !== 'POST') issues.push({ at: 'method', message: 'must be GET or POST' });
  issues.push(...headerIssues(c.headers, 'headers'));
  if (c.body_template !== undefined) {
    if (typeof c.body_template !== 'string') issues.push({ at: 'body_template', message: 'must be a string' });
    else if (c.method !== 'POST') issues.push({ at: 'body_template', message: 'is only sent with method POST' });
    else if (c.body_template.length > 65_536) issues.push({ at: 'body_template', message: 'must be at most 64 KiB' });
  }
  if (c.result_path !== undefined && (typeof c.result_path !== 'string' || !/^[^.]+(\.[^.]+)*$/.test(c.result_path))) {
    issues.push({ at: 'result_path', message: 'must be a dotted path such as data.attributes' });
  }
  issues.push(
    ...intIssue(c, 'timeout_ms', 100, 30_000),
    ...intIssue(c, 'rate_limit_per_second', 1, 1_000),
    ...intIssue(c, 'cache_ttl_seconds', 1, 30 * 86_400),
    ...intIssue(c, 'negative_ttl_seconds', 1, 30 * 86_400),
    ...intIssue(c, 'max_cache_entries', 1, 1_000_000),
    ...intIssue(c, 'concurrency', 1, 64),
  );
  return issues;
}

function urlTemplateIssues(raw: unknown): Issue[] {
  const at = 'url_template';
  if (typeof raw !== 'string' || raw === '') return [{ at, message: 'is required' }];
  if (!raw.includes(KEY)) return [{ at, message: 'must contain the {key} placeholder' }];
  let a: URL, b: URL;
  try {
    a = new URL(raw.replaceAll(KEY, 'a'));
    b = new URL(raw.replaceAll(KEY, 'b'));
  } catch {
    return [{ at, message: 'is not a valid URL' }];
  }
  const shape = checkUrlShape(a, at);
  if (shape.length) return shape;
  // A key from an event must never choose the host the credential is sent to.
  if (a.origin !== b.origin) return [{ at, message: 'must have {key} in its path or query, not in the host' }];
  if (raw.indexOf('#') >= 0) return [{ at, message: 'must not have a #fragment' }];
  return [];
}

/** The config with its defaults; call after validateHttpSourceConfig found nothing. */
export function resolveHttpSourceConfig(config: HttpSourceConfig): ResolvedHttpSourceConfig {
  return { ...HTTP_SOURCE_DEFAULTS, headers: {}, ...stripUndefined(config) } as ResolvedHttpSourceConfig;
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/** The origin every call of the source goes to (the template's host never depends on a key). */
export function sourceOrigin(config: HttpSourceConfig): string {
  return new URL(config.url_template.replaceAll(KEY, 'k')).origin;
}

/** Whether a key can be asked at all: `.` and `..` would walk the API's paths with the credential. */
export function askableKey(key: string): boolean {
  return key !== '' && key !== '.' && key !== '..' && key.length <= MAX_KEY_LENGTH;
}

/** Path and body of the call for one key. The path is built as text: no URL normalization may drop a segment. */
export function buildCall(config: HttpSourceConfig, key: string): { path: string; body?: string } {
  const url = config.url_template.replaceAll(KEY, encodeURIComponent(key));
  // Cut after the authority of the text itself: the parsed origin may differ in length
  // (a default port dropped, a host lower-cased or punycoded).
  const rest = url.slice(url.indexOf('//') + 2);
  const cut = rest.search(/[/?]/);
  const path = cut < 0 ? '/' : rest[cut] === '?' ? `/${rest.slice(cut)}` : rest.slice(cut);
  if (config.method !== 'POST') return { path };
  const body =
    config.body_template === undefined
      ? undefined
      : config.body_template.replaceAll(KEY, JSON.stringify(key).slice(1, -1));
  return { path, body };
}

export type CallOutcome =
  | { kind: 'hit'; status: number; row: Row }
  | { kind: 'negative'; status: number }
  | { kind: 'error'; status?: number; error: string };

/** One call; never throws (a failure is an outcome whose text names no secret). */
export async function callHttpSource(
  pool: Pool,
  config: ResolvedHttpSourceConfig,
  credential: HeaderCredential | null | undefined,
  key: string,
): Promise<CallOutcome> {
  const { path, body } = buildCall(config, key);
  const headers = requestHeaders(config.headers, credential);
  headers.accept ??= 'application/json';
  if (body !== undefined) headers['content-type'] ??= 'application/json';
  let answer;
  try {
    answer = await fetchCapped(pool, {
      method: config.method,
      path,
      headers,
      body,
      timeoutMs: config.timeout_ms,
      maxBytes: MAX_ANSWER_BYTES,
    });
  } catch (err) {
    return { kind: 'error', error: failureText(err) };
  }
  const { status } = answer;
  if (status === 404 || status === 204) return { kind: 'negative', status };
  // Server answers are not quoted: an API may echo the request, credential included.
  if (status < 200 || status >= 300)
    return {
      kind: 'error',
      status,
      error: `HTTP ${status}${status >= 300 && status < 400 ? ' (redirects are not followed)' : ''}`,
    };
  const text = answer.body.toString('utf8').trim();
  if (text === '') return { kind: 'negative', status };
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { kind: 'error', status, error: 'the answer is not JSON' };
  }
  const row = resultRow(parsed, config.result_path);
  return row ? { kind: 'hit', status, row } : { kind: 'negative', status };
}

/** The Row the answer gives, or null when it says nothing (null, {}, [], a missing result_path). */
export function resultRow(answer: unknown, resultPath?: string): Row | null {
  let at = answer;
  for (const segment of resultPath ? resultPath.split('.') : []) {
    if (at === null || typeof at !== 'object') return null;
    at = (at as Record<string, unknown>)[segment];
  }
  // An API that answers a list for one key: its first element is the result.
  if (Array.isArray(at)) at = at[0];
  if (at === undefined || at === null) return null;
  if (typeof at !== 'object') return { value: at as Cell };
  const row = flattenRow(at as Record<string, unknown>);
  return Object.keys(row).length ? row : null;
}

const MAX_DEPTH = 8;
const MAX_COLUMNS = 256;

/**
 * Scalars only, so that a result fits the table Row shape and OCSF fields: nested objects
 * become dotted keys (`geo.country`); arrays become their JSON text (`["tor","vpn"]`), which
 * keeps elements that contain commas apart and can be read back. Past MAX_DEPTH a subtree is
 * JSON text too; past MAX_COLUMNS the rest is dropped, so a huge answer cannot blow up a row.
 */
export function flattenRow(value: Record<string, unknown>): Row {
  const row: Row = {};
  let columns = 0;
  const walk = (obj: Record<string, unknown>, prefix: string, depth: number): void => {
    for (const [k, v] of Object.entries(obj)) {
      if (columns >= MAX_COLUMNS) return;
      const name = prefix + k;
      if (v !== null && typeof v === 'object' && !Array.isArray(v) && depth < MAX_DEPTH) {
        walk(v as Record<string, unknown>, `${name}.`, depth + 1);
        continue;
      }
      row[name] =
        v === null || typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean' ? v : JSON.stringify(v);
      columns++;
    }
  };
  walk(value, '', 0);
  return row;
}

export interface HttpTestResult {
  ok: boolean;
  status?: number;
  latency_ms: number;
  result?: Row;
  error?: string;
}

/**
 * One real call right now, past the cache and the circuit, for the "test" button. A 404 or
 * empty answer is ok (the API answered; it knows nothing of this key). Never the credential.
 */
export async function testHttpSource(source: HttpSource, key: string, deps: GuardDeps): Promise<HttpTestResult> {
  const started = performance.now();
  const latency = () => Math.round(performance.now() - started);
  const issues = validateHttpSourceConfig(source.config).concat(credentialIssues(source.credential));
  if (issues.length) return { ok: false, latency_ms: 0, error: issues.map((i) => `${i.at}: ${i.message}`).join('; ') };
  if (!askableKey(key))
    return { ok: false, latency_ms: 0, error: 'the key is empty, "." or "..", or longer than 1024 characters' };
  const config = resolveHttpSourceConfig(source.config);
  const pool = createGuardedPool(sourceOrigin(config), deps, { connections: 1 });
  try {
    const outcome = await callHttpSource(pool, config, source.credential, key);
    if (outcome.kind === 'hit') return { ok: true, status: outcome.status, latency_ms: latency(), result: outcome.row };
    if (outcome.kind === 'negative') return { ok: true, status: outcome.status, latency_ms: latency() };
    return {
      ok: false,
      ...(outcome.status ? { status: outcome.status } : {}),
      latency_ms: latency(),
      error: outcome.error,
    };
  } finally {
    await pool.destroy().catch(() => undefined);
  }
}
