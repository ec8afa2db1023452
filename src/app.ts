// buildApp(container): the Fastify instance with its core conventions and every module's
// routes. Order matters: conventions first, then the API scope whose onRoute guard
// refuses any undeclared route, then the modules.
import cookie from '@fastify/cookie';
import cors from '@fastify/cors';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Container } from './container.js';
import { accessHooks } from './platform/http/access.js';
import {
  CONSOLE_MISSING,
  isConsolePage,
  locateConsole,
  registerConsole,
  type ConsoleFallback,
} from './platform/http/console.js';
import { corsOptions } from './platform/http/cors.js';
import {
  correlationHooks,
  correlationId,
  loggableUrl,
  queryHooks,
  recordQueryShape,
  RouteTable,
} from './platform/http/conventions.js';
import { clientErrorHandler, errorHandling, frameworkErrors } from './platform/http/errors.js';
import { inputTextHook } from './platform/http/input.js';
import { parseJsonBody } from './platform/http/json.js';
import { metricsRoute } from './platform/http/metrics.js';
import { httpServerMetrics } from './platform/http/server-metrics.js';
import { OPENAPI_PATH, registerOpenApi } from './platform/http/openapi.js';
import { declareAccessGuard, route, type Api } from './platform/http/routes.js';
import { auditRejections, createUnitOfWork } from './platform/http/unit-of-work.js';
import { validatorCompiler } from './platform/http/validation.js';
import { withAuditTarget } from './modules/audit/service.js';
import { packageVersion } from './platform/version.js';

export type RouteModule = (app: Api) => void;

export interface BuildOptions {
  /** Extra route modules (tests register fixtures through the same mechanism). */
  extraRoutes?: RouteModule[];
}

export async function buildApp(c: Container, options: BuildOptions = {}): Promise<Api> {
  const app = Fastify({
    loggerInstance: c.logger as FastifyBaseLogger,
    // Request lines are written by requestLogging() inside the request's work context,
    // so they carry the correlation id like every other line of the request.
    logController: new LogController({ disableRequestLogging: true }),
    childLoggerFactory: (logger) => logger,
    genReqId: (req) => correlationId(req),
    bodyLimit: c.config.bodyLimitBytes,
    trustProxy: c.config.trustProxy,
    routerOptions: { ignoreTrailingSlash: false, ignoreDuplicateSlashes: false, maxParamLength: 256 },
    frameworkErrors,
    clientErrorHandler,
  }).withTypeProvider<TypeBoxTypeProvider>();
  app.setValidatorCompiler(validatorCompiler());

  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, body, done) => {
    try {
      done(null, parseJsonBody(body as string, c.config.jsonMaxDepth));
    } catch (err) {
      done(err as Error, undefined);
    }
  });

  const table = new RouteTable();
  const site = locateConsole(c.config.consoleDir);
  if (site.missing)
    c.logger.warn(
      { dir: site.missing },
      'the console is not built there: `npm run build` builds it; the API is served without it',
    );
  correlationHooks(app);
  requestLogging(app);
  if (c.telemetry.enabled) httpServerMetrics(app, c.telemetry.meter);
  // Filled in once the console's files are registered (after the error handling, which its
  // routes must get like every other).
  const fallback: ConsoleFallback = { isPage: isConsolePage, ...(site.site ? {} : { missing: CONSOLE_MISSING }) };
  errorHandling(app, table, fallback);
  await app.register(cors, corsOptions(c.config.corsOrigins));
  await app.register(cookie);
  app.decorate(
    'unitOfWork',
    createUnitOfWork({ db: c.database.db, audit: { record: (e) => c.audit.record(e), withTarget: withAuditTarget } }),
  );
  await registerOpenApi(app, packageVersion());
  if (site.site) fallback.page = (await registerConsole(app, site.site)).page;

  await app.register(async (api) => {
    declareAccessGuard(api);
    recordQueryShape(api);
    table.track(api);
    accessHooks(api, c.authenticator);
    queryHooks(api);
    inputTextHook(api);
    auditRejections(api);
    const typed = api.withTypeProvider<TypeBoxTypeProvider>();
    route(typed, {
      method: 'GET',
      url: OPENAPI_PATH,
      operationId: 'docs.openapi',
      summary: 'The OpenAPI 3.1 document of this instance',
      access: { requires: 'public' },
      hidden: true,
      schema: { response: { 200: Type.Object({}, { additionalProperties: true }) } },
      handler: async () => app.swagger() as unknown as Record<string, unknown>,
    });
    for (const routes of c.routes) routes(typed);
    if (c.telemetry.scrape) metricsRoute(c.telemetry.scrape)(typed);
    for (const routes of options.extraRoutes ?? []) routes(typed);
  });

  await app.ready();
  return app;
}

/** Probes and scrapes come every few seconds: an answered one is logged at debug, not info. */
const PROBE_URLS = new Set(['/healthz', '/readyz', '/metrics']);

function requestLogging(app: FastifyInstance): void {
  app.addHook('onResponse', (request, reply, done) => {
    const probe = reply.statusCode < 400 && PROBE_URLS.has(request.url.split('?')[0]!);
    request.log[probe ? 'debug' : 'info'](
      {
        method: request.method,
        url: loggableUrl(request.url),
        status: reply.statusCode,
        ms: Math.round(reply.elapsedTime),
      },
      'request completed',
    );
    done();
  });
}
