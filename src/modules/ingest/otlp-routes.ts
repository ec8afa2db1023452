// OTLP/HTTP logs input (docs/inputs-otlp.md): an OpenTelemetry Collector's otlphttp exporter
// or an SDK's log exporter POSTs ExportLogsServiceRequest to <endpoint>/v1/logs, in protobuf or
// OTLP/JSON, gzip per Content-Encoding, with the ingestion token as Authorization: Bearer.
// Each log record becomes one event of the token's integration. Answers follow the OTLP/HTTP
// specification: 200 with ExportLogsServiceResponse (partial_success when records were
// refused), 4xx/5xx with a google.rpc.Status in the request's encoding, Retry-After on 429/503.
import { Type } from 'typebox';
import { AppError, isAppError } from '../../core/errors.js';
import { decodeLogsJson, decodeLogsProtobuf, type OtlpLogs } from '../../pipeline/sources/otlp/logs.js';
import {
  exportLogsResponse,
  OTLP_CONTENT_TYPE,
  otlpEncoding,
  statusBody,
  type OtlpEncoding,
} from '../../pipeline/sources/otlp/messages.js';
import { route, type Api } from '../../platform/http/routes.js';
import { declaredContentType, presentedToken, rawBodyScope, requestBody } from './routes.js';
import type { IngestService } from './service.js';

/** The OTLP/HTTP default path, and the same under the API for an endpoint of <base>/api/ingest/otlp. */
export const OTLP_LOGS_PATHS = ['/v1/logs', '/api/ingest/otlp/v1/logs'] as const;
const RESEND_AFTER_S = 5;

const Protocol = (description: string) =>
  Type.Unsafe<unknown>({
    description: `${description}; application/x-protobuf or application/json, as the request was sent`,
  });

const DESCRIPTION =
  'OTLP/HTTP logs export (OpenTelemetry protocol 1.x): the body is an ExportLogsServiceRequest, Content-Type ' +
  'application/x-protobuf or application/json (OTLP/JSON), optionally Content-Encoding: gzip. Authenticated by ' +
  'the ingestion token (Authorization: Bearer <svcik_...> or X-Ingest-Token). Each log record becomes one event ' +
  'of the integration that owns the token, on the stream its weir.stream attribute (log record, else resource) ' +
  'names, else its resource service.name, else "otlp". 200 with ExportLogsServiceResponse once the events are ' +
  'durably accepted, with partial_success naming records refused for their content (not to be resent); 400 with ' +
  'a google.rpc.Status when the body is not a valid request; 429 and 503 (with Retry-After) to be retried.';

export function otlpRoutes(app: Api, service: IngestService, options: { jsonMaxDepth: number }): void {
  rawBodyScope(app, (scope) => {
    for (const url of OTLP_LOGS_PATHS) {
      const bare = url === '/v1/logs';
      route(scope, {
        method: 'POST',
        url,
        operationId: bare ? 'ingest.otlp_logs' : 'ingest.otlp_logs_prefixed',
        summary: bare
          ? 'OTLP/HTTP logs export at the protocol’s default path (an OTLP endpoint of the server’s base URL)'
          : 'OTLP/HTTP logs export for an OTLP endpoint of <base URL>/api/ingest/otlp',
        description: DESCRIPTION,
        addition: true,
        access: { requires: 'public', ownCredential: 'ingestion-token' },
        // Ingestion is data, not administration (as the push).
        audit: false,
        schema: {
          body: Protocol('ExportLogsServiceRequest'),
          consumes: ['application/x-protobuf', 'application/json'],
          response: {
            200: Protocol('ExportLogsServiceResponse'),
            400: Protocol('google.rpc.Status: the body is not a valid request'),
            401: Protocol('google.rpc.Status: no valid ingestion token'),
            403: Protocol('google.rpc.Status: the integration is not active'),
            413: Protocol('google.rpc.Status: the body or its events are over the limits'),
            415: Protocol('google.rpc.Status: neither application/x-protobuf nor application/json'),
            429: Protocol('google.rpc.Status: in-flight budget full, retry after Retry-After'),
            503: Protocol('google.rpc.Status: pipeline saturated or unavailable, retry after Retry-After'),
          },
        },
        handler: async (req, reply) => {
          const encoding = otlpEncoding(declaredContentType(req));
          const answer = (status: number, body: Buffer, as: OtlpEncoding) =>
            reply
              .code(status as 200)
              .header('content-type', OTLP_CONTENT_TYPE[as])
              .send(body);
          try {
            if (!encoding) {
              throw new AppError('request.unsupported_media_type', {
                detail: 'OTLP/HTTP takes Content-Type application/x-protobuf or application/json',
              });
            }
            let decoded: OtlpLogs = { events: [], rejected: 0, errorMessage: '' };
            const outcome = await service.receive(
              {
                token: presentedToken(req.headers),
                ...requestBody(req),
              },
              (body) => {
                decoded =
                  encoding === 'json'
                    ? decodeLogsJson(body, { maxDepth: options.jsonMaxDepth })
                    : decodeLogsProtobuf(body, { maxDepth: options.jsonMaxDepth });
                return decoded.events;
              },
            );
            const total = decoded.events.length;
            if (outcome.accepted_count < total) {
              // OTLP has no per-record "resend": the whole request is retried; the records already
              // accepted arrive twice (at least once, never lost).
              throw new AppError('dependency.unavailable', {
                detail: `${outcome.accepted_count} of ${total} log records were accepted before the pipeline stopped accepting; resend the request in ${RESEND_AFTER_S} s`,
                headers: { 'retry-after': String(RESEND_AFTER_S) },
              });
            }
            return answer(200, exportLogsResponse(encoding, decoded.rejected, decoded.errorMessage), encoding);
          } catch (err) {
            if (!isAppError(err)) throw err;
            const as = encoding ?? 'json';
            reply.headers(err.headers);
            return answer(err.status, statusBody(as, err.status, err.message), as);
          }
        },
      });
    }
  });
}
