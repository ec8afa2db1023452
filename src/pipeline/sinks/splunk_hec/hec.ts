import { randomUUID } from 'node:crypto';
import type { Pool } from 'undici';
import type { Redactor } from '../../../core/redaction.js';
import { credentialString } from '../../../core/credentials.js';
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
import { ackIdOf, awaitAck } from './ack.js';
import { DeliveryError, type Sink, type SinkBatch, type SinkContext, type SinkResult } from '../types.js';

/** HEC answer codes that name one bad event (invalid-event-number): the others can go again. */
const PER_EVENT_CODES = new Set([6, 12, 13, 15]);
/** HEC answer codes that no resend can fix: the destination's settings are wrong. */
const CONFIG_CODES = new Set([7, 10, 11, 14]);

interface HecAnswer {
  text?: string;
  code?: number;
  'invalid-event-number'?: number;
  ackId?: number;
}

export function parseHecAnswer(text: string): HecAnswer | null {
  try {
    const v = JSON.parse(text) as unknown;
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as HecAnswer) : null;
  } catch {
    return null;
  }
}

interface HecSettings {
  index?: string;
  sourcetype: string;
  source?: string;
  host?: string;
}

/**
 * The request body: one HEC event object per OCSF event, newline separated (HEC reads
 * concatenated objects). The OCSF line is embedded as is, never re-serialized.
 */
export function hecBody(batch: SinkBatch, s: HecSettings): string {
  const events = batch.events();
  let common = '';
  if (s.host) common += `"host":${JSON.stringify(s.host)},`;
  if (s.source) common += `"source":${JSON.stringify(s.source)},`;
  if (s.index) common += `"index":${JSON.stringify(s.index)},`;
  const perClass = s.sourcetype.includes('{class_uid}');
  const fixedType = perClass ? '' : `"sourcetype":${JSON.stringify(s.sourcetype)},`;
  const out: string[] = new Array(batch.lines.length);
  for (let i = 0; i < batch.lines.length; i++) {
    const ev = events[i] ?? {};
    const t = ev.time;
    // OCSF time is epoch milliseconds; HEC wants epoch seconds with a fraction.
    const time = typeof t === 'number' && Number.isFinite(t) ? `"time":${(t / 1000).toFixed(3)},` : '';
    const type = perClass
      ? `"sourcetype":${JSON.stringify(s.sourcetype.split('{class_uid}').join(String(ev.class_uid ?? 'unknown')))},`
      : fixedType;
    out[i] =
      `{${time}${common}${type}"event":${batch.lines[i]},"fields":{"weir_event_id":${JSON.stringify(batch.ids[i])}}}`;
  }
  return out.join('\n');
}

interface Prepared {
  pool: Pool;
  eventPath: string;
  healthPath: string;
  ackPath: string;
  /** Wait for indexer acknowledgement this long (use_ack), else 0. */
  ackTimeoutMs: number;
  headers: Record<string, string>;
  settings: HecSettings;
  gzip: boolean;
  display: string;
}

function prepare(ctx: SinkContext): Prepared {
  const c = ctx.config;
  const url = parseHttpUrl(c.url);
  const token = credentialString(ctx.credential, 'token');
  if (!token) throw new DeliveryError('config', 'a HEC token is required (credential "token")');
  // Accept a base URL or one that already names the collector path.
  const base = url.pathname.replace(/\/+$/, '').replace(/\/services\/collector(\/event(\/1\.0)?|\/raw(\/1\.0)?)?$/, '');
  const str = (v: unknown) => (typeof v === 'string' && v !== '' ? v : undefined);
  return {
    pool: createHttpPool(ctx, url, tlsOptions(c)),
    eventPath: `${base}/services/collector/event`,
    healthPath: `${base}/services/collector/health/1.0`,
    ackPath: `${base}/services/collector/ack`,
    ackTimeoutMs:
      c.use_ack === true ? (typeof c.ack_timeout_seconds === 'number' ? c.ack_timeout_seconds : 20) * 1000 : 0,
    headers: {
      authorization: `Splunk ${token}`,
      'content-type': 'application/json',
      // Tokens with indexer acknowledgement refuse requests without a channel; others ignore it.
      // One channel per destination and process: its ackIds are this sink's alone.
      'x-splunk-request-channel': randomUUID(),
    },
    settings: {
      index: str(c.index),
      sourcetype: str(c.sourcetype) ?? 'ocsf',
      source: str(c.source),
      host: str(c.host),
    },
    gzip: c.gzip === true,
    display: `${url.origin}${base}`,
  };
}

