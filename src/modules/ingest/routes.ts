import type { Readable } from 'node:stream';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { IncomingHttpHeaders } from 'node:http';
import { Type } from 'typebox';
import { scopeOf } from '../../core/scope.js';
import { SESSION_COOKIE } from '../auth/sessions.js';
import { route, type Api } from '../../platform/http/routes.js';
import { ErrorBody } from '../../platform/http/schemas.js';
import { ACCEPTED_MEDIA_TYPES } from './body.js';
import {
  CreatedToken,
  IngestStatus,
  IntegrationParams,
  PushBody,
  PushQuery,
  PushResult,
  StreamParams,
} from './schema.js';
import type { PushFormatChoice } from '../../pipeline/sources/push.js';
import type { IngestService, ProtocolRequest } from './service.js';

/** X-Ingest-Token wins (it can only mean an ingestion token); else Bearer, scheme in any case. */
export function presentedToken(headers: IncomingHttpHeaders): string | undefined {
  const header = headers['x-ingest-token'];
  const explicit = (Array.isArray(header) ? header[0] : header)?.trim();
  if (explicit) return explicit;
  const m = /^\s*bearer\s+(\S+)\s*$/i.exec(headers.authorization ?? '');
  return m?.[1];
}

/** The declared Content-Type, kept before the framework sees it (see the push scope below). */
const declaredType = new WeakMap<object, string | undefined>();

export function contentLength(headers: IncomingHttpHeaders): number | undefined {
  const v = headers['content-length'];
  return v !== undefined && /^\d+$/.test(v) ? Number(v) : undefined;
}

/** A raw-body route's request as the accept path reads it: the unread body and the headers framing it. */
export function requestBody(req: {
  headers: IncomingHttpHeaders;
  body: unknown;
}): Pick<ProtocolRequest, 'body' | 'contentEncoding' | 'contentLength'> {
  return {
    contentEncoding: req.headers['content-encoding'],
    contentLength: contentLength(req.headers),
    body: req.body as Readable | undefined,
  };
}

/**
 * Registers routes whose handlers read the request stream themselves (req.body is the
 * unread Readable): the push endpoint and the protocol inputs (Splunk HEC, Elasticsearch
 * _bulk, OTLP, Firehose), which take raw bytes whatever the Content-Type, gzip, limits and
 * the in-flight budget. The JSON parser of every other route is untouched. The declared
 * Content-Type is kept for declaredContentType(): the framework's own media-type check would
 * refuse a malformed one before the handler could answer in the protocol's terms.
 */
export function rawBodyScope(app: Api, register: (scope: Api) => void): void {
  void app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', (_req, payload, done) => done(null, payload));
    scope.addHook('onRequest', async (request) => {
      declaredType.set(request.raw, request.raw.headers['content-type']);
      delete request.raw.headers['content-type'];
    });
    register(scope.withTypeProvider<TypeBoxTypeProvider>());
  });
}

/** The request's Content-Type as sent (inside rawBodyScope). */
export function declaredContentType(req: { raw: object }): string | undefined {
  return declaredType.get(req.raw);
}

export function ingestRoutes(app: Api, service: IngestService): void {
  route(app, {
    method: 'GET',
    url: '/api/ingest/integrations/:integration_id',
    operationId: 'ingest.status',
    summary: "An integration's push ingestion: token state, push URL and the last 7 days of counters",
    access: { requires: 'user.manage' },
    schema: { params: IntegrationParams, response: { 200: IngestStatus } },
    handler: async (req) => service.status(scopeOf(req.actor!), req.params.integration_id),
  });

  route(app, {
    method: 'POST',
    url: '/api/ingest/integrations/:integration_id/token',
    operationId: 'ingest.create_token',
    summary: "Create (or rotate) the integration's ingestion token; the token is shown only in this answer",
    description:
      'Creating again replaces the previous token, which stops working at once. Push with Authorization: Bearer <token> or X-Ingest-Token.',
    access: { requires: 'user.manage' },
    schema: { params: IntegrationParams, response: { 201: CreatedToken } },
    handler: async (req, reply) => {
      const created = await service.createToken(req.actor!, scopeOf(req.actor!), req.params.integration_id);
      reply.code(201);
      return created;
    },
  });

  route(app, {
    method: 'DELETE',
    url: '/api/ingest/integrations/:integration_id/token',
    operationId: 'ingest.delete_token',
    summary: "Remove the integration's ingestion token; pushes with it stop at once",
    access: { requires: 'user.manage' },
    schema: { params: IntegrationParams, response: { 204: Type.Null({ description: 'Removed' }) } },
    handler: async (req, reply) => {
      await service.deleteToken(scopeOf(req.actor!), req.params.integration_id);
      reply.code(204);
      return null;
    },
  });

  // The push endpoint reads its body itself (raw bytes whatever the Content-Type, gzip,
  // limits, in-flight budget), so its own scope hands the request stream to the handler
  // unread; the JSON parser of every other route is untouched.
  rawBodyScope(app, (scope) => {
    route(scope, {
      method: 'POST',
      url: '/api/ingest/:stream',
      operationId: 'ingest.push',
      summary: 'Push events to a stream of the integration that owns the ingestion token',
      description:
        'Authenticated by the ingestion token (Authorization: Bearer <svcik_...>, scheme in any case, or X-Ingest-Token), ' +
        'not by a management token. 200 when every event was accepted, 207 with per-line errors when some were, 400 when ' +
        'none was. Answered only after the accepted events are durably enqueued. 429 (in-flight byte budget) and 503 ' +
        '(pipeline saturated or unavailable) carry Retry-After. ' +
        `Content-Type: none, ${ACCEPTED_MEDIA_TYPES.join(', ')} or application/*+json (charset utf-8 if any); others get 415. ` +
        'A gzip body needs Content-Encoding: gzip (400 ingest.undeclared_gzip otherwise). ' +
        'Query parameters: format (auto, json, ndjson) is honoured; a token in the URL (token, access_token, api_key, ...) ' +
        'is refused with 422 ingest.token_in_query; any other parameter is ignored and named in ignored_parameters.',
      // No management credential: the service checks the ingestion token itself.
      access: { requires: 'public', ownCredential: 'ingestion-token' },
      // Senders add their own parameters (cache busters, source tags): unknown ones are ignored
      // and reported, not refused (docs/decisions, ingestion query parameters).
      query: 'open',
      // One audit entry per push would cost a transaction per request: pushes are data, not administration.
      audit: false,
      schema: {
        params: StreamParams,
        querystring: PushQuery,
        body: PushBody,
        consumes: ['application/json', 'application/x-ndjson', 'text/plain'],
        response: {
          200: PushResult,
          207: PushResult,
          400: ErrorBody,
          401: ErrorBody,
          403: ErrorBody,
          415: ErrorBody,
          422: ErrorBody,
          429: ErrorBody,
          503: ErrorBody,
        },
      },
      handler: async (req, reply) => {
        const { format, ...others } = req.query as Record<string, unknown> & { format?: PushFormatChoice };
        const { status, ...result } = await service.push({
          token: presentedToken(req.headers),
          session: Boolean(req.cookies?.[SESSION_COOKIE]),
          stream: req.params.stream,
          ...(format ? { format } : {}),
          queryParameters: Object.keys(others),
          contentType: declaredContentType(req),
          ...requestBody(req),
        });
        reply.code(status);
        return result;
      },
    });
  });
}
