// Route registration. Every operation is declared through route(): its operationId
// (`family.verb`), what it requires (permission, `authenticated` or `public`, plus the
// global-scope flag) and every response status. A route registered any other way inside
// the API scope fails at start (declareAccessGuard), so no endpoint ships unguarded.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type {
  ContextConfigDefault,
  FastifyBaseLogger,
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  FastifySchema,
  HTTPMethods,
  RawReplyDefaultExpression,
  RawRequestDefaultExpression,
  RawServerDefault,
  RouteGenericInterface,
  RouteHandlerMethod,
  RouteOptions,
} from 'fastify';
import { isRequirement, type AccessDeclaration } from '../../core/access.js';
import type { Actor } from '../../core/actor.js';
import { withInputBounds, type InputPart } from './input.js';
import { ErrorBody } from './schemas.js';
import { defaultAuditMode, type AuditMode } from './unit-of-work.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    access?: AccessDeclaration;
    operationId?: string;
    audit?: AuditMode;
    /** Query parameters the route does not declare are left to its handler instead of refused. */
    openQuery?: boolean;
    /** An operation Weir adds to the spec's (x-weir-addition in the API document). */
    addition?: boolean;
  }
  interface FastifyRequest {
    /** The authenticated caller; undefined on public routes without credentials. */
    actor?: Actor;
  }
}

export type Api = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  FastifyBaseLogger,
  TypeBoxTypeProvider
>;

export type Handler<S extends FastifySchema> = RouteHandlerMethod<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  RouteGenericInterface,
  ContextConfigDefault,
  S,
  TypeBoxTypeProvider
>;

export interface RouteDefinition<S extends FastifySchema> {
  method: HTTPMethods;
  url: string;
  /** `family.verb`, unique across the API. */
  operationId: string;
  summary: string;
  description?: string;
  access: AccessDeclaration;
  /** params/querystring/body/headers and `response` with every success status. */
  schema: S & { response: Record<number, unknown> };
  bodyLimit?: number;
  /**
   * strict (default): an undeclared query parameter is a 422 (contract: no silently ignored
   * filter). open: the handler receives undeclared ones and decides (only for endpoints whose
   * callers add parameters of their own, such as push ingestion); declared ones are still typed.
   */
  query?: 'strict' | 'open';
  /** Hidden from the OpenAPI document (documentation infrastructure only). */
  hidden?: boolean;
  /**
   * An operation the spec does not list, which Weir adds (running a search, replay): marked
   * x-weir-addition in the API document, and its description says so.
   */
  addition?: boolean;
  /** The body (an object whose every field is optional) may be left out: it is read as {}. */
  optionalBody?: boolean;
  /**
   * How the operation is audited. Default: mutating methods in one transaction with their
   * changes; `separate` for operations that must not hold a transaction (outbound calls);
   * false for operations that change no state (dry runs) or are not administrative (ingestion).
   */
  audit?: AuditMode;
  handler: Handler<S>;
}

const OPERATION_ID = /^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+$/;

/**
 * The error statuses every operation declares, as the server can answer them: 414 and 431 come
 * from Node's HTTP parser before any route, 422 from the strict query check (an unknown query
 * parameter is refused on every operation), 404 wherever an input names an object (in the
 * path, the body or the query) that may not exist or be visible.
 */
function errorResponses(access: AccessDeclaration, schema: FastifySchema): Record<number, unknown> {
  const out: Record<number, unknown> = { 500: ErrorBody, 414: ErrorBody, 422: ErrorBody, 431: ErrorBody };
  const takesInput = Boolean(schema.body || schema.querystring || schema.params);
  if (takesInput) out[400] = ErrorBody;
  if (takesInput) out[404] = ErrorBody;
  if (schema.body) out[413] = ErrorBody;
  if (access.requires !== 'public') {
    out[401] = ErrorBody;
    out[403] = ErrorBody;
    out[429] = ErrorBody;
  }
  return out;
}

const INPUT_PARTS: Record<string, InputPart> = {
  params: 'params',
  querystring: 'querystring',
  headers: 'headers',
  body: 'body',
};

/** The request parts of a route's schema with the shared input bounds (input.ts). */
function boundedInput(schema: FastifySchema): FastifySchema {
  const out: Record<string, unknown> = { ...schema };
  for (const [key, part] of Object.entries(INPUT_PARTS)) {
    if (out[key] !== undefined) out[key] = withInputBounds(out[key], part);
  }
  return out as FastifySchema;
}

export function route<S extends FastifySchema>(app: Api, def: RouteDefinition<S>): void {
  if (!OPERATION_ID.test(def.operationId)) {
    throw new Error(`operationId "${def.operationId}" of ${def.method} ${def.url} is not of the form family.verb`);
  }
  const family = def.operationId.split('.')[0];
  const op = {
    operationId: def.operationId,
    method: def.method,
    url: def.url,
    audit: def.audit ?? defaultAuditMode(def.method),
  };
  const handler = def.handler as unknown as (req: FastifyRequest, reply: FastifyReply) => Promise<unknown>;
  const options = {
    method: def.method,
    url: def.url,
    bodyLimit: def.bodyLimit,
    ...(def.optionalBody
      ? {
          preValidation: (req: FastifyRequest, _reply: FastifyReply, done: () => void) => {
            if (req.body === undefined || req.body === null) req.body = {};
            done();
          },
        }
      : {}),
    config: {
      access: def.access,
      operationId: def.operationId,
      audit: op.audit,
      ...(def.query === 'open' ? { openQuery: true } : {}),
      ...(def.addition ? { addition: true } : {}),
    },
    schema: {
      ...boundedInput(def.schema),
      operationId: def.operationId,
      summary: def.summary,
      ...(def.description || def.addition
        ? {
            description:
              `${def.addition ? "Weir's addition to the service's interface. " : ''}${def.description ?? ''}`.trim(),
          }
        : {}),
      tags: [family],
      ...(def.hidden ? { hide: true } : {}),
      response: { ...errorResponses(def.access, def.schema), ...def.schema.response },
    },
    handler:
      op.audit === false
        ? handler
        : function audited(this: FastifyInstance, req: FastifyRequest, reply: FastifyReply) {
            return this.unitOfWork.run(req, reply, op, () => handler.call(this, req, reply));
          },
  };
  app.route(options as unknown as RouteOptions);
}

/**
 * Refuses, at start, any route of the API scope that declares no access requirement or
 * no operationId. Registered on the API scope before any module registers its routes.
 */
export function declareAccessGuard(app: FastifyInstance): void {
  const seen = new Map<string, string>();
  app.addHook('onRoute', (opts) => {
    const where = `${String(opts.method)} ${opts.url}`;
    const access = opts.config?.access;
    if (!access || !isRequirement(access.requires)) {
      throw new Error(`Route ${where} declares no access requirement (permission, 'authenticated' or 'public')`);
    }
    const operationId = opts.config?.operationId;
    if (!operationId) throw new Error(`Route ${where} declares no operationId`);
    // HEAD routes Fastify derives from GET share the operationId.
    const method = String(opts.method);
    if (method !== 'HEAD') {
      const previous = seen.get(operationId);
      if (previous && previous !== where) {
        throw new Error(`operationId ${operationId} is used by both ${previous} and ${where}`);
      }
      seen.set(operationId, where);
    }
  });
}
