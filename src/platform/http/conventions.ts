// The HTTP conventions of the spec and contract, each implemented once for every route:
// correlation ids, strict query parameters with the org_id/organization_id alias, typed
// dates, and the route table used for 307 (trailing slash) and 405 answers.
import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import FindMyWay, { type HTTPMethod } from 'find-my-way';
import { parseDate } from '../../core/dates.js';
import { AppError } from '../../core/errors.js';
import { workContext } from '../context.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Query parameter names the route declares (computed at registration). */
    queryNames?: readonly string[];
    /** Query parameters typed as dates, converted to Date before the handler. */
    queryDates?: readonly string[];
  }
}

export const CORRELATION_HEADER = 'x-correlation-id';
/** What is reused as sent: printable ASCII (space to tilde: an AWS load balancer's `Root=…;Parent=…` too), up to 200 characters. */
const CORRELATION_RE = /^[\x20-\x7e]{1,200}$/;

/** Reuses a sent X-Correlation-Id (printable ASCII, at most 200 characters, not blank); otherwise generates one. */
export function correlationId(req: { headers: Record<string, string | string[] | undefined> }): string {
  const incoming = req.headers[CORRELATION_HEADER];
  const value = Array.isArray(incoming) ? incoming[0] : incoming;
  return value && CORRELATION_RE.test(value) && value.trim() !== '' ? value : randomUUID();
}

/** Runs the rest of the request inside its work context and echoes the id. */
export function correlationHooks(app: FastifyInstance): void {
  app.addHook('onRequest', (request, reply, done) => {
    reply.header(CORRELATION_HEADER, request.id);
    workContext.run({ correlationId: request.id }, done);
  });
}

/**
 * Query parameter names whose values may be credentials (senders put tokens in URLs), and the
 * OAuth authorization response's code, state and error_description (the SSO callback: a
 * provider's text may echo the client's credentials; the answer's detail carries it redacted).
 */
const SECRET_QUERY_NAME =
  /(token|key|secret|password|passwd|auth|signature|sig|session)|^(code|state|error_description)$/i;

/** The URL for a log line: values of credential-like query parameters are censored. */
export function loggableUrl(url: string): string {
  const q = url.indexOf('?');
  if (q < 0) return url;
  const params = url
    .slice(q + 1)
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=');
      const name = eq < 0 ? pair : pair.slice(0, eq);
      let decoded = name;
      try {
        decoded = decodeURIComponent(name);
      } catch {
        // a malformed escape is logged as sent
      }
      return eq >= 0 && SECRET_QUERY_NAME.test(decoded) ? `${name}=[redacted]` : pair;
    });
  return `${url.slice(0, q)}?${params.join('&')}`;
}

/** Names that mean the same parameter; either is accepted wherever one is declared. */
const ALIASES: Record<string, string> = { org_id: 'organization_id', organization_id: 'org_id' };

interface QuerySchemaLike {
  properties?: Record<string, { format?: string }>;
}

/** At registration: record each route's query names and date-typed fields. */
export function recordQueryShape(app: FastifyInstance): void {
  app.addHook('onRoute', (opts) => {
    const qs = (opts.schema?.querystring ?? undefined) as QuerySchemaLike | undefined;
    const props = qs?.properties ?? {};
    opts.config = {
      ...opts.config,
      queryNames: Object.keys(props),
      queryDates: Object.entries(props)
        .filter(([, s]) => s.format === 'date-time')
        .map(([name]) => name),
    };
  });
}

function strictQuery(request: FastifyRequest): void {
  if (request.routeOptions.config.openQuery) return;
  const names = request.routeOptions.config.queryNames ?? [];
  const query = request.query as Record<string, unknown> | undefined;
  if (!query) return;
  for (const key of Object.keys(query)) {
    if (names.includes(key)) continue;
    const alias = ALIASES[key];
    if (alias && names.includes(alias)) {
      if (alias in query && String(query[alias]) !== String(query[key])) {
        throw new AppError('request.conflicting_parameters', {
          detail: `Query parameters '${key}' and '${alias}' name the same value and disagree`,
          details: { parameters: [key, alias] },
        });
      }
      query[alias] = query[key];
      delete query[key];
      continue;
    }
    throw new AppError('request.unknown_parameter', {
      detail: `Unknown query parameter '${key}'`,
      details: { parameter: key, allowed: names },
    });
  }
}

function convertDates(request: FastifyRequest): void {
  const dates = request.routeOptions.config.queryDates;
  if (!dates?.length) return;
  const query = request.query as Record<string, unknown>;
  for (const name of dates) {
    const value = query[name];
    if (typeof value !== 'string') continue;
    const parsed = parseDate(value);
    if (!parsed) {
      throw new AppError('request.invalid_date', {
        detail: `Query parameter '${name}' is not a valid date`,
        details: { parameter: name },
      });
    }
    query[name] = parsed;
  }
}

export function queryHooks(app: FastifyInstance): void {
  app.addHook('preValidation', async (request) => strictQuery(request));
  app.addHook('preHandler', async (request) => convertDates(request));
}

/**
 * A shadow of the route table that answers "which declared route would this path be":
 * the trailing-slash twin (307) or the same path under other methods (405).
 */
export class RouteTable {
  readonly #router = FindMyWay({ ignoreTrailingSlash: false, ignoreDuplicateSlashes: false });
  readonly #methods = new Map<string, Set<string>>();

  track(app: FastifyInstance): void {
    app.addHook('onRoute', (opts) => {
      const methods = Array.isArray(opts.method) ? opts.method : [opts.method];
      for (const method of methods) {
        this.#router.on(method as HTTPMethod, opts.url, () => undefined);
        const key = opts.url;
        if (!this.#methods.has(key)) this.#methods.set(key, new Set());
        this.#methods.get(key)?.add(method);
      }
    });
  }

  /** The declared twin of `path` with/without the trailing slash, if one exists. */
  slashTwin(method: string, path: string): string | undefined {
    if (path === '/' || path === '') return undefined;
    const twin = path.endsWith('/') ? path.slice(0, -1) : `${path}/`;
    return this.#router.find(method as HTTPMethod, twin) ? twin : undefined;
  }

  /** Methods under which `path` is declared. */
  allowedMethods(path: string): string[] {
    const found = new Set<string>();
    for (const method of ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']) {
      const hit = this.#router.find(method as HTTPMethod, path);
      if (hit) found.add(method);
    }
    return [...found];
  }
}
