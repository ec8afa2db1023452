// Push ingestion and its tokens. A push is answered only after its events are durably
// accepted (each chunk accepted as a batch: its ledger row and normalize job, accept.ts):
// 200 when all were, 207 with the lines that were not, 400 when none was. Nothing
// accepted is lost and nothing lost is reported as accepted. Saturation answers 429/503
// with Retry-After before the body is read.
import type { Readable } from 'node:stream';
import type { Meter, Tracer } from '@opentelemetry/api';
import type { Actor } from '../../core/actor.js';
import type { Clock } from '../../core/clock.js';
import { AppError, errors } from '../../core/errors.js';
import { newId } from '../../core/ids.js';
import type { Scope } from '../../core/scope.js';
import { NORMALIZE_QUEUE, type AcceptBatch, type Admission, type IngestBatch } from '../../pipeline/envelope.js';
import {
  chunkEvents,
  isStreamName,
  parsePushBody,
  STREAM_NAME_RULE,
  type ParsedPush,
  type PushFormatChoice,
  type PushLineError,
} from '../../pipeline/sources/push.js';
import { parseTextBody } from '../../pipeline/sources/text.js';
import type { QueuePort } from '../../platform/queue/port.js';
import { setAuditTarget } from '../audit/service.js';
import { InflightBudget, pendingGauge, saturated } from './backpressure.js';
import { bodyEncoding, checkMediaType, looksLikeGzip, readBody, tooManyEvents, type ReadBodyOptions } from './body.js';
import { tracedAccept } from './trace.js';
import type { ListenerStateRow } from '../syslog/store.js';
import type { ConsumerStateRow } from '../buses/store.js';
import type { IngestStore } from './store.js';
import type { IngestTokens, PushTarget } from './tokens.js';
import { ignoredParameters } from './query.js';
import { INGEST_URL, ingestStatus } from './status.js';

export { INGEST_URL, STATS_DAYS } from './status.js';

/** Per-line errors listed in an answer; the rest are counted in errors_omitted. */
export const MAX_REPORTED_ERRORS = 100;
const UNAVAILABLE_RETRY_AFTER_S = 5;
const NOT_ACCEPTED = 'not accepted: pipeline unavailable, resend';

export interface IngestLimits {
  maxBodyBytes: number;
  maxDecodedBytes: number;
  /** Events one push may carry: refused with 413 while the body is read (NDJSON, text) or once parsed (a JSON document). */
  maxEventsPerRequest: number;
  batchMaxEvents: number;
  batchMaxBytes: number;
  maxInflightBytes: number;
  maxPendingBatches: number;
}

export interface IngestServiceDeps {
  store: IngestStore;
  tokens: IngestTokens;
  integrations: {
    find(
      scope: Scope,
      id: number,
    ): Promise<{ id: number; organization_id: number; platform: string; is_active: boolean } | undefined>;
  };
  /** The normalize queue's depth, for backpressure. */
  queue: Pick<QueuePort, 'counts'>;
  accept: AcceptBatch;
  clock: Clock;
  limits: IngestLimits;
  /** Refuses new events (503) while the disk is under its floor or a destination they feed is over its backlog budget. */
  admission?: Admission;
  jsonMaxDepth: number;
  /** Whether a stream of the token's integration is declared as text (its platform's and its config's text_streams). */
  isTextStream: (target: PushTarget, stream: string) => boolean;
  /** The listeners of a syslog integration as the processes running them last reported (modules/syslog). */
  syslogListeners?: (integrationId: number) => Promise<SyslogListenerState[]>;
  /** The consumers of a rabbitmq or nats integration as the processes running them last reported (modules/buses). */
  busConsumers?: (integrationId: number) => Promise<BusConsumerState[]>;
  meter: Meter;
  /** W3C trace context of the current request for the batch (only when telemetry is on). */
  traceContext?: (() => Record<string, string>) | undefined;
  /** The `ingest.accept` spans' tracer (only when telemetry is on). */
  tracer?: Tracer | undefined;
  onError: (err: unknown, message: string) => void;
}

/** A syslog listener as its process last reported it (modules/syslog). */
export type SyslogListenerState = Omit<ListenerStateRow, 'integration_id'>;
/** A message bus consumer as its process last reported it (modules/buses). */
export type BusConsumerState = Omit<ConsumerStateRow, 'integration_id'>;

export interface PushRequest {
  /** The presented ingestion token (from Authorization: Bearer or X-Ingest-Token). */
  token: string | undefined;
  /** A console session cookie came with the push (only to say why it is not enough). */
  session?: boolean;
  stream: string;
  /** The `format` query parameter: auto (default) decides from the content. */
  format?: PushFormatChoice;
  /** Names of the query parameters other than format (values are never passed: one may be a secret). */
  queryParameters?: string[];
  contentType?: string | undefined;
  contentEncoding: string | undefined;
  contentLength: number | undefined;
  body: Readable | undefined;
}

