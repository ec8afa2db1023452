import type { Pool } from 'undici';
import { credentialString, type Credential } from '../../../core/credentials.js';
import type { Redactor, SecretValue } from '../../../core/redaction.js';
import {
  createHttpPool,
  gzip,
  httpRequest,
  httpSink,
  parseHttpUrl,
  shortAnswer,
  statusError,
  tlsOptions,
  type HttpAnswer,
} from '../http-common.js';
import { DeliveryError, type Sink, type SinkBatch, type SinkContext, type SinkResult } from '../types.js';
import { checkDataStreamIndex, indexTemplate, templateName, withTimestamp } from './template.js';

/** Only what the sink reads of a _bulk answer: 5000 full items would be most of a megabyte. */
const FILTER_PATH = 'errors,items.*.status,items.*.error.type,items.*.error.reason';

export function invalidIndexName(name: string): string | null {
  if (name === '' || name === '.' || name === '..') return 'must not be empty, "." or ".."';
  if (name !== name.toLowerCase()) return 'must be lowercase';
  if (/[\\/*?"<>| ,#:]/.test(name)) return 'must not contain \\, /, *, ?, ", <, >, |, space, comma, # or :';
  if (/^[-_+]/.test(name)) return 'must not start with -, _ or +';
  if (Buffer.byteLength(name) > 255) return 'is longer than 255 bytes';
  return null;
}

const pad = (n: number) => (n < 10 ? `0${n}` : String(n));

/**
 * The index of an event from the template: constant, or with {yyyy.MM.dd}-style parts filled
 * from the event's OCSF time (UTC; now when the event has none). Throws DeliveryError('config').
 */
export function indexNamer(template: string): (timeMs: unknown) => string {
  const parts = template.match(/\{[^}]*\}/g) ?? [];
  for (const p of parts) {
    if (!/^\{(yyyy|MM|dd|[.\-_])+\}$/.test(p))
      throw new DeliveryError(
        'config',
        `index: unknown date pattern ${p} (use yyyy, MM and dd, for example {yyyy.MM.dd})`,
      );
  }
  const format = (ms: number) => {
    const d = new Date(ms);
    return template.replace(/\{([^}]*)\}/g, (_, f: string) =>
      f.replace(/yyyy|MM|dd/g, (t) =>
        t === 'yyyy' ? String(d.getUTCFullYear()) : t === 'MM' ? pad(d.getUTCMonth() + 1) : pad(d.getUTCDate()),
      ),
    );
  };
  const problem = invalidIndexName(format(Date.UTC(2024, 0, 1)));
  if (problem) throw new DeliveryError('config', `index "${template}" ${problem}`);
  if (parts.length === 0) return () => template;
  let lastDay = NaN;
  let lastName = '';
  return (t) => {
    const ms = typeof t === 'number' && Number.isFinite(t) ? t : Date.now();
    const day = Math.floor(ms / 86_400_000);
    if (day !== lastDay) {
      lastDay = day;
      lastName = format(ms);
    }
    return lastName;
  };
}

interface Prepared {
  pool: Pool;
  bulkPath: string;
  rootPath: string;
  headers: Record<string, string>;
  opType: 'create' | 'index';
  indexOf: (timeMs: unknown) => string;
  dated: boolean;
  gzip: boolean;
  display: string;
  /** PUT before the first _bulk, unless manage_template is false. */
  template?: { path: string; body: string };
}

function authorization(cred: Credential | null): string | undefined {
  const username = credentialString(cred, 'username');
  const apiKey = credentialString(cred, 'api_key');
  if (apiKey && username) throw new DeliveryError('config', 'the credential has both api_key and username: keep one');
  if (apiKey) return `ApiKey ${apiKey.includes(':') ? Buffer.from(apiKey).toString('base64') : apiKey}`;
  if (username)
    return `Basic ${Buffer.from(`${username}:${credentialString(cred, 'password') ?? ''}`).toString('base64')}`;
  return undefined;
}

/**
 * The api_key's own secret part: "id:key" given as is, or inside the base64 "encoded" value
 * Elasticsearch hands out. A server may echo the key alone, without its id.
 */
export function apiKeyParts(apiKey: unknown): (string | SecretValue)[] {
  if (typeof apiKey !== 'string' || apiKey === '') return [];
  const pair = apiKey.includes(':') ? apiKey : Buffer.from(apiKey, 'base64').toString('utf8');
  const colon = pair.indexOf(':');
  // A value that does not decode to printable "id:key" is an opaque key: the value itself is hidden.
  if (colon <= 0 || !/^[\x20-\x7e]+$/.test(pair)) return [];
  return [{ value: pair, publicPrefix: colon + 1 }, pair.slice(colon + 1)];
}

function prepare(ctx: SinkContext): Prepared {
  const c = ctx.config;
  const url = parseHttpUrl(c.url);
  const base = url.pathname.replace(/\/+$/, '');
  const template = typeof c.index === 'string' && c.index !== '' ? c.index : 'ocsf-events';
  const query = new URLSearchParams({ filter_path: FILTER_PATH });
  if (typeof c.pipeline === 'string' && c.pipeline) query.set('pipeline', c.pipeline);
  const auth = authorization(ctx.credential);
  const dataStream = c.data_stream === true;
  if (dataStream) checkDataStreamIndex(template);
  return {
    pool: createHttpPool(ctx, url, tlsOptions(c)),
    bulkPath: `${base}/_bulk?${query.toString()}`,
    rootPath: `${base}/`,
    headers: auth ? { authorization: auth } : {},
    // A data stream takes create only.
    opType: c.op_type === 'index' && !dataStream ? 'index' : 'create',
    indexOf: indexNamer(template),
    dated: template.includes('{'),
    gzip: c.gzip === true,
    display: `${url.origin}${base}`,
    ...(c.manage_template === false
      ? {}
      : {
          template: {
            path: `${base}/_index_template/${encodeURIComponent(templateName(template))}`,
            body: JSON.stringify(indexTemplate(template, dataStream)),
          },
        }),
  };
}

/** The _bulk body: an action line with the envelope id as _id, then the OCSF line with `@timestamp` from its `time`. */
export function bulkBody(batch: SinkBatch, p: Pick<Prepared, 'opType' | 'indexOf' | 'dated'>): string {
  const events = batch.events();
  let lastIndex = '';
  let prefix = '';
  let out = '';
  for (let i = 0; i < batch.lines.length; i++) {
    const time = events[i]?.time;
    const index = p.indexOf(time);
    if (index !== lastIndex) {
      lastIndex = index;
      prefix = `{"${p.opType}":{"_index":${JSON.stringify(index)},"_id":`;
    }
    out += `${prefix}${JSON.stringify(batch.ids[i])}}}\n${withTimestamp(batch.lines[i]!, time)}\n`;
  }
  return out;
}

interface BulkItem {
  status?: number;
  error?: { type?: string; reason?: string };
}

/** Per-item outcomes of a 200 _bulk answer. */
export function bulkResult(text: string, size: number, opType: 'create' | 'index', redact: Redactor): SinkResult {
  let parsed: { errors?: boolean; items?: Record<string, BulkItem>[] };
  try {
    parsed = JSON.parse(text) as typeof parsed;
  } catch {
    throw new DeliveryError(
      'protocol',
      `Elasticsearch _bulk answered 200 with a body that is not JSON: ${shortAnswer(text, redact)}`,
    );
  }
  if (parsed.errors === false) return {};
  const items = parsed.items;
  if (!Array.isArray(items) || items.length !== size) {
    throw new DeliveryError(
      'protocol',
      `Elasticsearch _bulk answered ${Array.isArray(items) ? items.length : 'no'} items for ${size} documents`,
    );
  }
  const rejected: NonNullable<SinkResult['rejected']> = [];
  const retry: NonNullable<SinkResult['retry']> = [];
  for (let i = 0; i < size; i++) {
    const item = Object.values(items[i] ?? {})[0] ?? {};
    const status = item.status ?? 0;
    if (status >= 200 && status < 300) continue;
    // The document is already there: this was a redelivery of a delivered event.
    if (status === 409 && opType === 'create') continue;
    const reason = shortAnswer(`${status} ${item.error?.type ?? 'error'}: ${item.error?.reason ?? ''}`, redact);
    if (status === 429 || status >= 500 || status === 0)
      retry.push({ index: i, reason, statusCode: status || undefined });
    else rejected.push({ index: i, reason, statusCode: status });
  }
  const result: SinkResult = {};
  if (rejected.length) result.rejected = rejected;
  if (retry.length) result.retry = retry;
  return result;
}

/** An Elasticsearch error answer as "type: reason". */
function esReason(text: string): string | null {
  try {
    const v = JSON.parse(text) as { error?: string | { type?: string; reason?: string } };
    if (typeof v.error === 'string') return v.error;
    if (v.error?.type) return `${v.error.type}: ${v.error.reason ?? ''}`;
  } catch {
    // not JSON: the caller shows the raw start of the answer
  }
  return null;
}

function requestError(answer: HttpAnswer, redact: Redactor): DeliveryError {
  const reason = esReason(answer.text);
  const base = statusError(reason === null ? answer : { ...answer, text: reason }, redact, 'Elasticsearch');
  if (answer.status === 413) {
    // Resending the same rows cannot fit: dead-letter them and say what to change.
    return new DeliveryError(
      'http_4xx',
      `Elasticsearch 413: the request is larger than the cluster accepts (http.max_content_length); lower max_bytes of this destination`,
      { statusCode: 413 },
    );
  }
  return base;
}

export function createBulkSink(ctx: SinkContext): Sink {
  const redact = ctx.redact;
  let templateReady = false;

  /** The index template, once per sink: an overwrite of Weir's own template, so a restart puts it again harmlessly. */
  async function putTemplate(p: Prepared, signal: AbortSignal): Promise<void> {
    if (!p.template || templateReady) return;
    const answer = await httpRequest(p.pool, {
      method: 'PUT',
      path: p.template.path,
      headers: { ...p.headers, 'content-type': 'application/json' },
      body: p.template.body,
      signal,
    });
    if (answer.status !== 200) {
      const e = requestError(answer, redact);
      throw new DeliveryError(
        e.kind,
        `Elasticsearch refused Weir's index template (${e.message}); give the user the manage_index_templates privilege, or set manage_template to false and create the template yourself`,
        { statusCode: e.statusCode, retryAfterMs: e.retryAfterMs },
      );
    }
    templateReady = true;
  }

  return httpSink(ctx, prepare, {
    async send(p, batch, signal) {
      if (batch.lines.length === 0) return {};
      await putTemplate(p, signal);
      const text = bulkBody(batch, p);
      const body = p.gzip ? await gzip(text) : text;
      const headers: Record<string, string> = { ...p.headers, 'content-type': 'application/x-ndjson' };
      if (p.gzip) headers['content-encoding'] = 'gzip';
      const answer = await httpRequest(p.pool, {
        method: 'POST',
        path: p.bulkPath,
        headers,
        body,
        signal,
        maxBytes: 64 * 1_048_576,
      });
      if (answer.status === 200) return bulkResult(answer.text, batch.lines.length, p.opType, redact);
      if (answer.status >= 200 && answer.status < 300)
        throw new DeliveryError('protocol', `Elasticsearch _bulk answered ${answer.status}`, {
          statusCode: answer.status,
        });
      throw requestError(answer, redact);
    },

    async check(p, signal) {
      const answer = await httpRequest(p.pool, { method: 'GET', path: p.rootPath, headers: p.headers, signal });
      if (answer.status !== 200) {
        const e = requestError(answer, redact);
        return { ok: false, detail: `GET ${p.display}/ answered ${e.message}`, error_kind: e.kind };
      }
      let info: { cluster_name?: string; version?: { number?: string; distribution?: string } };
      try {
        info = JSON.parse(answer.text) as typeof info;
      } catch {
        return {
          ok: false,
          detail: `${p.display} answered 200 but not like Elasticsearch or OpenSearch`,
          error_kind: 'protocol',
        };
      }
      if (!info.version?.number)
        return {
          ok: false,
          detail: `${p.display} answered 200 but not like Elasticsearch or OpenSearch`,
          error_kind: 'protocol',
        };
      const product = info.version.distribution === 'opensearch' ? 'OpenSearch' : 'Elasticsearch';
      return {
        ok: true,
        detail: `cluster "${info.cluster_name ?? '?'}" answered: ${product} ${info.version.number}`,
      };
    },
  });
}
