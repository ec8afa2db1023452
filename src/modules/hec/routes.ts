// Splunk HEC's endpoints (docs/inputs-splunk-hec.md). Their bodies are read by the handlers
// (rawBodyScope: raw bytes whatever the Content-Type, gzip, limits) and every answer, refusals
// included, is in HEC's shape {text, code}, which HEC clients read.
import type { Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../core/errors.js';
import { route, type Api } from '../../platform/http/routes.js';
import { ErrorBody } from '../../platform/http/schemas.js';
import { contentLength, rawBodyScope } from '../ingest/routes.js';
import { fromError, type HecAcks, type HecAnswer, type HecBody as HecBodyType } from './answers.js';
import { HecAckBody, HecAckQuery, HecAckResult, HecBody, HecQuery, HecRawBody, HecResult } from './schema.js';
import type { HecRequest, HecService } from './service.js';

const INGESTION_TOKEN = { requires: 'public', ownCredential: 'splunk-hec' } as const;
const REFUSALS = { 400: HecResult, 401: HecResult, 403: HecResult, 413: HecResult, 415: HecResult, 503: HecResult };
const AUTH =
  "Authenticated by the integration's ingestion token as Authorization: Splunk <token> (or Bearer <token>); " +
  'a token in the URL (?token=) is refused with 400 code 16. ';
/** The most an acknowledgement query's body may hold. */
const MAX_ACK_BODY_BYTES = 1_048_576;

/** A small body (an acknowledgement query), refused with 413 beyond `max` bytes. */
async function readLimited(body: Readable | undefined, max: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body ?? []) {
    size += (chunk as Buffer).length;
    if (size > max) {
      body?.destroy();
      throw new AppError('request.body_too_large', { detail: `an acknowledgement query holds at most ${max} bytes` });
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

function header(req: FastifyRequest, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

function hecRequest(req: FastifyRequest): HecRequest {
  const query = req.query as Record<string, unknown>;
  const channel =
    header(req, 'x-splunk-request-channel') ?? (typeof query.channel === 'string' ? query.channel : undefined);
  return {
    authorization: header(req, 'authorization'),
    channel,
    query,
    contentEncoding: header(req, 'content-encoding'),
    contentLength: contentLength(req.headers),
    body: req.body as Readable | undefined,
  };
}

/** Answers in HEC's shape; Weir's own errors are told in it too (answers.ts), others go to the error handler. */
async function answer<B extends HecAnswer['body'] = HecBodyType>(
  req: FastifyRequest,
  reply: FastifyReply,
  run: () => Promise<HecAnswer>,
): Promise<B> {
  let a: HecAnswer;
  try {
    a = await run();
  } catch (err) {
    const told = fromError(err, Boolean(header(req, 'authorization')?.trim()));
    if (!told) throw err;
    a = told;
  }
  if (a.headers) void reply.headers(a.headers);
  reply.code(a.status);
  // Each operation's answers are of its own kind (HecBody, or HecAcks for the ack query).
  return a.body as B;
}

export function hecRoutes(app: Api, service: HecService): void {
  rawBodyScope(app, (scope) => {
    const eventPaths = [
      ['/services/collector/event', 'hec.event'],
      ['/services/collector', 'hec.event_root'],
      ['/services/collector/event/1.0', 'hec.event_1_0'],
    ] as const;
    for (const [url, operationId] of eventPaths) {
      route(scope, {
        method: 'POST',
        url,
        operationId,
        summary:
          'Splunk HEC: send events as concatenated JSON envelopes {time, host, source, sourcetype, fields, event}',
        description:
          AUTH +
          'An object event is the Weir event; a string event becomes {"message": ...}; the envelope metadata is kept under "hec". ' +
          'The stream is the sourcetype made a stream name (else ?sourcetype=, else "hec"). The first bad envelope stops the ' +
          'request: the events before it are accepted, the answer is 400 with its code and invalid-event-number. With a data ' +
          'channel (X-Splunk-Request-Channel, a UUID) the answer carries an ackId to query at /services/collector/ack.',
        access: INGESTION_TOKEN,
        query: 'open',
        audit: false,
        schema: { querystring: HecQuery, body: HecBody, response: { 200: HecResult, ...REFUSALS } },
        handler: (req, reply) => answer<HecBodyType>(req, reply, () => service.event(hecRequest(req))),
      });
    }
    for (const [url, operationId] of [
      ['/services/collector/raw', 'hec.raw'],
      ['/services/collector/raw/1.0', 'hec.raw_1_0'],
    ] as const) {
      route(scope, {
        method: 'POST',
        url,
        operationId,
        summary: 'Splunk HEC: send raw text, one event per line, metadata from the query',
        description:
          AUTH +
          'Each non-blank line becomes {"message": line, "hec": {sourcetype, source, host, index from the query}} in the ' +
          'stream named by ?sourcetype= (default "hec").',
        access: INGESTION_TOKEN,
        query: 'open',
        audit: false,
        schema: { querystring: HecQuery, body: HecRawBody, response: { 200: HecResult, ...REFUSALS } },
        handler: (req, reply) => answer<HecBodyType>(req, reply, () => service.raw(hecRequest(req))),
      });
    }
    route(scope, {
      method: 'POST',
      url: '/services/collector/ack',
      operationId: 'hec.ack',
      summary: 'Splunk HEC indexer acknowledgement: which requests of a data channel are processed',
      description:
        AUTH +
        'Body {"acks": [ackId, ...]}; the channel in X-Splunk-Request-Channel (or ?channel=), 400 code 10 without one. ' +
        'An ackId answers true once every event of its request is normalized and routed (in the delivery outbox, ' +
        'filtered or quarantined), then is forgotten; unknown or expired ids answer false.',
      access: INGESTION_TOKEN,
      query: 'open',
      audit: false,
      schema: { querystring: HecAckQuery, body: HecAckBody, response: { 200: HecAckResult, ...REFUSALS } },
      handler: (req, reply) =>
        answer<HecAcks | HecBodyType>(req, reply, async () =>
          service.ack(hecRequest(req), await readLimited(req.body as Readable | undefined, MAX_ACK_BODY_BYTES)),
        ),
    });
  });

  for (const [url, operationId] of [
    ['/services/collector/health', 'hec.health'],
    ['/services/collector/health/1.0', 'hec.health_1_0'],
  ] as const) {
    route(app, {
      method: 'GET',
      url,
      operationId,
      summary: 'Splunk HEC health: 200 code 17 "HEC is healthy"',
      description:
        'No credential needed; with Authorization: Splunk <token> the token is checked too (401 code 2/3, 403 code 4).',
      access: { requires: 'public' },
      query: 'open',
      audit: false,
      schema: { response: { 200: HecResult, 400: HecResult, 401: HecResult, 403: HecResult, 503: ErrorBody } },
      handler: (req, reply) =>
        answer<HecBodyType>(req, reply, () =>
          service.health({ authorization: header(req, 'authorization'), query: req.query as Record<string, unknown> }),
        ),
    });
  }
}