/**
 * One event a protocol input (Splunk HEC, Elasticsearch _bulk, OTLP, Firehose, message
 * buses) decoded from its own envelope: the JSON text of an object, the stream it goes to,
 * and its size in bytes (for batching and counters).
 */
export interface ProtocolEvent {
  stream: string;
  text: string;
  bytes: number;
}

/** An HTTP protocol request: the credential the protocol carries, and the body unread. */
export interface ProtocolRequest {
  token: string | undefined;
  contentEncoding: string | undefined;
  contentLength: number | undefined;
  body: Readable | undefined;
}

/** What became of a protocol's events: accepted[i] for events[i], in order. */
export interface ProtocolOutcome {
  target: PushTarget;
  accepted: boolean[];
  accepted_count: number;
  batch_ids: string[];
}

export interface PushOutcome {
  status: 200 | 207;
  accepted: number;
  rejected: number;
  errors: PushLineError[];
  errors_omitted: number;
  batch_ids: string[];
  ignored_parameters?: string[];
}

function reported(list: PushLineError[]): { errors: PushLineError[]; errors_omitted: number } {
  return { errors: list.slice(0, MAX_REPORTED_ERRORS), errors_omitted: Math.max(0, list.length - MAX_REPORTED_ERRORS) };
}

function unavailable(): AppError {
  return new AppError('dependency.unavailable', {
    detail: `The pipeline is unavailable; nothing was accepted, resend in ${UNAVAILABLE_RETRY_AFTER_S} s`,
    details: { dependency: 'queue', retry_after_seconds: UNAVAILABLE_RETRY_AFTER_S },
    headers: { 'retry-after': String(UNAVAILABLE_RETRY_AFTER_S) },
  });
}

