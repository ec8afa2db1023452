// The OTLP logs sink: one ExportLogsServiceRequest per batch, POSTed as protobuf (gzip by
// default). Delivered on a 2xx whose ExportLogsServiceResponse names no rejected record. OTLP
// does not say which records a partial_success refused and forbids resending them: the whole
// batch is dead-lettered with the receiver's message (reprocess from the DLQ once fixed).
import type { Pool } from 'undici';
import { credentialString } from '../../../core/credentials.js';
import type { Redactor } from '../../../core/redaction.js';
import { ExportLogsServiceResponse, RpcStatus } from '../../sources/otlp/messages.js';
import {
  checkHeaders,
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
import { DeliveryError, type Sink, type SinkContext } from '../types.js';
import { emptyLogsRequest, encodeLogs, type RecordSettings } from './records.js';

interface Prepared {
  pool: Pool;
  path: string;
  headers: Record<string, string>;
  gzip: boolean;
  settings: RecordSettings;
  display: string;
}

function prepare(ctx: SinkContext): Prepared {
  const c = ctx.config;
  const url = parseHttpUrl(c.url);
  const headers: Record<string, string> = {
    ...checkHeaders(c.headers, 'headers'),
    ...checkHeaders(ctx.credential?.secret_headers, 'secret_headers'),
    'content-type': 'application/x-protobuf',
  };
  const bearer = credentialString(ctx.credential, 'bearer_token');
  if (bearer) headers.authorization = `Bearer ${bearer}`;
  const attrs = c.resource_attributes;
  return {
    pool: createHttpPool(ctx, url, tlsOptions(c)),
    path: `${url.pathname}${url.search}`,
    headers,
    gzip: c.gzip !== false,
    settings: {
      body: c.body === 'json' ? 'json' : 'kvlist',
      serviceName: typeof c.service_name === 'string' && c.service_name ? c.service_name : 'weir',
      resourceAttributes: attrs && typeof attrs === 'object' ? (attrs as Record<string, string>) : {},
    },
    display: `${url.origin}${url.pathname}`,
  };
}

function answerBytes(answer: HttpAnswer): Buffer {
  return answer.bytes ?? Buffer.from(answer.text, 'utf8');
}

function isJson(answer: HttpAnswer): boolean {
  return /^application\/json\b/i.test(String(answer.headers['content-type'] ?? ''));
}

/** partial_success of a 2xx answer: rejected count and message; undefined when the body is not a response. */
export function partialSuccess(answer: HttpAnswer): { rejected: number; message: string } | undefined {
  try {
    if (isJson(answer)) {
      const body = JSON.parse(answer.text || '{}') as { partialSuccess?: Record<string, unknown> };
      const p = body.partialSuccess ?? {};
      return { rejected: Number(p.rejectedLogRecords ?? 0), message: String(p.errorMessage ?? '') };
    }
    const decoded = ExportLogsServiceResponse.toObject(ExportLogsServiceResponse.decode(answerBytes(answer)), {
      longs: Number,
    }) as { partialSuccess?: { rejectedLogRecords?: number; errorMessage?: string } };
    return {
      rejected: decoded.partialSuccess?.rejectedLogRecords ?? 0,
      message: decoded.partialSuccess?.errorMessage ?? '',
    };
  } catch {
    return undefined;
  }
}

/** The message of a google.rpc.Status answer (protobuf or JSON), else the answer's text. */
function statusMessage(answer: HttpAnswer): string {
  try {
    if (isJson(answer)) return String((JSON.parse(answer.text) as { message?: unknown }).message ?? answer.text);
    const m = (RpcStatus.decode(answerBytes(answer)) as unknown as { message?: string }).message;
    return m || answer.text;
  } catch {
    return answer.text;
  }
}

function failure(answer: HttpAnswer, redact: Redactor): DeliveryError {
  return statusError({ ...answer, text: statusMessage(answer) }, redact, 'OTLP');
}

async function post(p: Prepared, body: Uint8Array, signal: AbortSignal): Promise<HttpAnswer> {
  const raw = Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  const sent = p.gzip ? await gzip(raw) : raw;
  return httpRequest(p.pool, {
    method: 'POST',
    path: p.path,
    headers: p.gzip ? { ...p.headers, 'content-encoding': 'gzip' } : p.headers,
    body: sent,
    signal,
    maxBytes: 16_384,
  });
}

export function createOtlpSink(ctx: SinkContext): Sink {
  const redact = ctx.redact;
  return httpSink(ctx, prepare, {
    async send(p, batch, signal) {
      if (batch.lines.length === 0) return {};
      const answer = await post(p, encodeLogs(batch, p.settings, Date.now()), signal);
      if (answer.status < 200 || answer.status >= 300) throw failure(answer, redact);
      const partial = partialSuccess(answer);
      if (!partial)
        throw new DeliveryError('protocol', `OTLP ${answer.status}: the answer is not an ExportLogsServiceResponse`, {
          retryable: true,
          statusCode: answer.status,
        });
      if (partial.rejected <= 0) return {};
      const reason = `OTLP receiver refused ${partial.rejected} of ${batch.lines.length} records of the request${
        partial.message ? `: ${shortAnswer(partial.message, redact)}` : ''
      }`;
      return { rejected: batch.ids.map((_, index) => ({ index, reason, statusCode: answer.status })) };
    },

    async check(p, signal) {
      const answer = await post(p, emptyLogsRequest(), signal);
      if (answer.status >= 200 && answer.status < 300)
        return { ok: true, detail: `POST ${p.display} (an empty ExportLogsServiceRequest) answered ${answer.status}` };
      const e = failure(answer, redact);
      return { ok: false, detail: `POST ${p.display} answered ${e.message}`, error_kind: e.kind };
    },
  });
}
