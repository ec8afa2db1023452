// The one place errors become HTTP answers: {detail: string, error: {code, message, details}}.
// Bad input is a 4xx with a string detail, never a 5xx; an unexpected fault is a 500
// whose body reveals nothing and whose log line carries the correlation id.
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { ErrorObject } from 'ajv';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, ERROR_CATALOG, isAppError, type ErrorCode } from '../../core/errors.js';
import { issueMessage } from '../validation-issues.js';
import type { ConsoleFallback } from './console.js';
import type { RouteTable } from './conventions.js';

export interface ErrorBodyShape {
  detail: string;
  error: { code: string; message: string; details: Record<string, unknown> };
}

export function errorBody(code: ErrorCode, detail: string, details: Record<string, unknown> = {}): ErrorBodyShape {
  return { detail, error: { code, message: detail, details } };
}

function send(reply: FastifyReply, err: AppError): FastifyReply {
  for (const [name, value] of Object.entries(err.headers)) reply.header(name, value);
  return reply
    .status(err.status)
    .type('application/json')
    .send(errorBody(err.code, err.message, err.details));
}

function validationError(err: FastifyError): AppError {
  const where = err.validationContext ?? 'request';
  const raw = (err.validation ?? []) as ErrorObject[];
  // A union of literals fails once per branch ("must be equal to constant"): say the choices.
  const choices = new Map<string, unknown[]>();
  for (const v of raw) {
    const at = `${where}${v.instancePath ?? ''}`;
    if (v.keyword === 'const') choices.set(at, [...(choices.get(at) ?? []), v.params?.allowedValue]);
    if (v.keyword === 'enum' && Array.isArray(v.params?.allowedValues))
      choices.set(at, [...(choices.get(at) ?? []), ...(v.params.allowedValues as unknown[])]);
  }
  const issues = raw.map((v) => {
    const missing = typeof v.params?.missingProperty === 'string' ? `/${v.params.missingProperty}` : '';
    const extra = typeof v.params?.additionalProperty === 'string' ? `/${v.params.additionalProperty}` : '';
    const path = `${where}${v.instancePath ?? ''}${missing}${extra}`;
    const allowed = choices.get(path);
    const message = extra
      ? 'is not a known field'
      : allowed && (v.keyword === 'const' || v.keyword === 'enum')
        ? `must be one of: ${allowed.map((a) => JSON.stringify(a)).join(', ')}`
        : issueMessage(v);
    return { location: path, message };
  });
  const first = issues[0];
  const detail = first ? `${first.location} ${first.message}` : 'The request does not match the schema';
  const dateIssue = issues.find((i) => /format "date-time"/.test(i.message));
  if (dateIssue && where === 'querystring') {
    const name = dateIssue.location.split('/')[1] ?? 'date';
    return new AppError('request.invalid_date', {
      detail: `Query parameter '${name}' is not a valid date`,
      details: { parameter: name, errors: issues },
    });
  }
  return new AppError('request.validation_failed', { detail, details: { errors: issues } });
}

const FASTIFY_CODES: Record<string, ErrorCode> = {
  FST_ERR_CTP_BODY_TOO_LARGE: 'request.body_too_large',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'request.unsupported_media_type',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'request.invalid',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'request.malformed_json',
  FST_ERR_CTP_INVALID_JSON_BODY: 'request.malformed_json',
};

/** Maps anything thrown to an AppError; unknown faults become internal.error. */
export function toAppError(err: unknown): AppError {
  if (isAppError(err)) return err;
  const e = err as FastifyError;
  if (e?.validation) return validationError(e);
  const mapped = e?.code ? FASTIFY_CODES[e.code] : undefined;
  if (mapped) {
    const detail =
      mapped === 'request.body_too_large'
        ? 'Request body is larger than the allowed limit'
        : (e.message ?? ERROR_CATALOG[mapped].message);
    return new AppError(mapped, { detail });
  }
  if (e instanceof SyntaxError)
    return new AppError('request.malformed_json', { detail: `Malformed JSON body: ${e.message}` });
  const status = typeof e?.statusCode === 'number' ? e.statusCode : 500;
  if (status >= 400 && status < 500) {
    return new AppError('request.invalid', { detail: e.message || 'Bad request', status });
  }
  return new AppError('internal.error', { cause: err });
}

/**
 * Fastify's router answers a few errors before any route or hook runs (a malformed
 * percent-encoding, a path parameter past maxParamLength): the same error body as the rest.
 */
export function frameworkErrors(err: FastifyError, _request: FastifyRequest, reply: FastifyReply): FastifyReply {
  if (err.code === 'FST_ERR_MAX_PARAM_LENGTH') {
    return send(
      reply,
      new AppError('request.uri_too_long', { detail: 'A path parameter of the URL is longer than 256 characters' }),
    );
  }
  if (err.code === 'FST_ERR_BAD_URL') {
    return send(
      reply,
      new AppError('request.bad_url', {
        detail: 'The URL path is not valid: a percent-encoded sequence is not UTF-8 text',
      }),
    );
  }
  return send(reply, toAppError(err));
}

const CLIENT_ERRORS: Record<string, [ErrorCode, string]> = {
  HPE_HEADER_OVERFLOW: [
    'request.header_too_large',
    'The request headers are larger than the server accepts (16 KiB in all)',
  ],
  ERR_HTTP_REQUEST_TIMEOUT: ['request.timeout', 'The request did not arrive in time'],
};

/**
 * Errors Node's HTTP parser raises before Fastify sees a request (headers too large, a
 * request that never completes, bytes that are not HTTP): answered with the error body.
 */
export function clientErrorHandler(err: NodeJS.ErrnoException, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const [code, detail] =
    CLIENT_ERRORS[err.code ?? ''] ??
    (['request.malformed_http', 'The request is not valid HTTP/1.1'] as [ErrorCode, string]);
  const status = ERROR_CATALOG[code].status;
  const body = JSON.stringify(errorBody(code, detail));
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(err);
}

export function errorHandling(app: FastifyInstance, table: RouteTable, site?: ConsoleFallback): void {
  app.setErrorHandler((err: unknown, request: FastifyRequest, reply: FastifyReply) => {
    const appError = toAppError(err);
    if (appError.status >= 500) {
      request.log.error({ err }, 'request failed');
    } else {
      request.log.info({ code: appError.code, status: appError.status }, appError.message);
    }
    return send(reply, appError);
  });

  app.setNotFoundHandler((request, reply) => {
    const [path = '/', query] = splitUrl(request.url);
    const twin = table.slashTwin(request.method, path);
    if (twin) {
      return reply.redirect(`${twin}${query ? `?${query}` : ''}`, 307);
    }
    const allowed = table.allowedMethods(path);
    if (allowed.length > 0) {
      return send(
        reply,
        new AppError('route.method_not_allowed', {
          detail: `Method ${request.method} is not allowed on ${path}`,
          details: { allowed },
          headers: { allow: allowed.join(', ') },
        }),
      );
    }
    if (site?.isPage(request)) {
      if (site.page) return site.page(reply);
      if (site.missing) return send(reply, new AppError('route.not_found', { detail: site.missing }));
    }
    return send(reply, new AppError('route.not_found', { detail: `No route ${request.method} ${path}` }));
  });
}

function splitUrl(url: string): [string, string | undefined] {
  const i = url.indexOf('?');
  return i < 0 ? [url, undefined] : [url.slice(0, i), url.slice(i + 1)];
}