export function createIngestService(deps: IngestServiceDeps) {
  const { tokens, integrations, queue, clock, limits } = deps;
  const budget = new InflightBudget(limits.maxInflightBytes);
  const pending = pendingGauge(
    async () => {
      const c = await queue.counts(NORMALIZE_QUEUE);
      return c.waiting + c.delayed;
    },
    clock,
    1000,
    (err) => deps.onError(err, 'could not read the normalize queue depth'),
  );
  const eventsIn = deps.meter.createCounter('collector_events_in_total', {
    description: 'Events durably accepted by ingestion',
    unit: '{event}',
  });
  const bytesIn = deps.meter.createCounter('collector_bytes_in_total', {
    description: 'Bytes of events durably accepted by ingestion (after decompression)',
    unit: 'By',
  });

  async function integrationInScope(scope: Scope, id: number) {
    const integration = await integrations.find(scope, id);
    if (!integration) throw errors.notFound('Integration');
    return integration;
  }

  /** Accepts each chunk in order; stops at the first failure. The ids of those accepted. */
  function acceptChunks(target: PushTarget, stream: string, parsed: ParsedPush) {
    const attributes = { integrationId: target.integrationId, stream, events: parsed.texts.length };
    return tracedAccept(deps.tracer, attributes, () => acceptChunksIn(target, stream, parsed));
  }

  async function acceptChunksIn(target: PushTarget, stream: string, parsed: ParsedPush) {
    const chunks = chunkEvents(parsed.sizes, limits.batchMaxEvents, limits.batchMaxBytes);
    const receivedAt = clock.now().toISOString();
    const carrier = deps.traceContext?.();
    const trace = carrier && Object.keys(carrier).length > 0 ? carrier : undefined;
    const batchIds: string[] = [];
    let bytes = 0;
    let events = 0;
    for (const chunk of chunks) {
      const count = chunk.end - chunk.start;
      const batch: IngestBatch = {
        id: newId(),
        organization_id: target.organizationId,
        integration_id: target.integrationId,
        platform: target.platform,
        stream,
        received_at: receivedAt,
        source: 'push',
        ids: Array.from({ length: count }, newId),
        events: chunks.length === 1 ? parsed.texts : parsed.texts.slice(chunk.start, chunk.end),
        bytes: chunk.bytes,
        ...(trace ? { trace } : {}),
      };
      try {
        await deps.accept(batch);
      } catch (err) {
        deps.onError(err, 'could not accept an ingest batch');
        return { batchIds, events, bytes, failedFrom: chunk.start };
      }
      batchIds.push(batch.id);
      events += count;
      bytes += chunk.bytes;
    }
    return { batchIds, events, bytes, failedFrom: undefined };
  }

  function counted(target: PushTarget, batches: number, events: number, bytes: number) {
    pending.add(batches);
    eventsIn.add(events, { org_id: String(target.organizationId), integration_id: String(target.integrationId) });
    bytesIn.add(bytes);
  }

  /** 503 (admission) or 429/503 (normalize queue saturated) before a body is read. */
  async function admit(target: PushTarget) {
    const refused = await deps.admission?.check(target.integrationId);
    if (refused) throw refused;
    const waiting = await pending.current();
    if (waiting > limits.maxPendingBatches) throw saturated(waiting, limits.maxPendingBatches);
  }

  /**
   * Admits the target, then reads the request's body under the push limits (gzip per
   * Content-Encoding, the in-flight budget held until `use` has accepted what it holds).
   */
  async function admittedBody<T>(
    target: PushTarget,
    req: Pick<ProtocolRequest, 'body' | 'contentEncoding' | 'contentLength'>,
    read: Pick<ReadBodyOptions, 'text' | 'linesAreNotEvents'>,
    use: (body: Buffer, encoding: ReturnType<typeof bodyEncoding>) => Promise<T>,
  ): Promise<T> {
    const encoding = bodyEncoding(req.contentEncoding);
    await admit(target);
    const lease = budget.open();
    try {
      const body = await readBody(req.body, {
        ...limits,
        encoding,
        contentLength: req.contentLength,
        admit: lease.grow,
        ...read,
      });
      return await use(body, encoding);
    } finally {
      lease.release();
    }
  }

  /**
   * Accepts a protocol's decoded events: consecutive events of one stream go as batches of
   * that stream, in order; the first failure stops the rest (they are reported not accepted,
   * to be resent). Throws 503 when nothing was accepted.
   */
  async function acceptProtocolEvents(target: PushTarget, events: readonly ProtocolEvent[]): Promise<ProtocolOutcome> {
    const accepted: boolean[] = Array.from({ length: events.length }, () => false);
    const batchIds: string[] = [];
    let count = 0;
    let bytes = 0;
    let start = 0;
    while (start < events.length) {
      const stream = events[start]!.stream;
      let end = start + 1;
      while (end < events.length && events[end]!.stream === stream) end++;
      const group = events.slice(start, end);
      const parsed: ParsedPush = {
        format: 'ndjson',
        texts: group.map((e) => e.text),
        lines: group.map((_, i) => start + i + 1),
        sizes: group.map((e) => e.bytes),
        errors: [],
      };
      const sent = await acceptChunks(target, stream, parsed);
      batchIds.push(...sent.batchIds);
      const ok = sent.failedFrom === undefined ? group.length : sent.failedFrom;
      for (let i = 0; i < ok; i++) accepted[start + i] = true;
      count += sent.events;
      bytes += sent.bytes;
      if (sent.failedFrom !== undefined) break;
      start = end;
    }
    if (events.length > 0 && count === 0) {
      throw unavailable();
    }
    if (batchIds.length) counted(target, batchIds.length, count, bytes);
    return { target, accepted, accepted_count: count, batch_ids: batchIds };
  }

  return {
    /**
     * The accept path of a protocol input served over HTTP (Splunk HEC, Elasticsearch _bulk,
     * OTLP, Firehose): the ingestion token the protocol carries, admission and backpressure,
     * the body read under the push limits (gzip per Content-Encoding), the protocol's own
     * decoding, then the events accepted in batches as a push's are. `decode` may throw an
     * AppError (a 4xx naming what is wrong with the request).
     */
    async receive(
      req: ProtocolRequest,
      decode: (body: Buffer, target: PushTarget) => ProtocolEvent[] | Promise<ProtocolEvent[]>,
    ): Promise<ProtocolOutcome> {
      const target = await tokens.verify({ token: req.token, session: false });
      return admittedBody(target, req, { linesAreNotEvents: true }, async (body) => {
        const events = await decode(body, target);
        if (events.length > limits.maxEventsPerRequest) throw tooManyEvents(limits.maxEventsPerRequest, 'events');
        return acceptProtocolEvents(target, events);
      });
    },

    /** Verifies an ingestion token a protocol carries (e.g. HEC's health check), without a body. */
    verifyToken: (token: string | undefined) => tokens.verify({ token, session: false }),

    /**
     * The accept path of a protocol input that is not an HTTP request (RabbitMQ, NATS,
     * object storage): admission and backpressure for the integration, then its events
     * accepted in batches. Resolves only once they are durably accepted.
     */
    async acceptFor(target: PushTarget, events: readonly ProtocolEvent[]): Promise<ProtocolOutcome> {
      await admit(target);
      return acceptProtocolEvents(target, events);
    },

    /** Verifies the token, reads and parses the body, and accepts it in batches. */
    async push(req: PushRequest): Promise<PushOutcome> {
      const ignored = ignoredParameters(req.queryParameters ?? []);
      const target = await tokens.verify({ token: req.token, session: req.session ?? false });
      if (!isStreamName(req.stream)) {
        throw errors.validation(`The stream name ${STREAM_NAME_RULE.pattern}`, {
          errors: [{ location: 'params/stream', message: STREAM_NAME_RULE.pattern }],
        });
      }
      const text = deps.isTextStream(target, req.stream);
      if (text && req.format !== undefined && req.format !== 'auto') {
        throw errors.validation(
          `Stream "${req.stream}" is declared as text (each line is one event): format=${req.format} does not apply; leave format out`,
          {
            errors: [{ location: 'querystring/format', message: 'does not apply to a text stream' }],
          },
        );
      }
      checkMediaType(req.contentType);
      return admittedBody(target, req, { text }, async (body, encoding) => {
        // Compressed data read as text would fail line by line with "invalid JSON": name the cause.
        if (encoding === 'identity' && looksLikeGzip(body)) {
          throw new AppError('ingest.undeclared_gzip', {
            detail:
              'The body looks like gzip data (it starts with the gzip magic bytes 1f 8b) but Content-Encoding does not say so: send the header Content-Encoding: gzip',
          });
        }
        const parsed = text
          ? parseTextBody(body)
          : parsePushBody(body, { maxDepth: deps.jsonMaxDepth, format: req.format ?? 'auto' });
        if (parsed.format === 'not_a_document') {
          throw new AppError('ingest.no_events_accepted', {
            detail:
              'format=json was given but the body is not one JSON document (an object or an array): send one, or use format=ndjson (or no format) for NDJSON',
            details: { accepted: 0, rejected: 0, errors: [], errors_omitted: 0 },
          });
        }
        if (parsed.texts.length + parsed.errors.length > limits.maxEventsPerRequest)
          throw tooManyEvents(limits.maxEventsPerRequest, 'events');
        if (parsed.format === 'empty')
          throw errors.invalid(
            text
              ? `The body is empty: stream "${req.stream}" is text, send one event per line`
              : 'The body is empty: send a JSON object, a JSON array or NDJSON (one object per line)',
          );
        if (parsed.texts.length === 0) {
          throw new AppError('ingest.no_events_accepted', {
            detail: parsed.errors.length
              ? `No event was accepted: ${parsed.errors.length} rejected (first, line ${parsed.errors[0]?.line}: ${parsed.errors[0]?.reason})`
              : 'The body holds no events',
            details: { accepted: 0, rejected: parsed.errors.length, ...reported(parsed.errors) },
          });
        }

        const sent = await acceptChunks(target, req.stream, parsed);
        if (sent.batchIds.length === 0) {
          throw unavailable();
        }
        counted(target, sent.batchIds.length, sent.events, sent.bytes);

        let lineErrors = parsed.errors;
        if (sent.failedFrom !== undefined) {
          const lost = parsed.lines.slice(sent.failedFrom).map((line) => ({ line, reason: NOT_ACCEPTED }));
          lineErrors = [...parsed.errors, ...lost].sort((a, b) => a.line - b.line);
        }
        return {
          status: lineErrors.length ? 207 : 200,
          accepted: sent.events,
          rejected: lineErrors.length,
          ...reported(lineErrors),
          batch_ids: sent.batchIds,
          ...(ignored.length ? { ignored_parameters: ignored } : {}),
        };
      });
    },

    async createToken(actor: Actor, scope: Scope, integrationId: number) {
      const integration = await integrationInScope(scope, integrationId);
      const { token, row, replaced } = await tokens.issue(integration, actor.kind === 'user' ? actor.id : null);
      // The prefix only: the token itself never reaches the audit trail.
      setAuditTarget({
        organizationId: integration.organization_id,
        details: { token_prefix: row.token_prefix, replaced },
      });
      return {
        token,
        token_prefix: row.token_prefix,
        integration_id: integration.id,
        created_at: row.created_at,
        ingest_url: INGEST_URL,
      };
    },

    async deleteToken(scope: Scope, integrationId: number): Promise<void> {
      const integration = await integrationInScope(scope, integrationId);
      setAuditTarget({ organizationId: integration.organization_id });
      if (!(await tokens.revoke(integrationId))) throw errors.notFound('Ingestion token');
    },

    async status(scope: Scope, integrationId: number) {
      const integration = await integrationInScope(scope, integrationId);
      return ingestStatus(deps, integration, clock.now());
    },

    /** See IngestTokens.forgetIntegration. */
    forgetIntegration: (integrationId: number) => tokens.forgetIntegration(integrationId),
    flushLastUsed: () => tokens.flushLastUsed(),
  };
}

export type IngestService = ReturnType<typeof createIngestService>;
