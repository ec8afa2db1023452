// Weir as an Amazon Data Firehose HTTP endpoint destination: POST /api/ingest/firehose/{stream}
// with the integration's ingestion token as the Firehose access key, answered as AWS's
// "HTTP endpoint delivery request and response specifications" say (docs/inputs-firehose.md).
import type { FastifyReply } from 'fastify';
import { Type } from 'typebox';
import { isAppError } from '../../core/errors.js';
import { route, type Api } from '../../platform/http/routes.js';
import { firehoseStream, parseFirehose } from './firehose.js';
import { rawBodyScope, requestBody } from './routes.js';
import type { IngestService } from './service.js';

// errorMessage (the reason, on every answer but 200) is not listed as a property: the API
// document keeps that key for the validator's messages.
const FirehoseAnswer = Type.Object(
  {
    requestId: Type.String({ description: 'The request id of the delivery request (its X-Amz-Firehose-Request-Id)' }),
    timestamp: Type.Integer({ description: 'When Weir answered, in milliseconds since the epoch' }),
    detail: Type.Optional(Type.String({ description: 'Why the request was not accepted, as in errorMessage' })),
  },
  {
    additionalProperties: true,
    description:
      "AWS's HTTP endpoint response: {requestId, timestamp}, and errorMessage (a string: why, Firehose retries) on every status but 200",
  },
);

function header(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/**
 * A failure of the whole request: Firehose retries any answer but 200 until its retry
 * duration runs out, then backs the records up to S3. Never a secret: the messages are the catalog's.
 */
function failure(reply: FastifyReply, err: unknown, requestId: string) {
  if (!isAppError(err)) throw err;
  for (const [k, v] of Object.entries(err.headers)) void reply.header(k, v);
  void reply.code(err.status);
  return { requestId, timestamp: Date.now(), errorMessage: err.message, detail: err.message };
}

export function firehoseRoutes(app: Api, service: IngestService): void {
  rawBodyScope(app, (scope) => {
    route(scope, {
      method: 'POST',
      url: '/api/ingest/firehose/:stream',
      operationId: 'ingest.firehose',
      summary: 'Amazon Data Firehose HTTP endpoint: the records of a delivery request become events of the stream',
      description:
        'Authenticated by the ingestion token as the Firehose access key (X-Amz-Firehose-Access-Key). Body ' +
        '{requestId, timestamp, records: [{data: base64}]}, gzip with Content-Encoding: gzip. Each record is a JSON ' +
        'object, NDJSON, text lines (one {"message"} event per line) or a CloudWatch Logs subscription message (one ' +
        'event per log event; control messages give none). 200 when every record was accepted; any other status ' +
        'means nothing was kept and Firehose sends the whole request again.',
      access: { requires: 'public', ownCredential: 'firehose' },
      addition: true,
      audit: false,
      query: 'open',
      schema: {
        params: Type.Object({ stream: Type.String({ maxLength: 64 }) }),
        response: {
          200: FirehoseAnswer,
          400: FirehoseAnswer,
          401: FirehoseAnswer,
          403: FirehoseAnswer,
          413: FirehoseAnswer,
          415: FirehoseAnswer,
          429: FirehoseAnswer,
          503: FirehoseAnswer,
        },
      },
      handler: async (req, reply) => {
        let requestId = header(req.headers['x-amz-firehose-request-id']) ?? '';
        try {
          const stream = firehoseStream(req.params.stream);
          const outcome = await service.receive(
            {
              token: header(req.headers['x-amz-firehose-access-key'])?.trim() || undefined,
              ...requestBody(req),
            },
            (body) => {
              const parsed = parseFirehose(body, stream);
              requestId ||= parsed.requestId ?? '';
              return parsed.events;
            },
          );
          if (outcome.accepted.every(Boolean)) return { requestId, timestamp: Date.now() };
          // Firehose resends whole requests: the part already accepted will come again (at least once).
          void reply.code(503).header('retry-after', '5');
          const message = `Weir accepted ${outcome.accepted_count} of ${outcome.accepted.length} events; resend the request`;
          return { requestId, timestamp: Date.now(), errorMessage: message, detail: message };
        } catch (err) {
          return failure(reply, err, requestId);
        }
      },
    });
  });
}
