// OpenAPI 3.1, generated from the route schemas; served at /api/openapi.json, with
// interactive docs at /api/docs. Each operation carries the access it declared.
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance, FastifySchema, RouteOptions } from 'fastify';

export const OPENAPI_PATH = '/api/openapi.json';

/** Schemas published as named components (#/components/schemas/<name>) for readers outside the API (files kept in Git). */
const namedSchemas = new Map<string, Record<string, unknown>>();
export function publishSchema(name: string, schema: Record<string, unknown>): void {
  namedSchemas.set(name, schema);
}

export async function registerOpenApi(app: FastifyInstance, version: string): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Weir API',
        version,
        description:
          'Weir: a multi-tenant security event pipeline. Errors are `{detail, error?: {code, message, details}}`; ' +
          'match on `error.code`. `x-weir-requires` on each operation names what the caller needs.',
      },
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer', description: 'API token (svcsk_...)' },
          session: { type: 'apiKey', in: 'cookie', name: 'weir_session' },
        },
      },
    },
    hideUntagged: true,
    transformObject: (doc) => {
      const openapi = (doc as { openapiObject: { components?: { schemas?: Record<string, unknown> } } }).openapiObject;
      openapi.components = {
        ...openapi.components,
        schemas: { ...openapi.components?.schemas, ...Object.fromEntries(namedSchemas) },
      };
      return openapi as never;
    },
    transform: ({ schema, url, route }: { schema: FastifySchema; url: string; route: RouteOptions }) => {
      const access = route.config?.access;
      if (!access || !schema) return { schema, url };
      const extra: Record<string, unknown> = {
        'x-weir-requires': access.requires,
        'x-weir-global-scope': Boolean(access.globalScope),
        security: access.requires === 'public' ? [] : [{ bearer: [] }, { session: [] }],
        ...(route.config?.addition ? { 'x-weir-addition': true } : {}),
      };
      return { schema: { ...schema, ...extra } as FastifySchema, url };
    },
  });
  await app.register(swaggerUi, { routePrefix: '/api/docs' });
}