function hecMessage(answer: HttpAnswer, hec: HecAnswer | null, redact: Redactor): string {
  if (hec && typeof hec.code === 'number')
    return `HEC ${answer.status} code ${hec.code}: ${shortAnswer(String(hec.text ?? ''), redact)}`;
  return `HEC ${answer.status}: ${shortAnswer(answer.text, redact)}`;
}

/** Maps a non-2xx HEC answer to per-event outcomes or a DeliveryError (thrown). */
export function hecFailure(answer: HttpAnswer, size: number, redact: Redactor): SinkResult {
  const hec = parseHecAnswer(answer.text);
  const message = hecMessage(answer, hec, redact);
  if (answer.status === 400 && hec && typeof hec.code === 'number') {
    if (CONFIG_CODES.has(hec.code)) throw new DeliveryError('config', message, { statusCode: 400 });
    const n = hec['invalid-event-number'];
    if (PER_EVENT_CODES.has(hec.code) && Number.isInteger(n) && (n as number) >= 0 && (n as number) < size) {
      // HEC stops at the first bad event. The ones before it may already be indexed, but
      // counting them delivered on that belief could lose events: they go again (at least once).
      const retry: NonNullable<SinkResult['retry']> = [];
      for (let i = 0; i < size; i++)
        if (i !== n) retry.push({ index: i, reason: `resent after ${message}`, statusCode: 400 });
      return { rejected: [{ index: n as number, reason: message, statusCode: 400 }], retry };
    }
  }
  const base = statusError(answer, redact, 'HEC');
  throw new DeliveryError(base.kind, message, {
    retryable: base.retryable,
    statusCode: answer.status,
    retryAfterMs: base.retryAfterMs,
  });
}

export function createHecSink(ctx: SinkContext): Sink {
  const redact = ctx.redact;
  return httpSink(ctx, prepare, {
    async send(p, batch, signal) {
      if (batch.lines.length === 0) return {};
      const text = hecBody(batch, p.settings);
      const body = p.gzip ? await gzip(text) : text;
      const headers = p.gzip ? { ...p.headers, 'content-encoding': 'gzip' } : p.headers;
      const answer = await httpRequest(p.pool, {
        method: 'POST',
        path: p.eventPath,
        headers,
        body,
        signal,
        maxBytes: 8192,
      });
      if (answer.status >= 200 && answer.status < 300) {
        const hec = parseHecAnswer(answer.text);
        // A 2xx with a non-zero code does not happen with HEC; a proxy's odd page is not a refusal.
        if (hec && typeof hec.code === 'number' && hec.code !== 0)
          throw new DeliveryError('protocol', hecMessage(answer, hec, redact), {
            retryable: true,
            statusCode: answer.status,
          });
        if (p.ackTimeoutMs > 0) {
          const target = { pool: p.pool, ackPath: p.ackPath, headers: p.headers };
          await awaitAck(target, ackIdOf(hec), p.ackTimeoutMs, signal, redact);
        }
        return {};
      }
      return hecFailure(answer, batch.lines.length, redact);
    },

    async check(p, signal) {
      const health = await httpRequest(p.pool, { method: 'GET', path: p.healthPath, signal });
      const h = parseHecAnswer(health.text);
      if (health.status === 404 || (health.status === 200 && h?.code !== 17)) {
        return {
          ok: false,
          detail: `no HEC health endpoint at ${p.display} (HTTP ${health.status}): check the URL, the port (8088 by default) and that HEC is enabled`,
          error_kind: 'http_4xx',
        };
      }
      if (health.status !== 200) {
        const e = statusError(health, redact, 'HEC health');
        const redirected = health.status >= 300 && health.status < 400;
        return { ok: false, detail: redirected ? e.message : hecMessage(health, h, redact), error_kind: e.kind };
      }
      // An empty authenticated request: a valid token gets 400 "No data" (code 5), an invalid one 401/403.
      const probe = await httpRequest(p.pool, {
        method: 'POST',
        path: p.eventPath,
        headers: p.headers,
        body: '',
        signal,
      });
      const a = parseHecAnswer(probe.text);
      if (probe.status === 400 && a?.code === 5)
        return {
          ok: true,
          detail: `HEC health endpoint answered "${h?.text ?? 'healthy'}" and HEC accepted the credential`,
        };
      if (probe.status === 401 || probe.status === 403)
        return {
          ok: false,
          detail: `HEC refused the credential (${hecMessage(probe, a, redact)})`,
          error_kind: 'auth',
        };
      const e = statusError(probe, redact, 'HEC');
      return {
        ok: false,
        detail: `unexpected answer to the token check: ${hecMessage(probe, a, redact)}`,
        error_kind: probe.status < 300 ? 'protocol' : e.kind,
      };
    },
  });
}
