// OpenAPI 3.1, generated from the route schemas; served at /api/openapi.json, with
// interactive docs at /api/docs. Each operation carries the access it declared and the
// credentials it takes (security); the schemas are cleaned and shared in openapi-schemas.ts.
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance, FastifySchema, RouteOptions } from 'fastify';
import type { AccessDeclaration, IngestionCredential } from '../../core/access.js';
import { documentRouteSchema, documentSchema, hoistComponents } from './openapi-schemas.js';

export const OPENAPI_PATH = '/api/openapi.json';

/** Schemas published as named components (#/components/schemas/<name>) for readers outside the API (files kept in Git). */
const namedSchemas = new Map<string, Record<string, unknown>>();
export function publishSchema(name: string, schema: Record<string, unknown>): void {
  namedSchemas.set(name, schema);
}

const SECURITY_SCHEMES = {
  bearer: {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'svcsk_...',
    description: 'API token (svcsk_...) of a user or a service account',
  },
  session: {
    type: 'apiKey',
    in: 'cookie',
    name: 'weir_session',
    description: 'Session of a signed-in user (the console); set by POST /api/auth/login',
  },
  ingestionToken: {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'svcik_...',
    description: "Ingestion token (svcik_...) of one integration: push ingestion only, never the management API's",
  },
  ingestionTokenHeader: {
    type: 'apiKey',
    in: 'header',
    name: 'X-Ingest-Token',
    description: 'The ingestion token (svcik_...) in a header of its own, for senders that cannot set Authorization',
  },
  splunkToken: {
    type: 'apiKey',
    in: 'header',
    name: 'Authorization',
    description: 'Splunk HEC convention: `Authorization: Splunk <svcik_...>` (the ingestion token)',
  },
  ingestionTokenBasic: {
    type: 'http',
    scheme: 'basic',
    description: 'Elasticsearch clients: HTTP Basic with any user name and the ingestion token (svcik_...) as password',
  },
  elasticApiKey: {
    type: 'apiKey',
    in: 'header',
    name: 'Authorization',
    description: 'Elasticsearch clients: `Authorization: ApiKey <svcik_...>` (the ingestion token)',
  },
  firehoseAccessKey: {
    type: 'apiKey',
    in: 'header',
    name: 'X-Amz-Firehose-Access-Key',
    description: "Amazon Data Firehose HTTP endpoint delivery: the destination's access key is the ingestion token",
  },
} as const;

type SchemeName = keyof typeof SECURITY_SCHEMES;
const INGESTION_SCHEMES: Record<IngestionCredential, SchemeName[]> = {
  'ingestion-token': ['ingestionToken', 'ingestionTokenHeader'],
  'splunk-hec': ['splunkToken', 'ingestionToken'],
  elasticsearch: ['ingestionTokenBasic', 'elasticApiKey', 'ingestionToken'],
  firehose: ['firehoseAccessKey'],
};

/** The credentials an operation takes: any one of the listed schemes; none for a public one. */
function security(access: AccessDeclaration): Record<string, string[]>[] {
  if (access.ownCredential) return INGESTION_SCHEMES[access.ownCredential].map((name) => ({ [name]: [] }));
  return access.requires === 'public' ? [] : [{ bearer: [] }, { session: [] }];
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
      // The document is served by the API it describes: its paths (all under /api, and the
      // health probes) are relative to the origin it was fetched from.
      servers: [{ url: '/', description: 'The server that serves this document' }],
      components: { securitySchemes: SECURITY_SCHEMES },
    },
    hideUntagged: true,
    transformObject: (doc) => {
      const openapi = (
        doc as { openapiObject: { paths?: unknown; components?: { schemas?: Record<string, unknown> } } }
      ).openapiObject;
      const schemas: Record<string, unknown> = { ...openapi.components?.schemas };
      for (const [name, schema] of namedSchemas) schemas[name] = documentSchema(schema, 'request');
      openapi.paths = hoistComponents(openapi.paths, schemas);
      openapi.components = { ...openapi.components, schemas: sortedByName(schemas) };
      return openapi as never;
    },
    transform: ({ schema, url, route }: { schema: FastifySchema; url: string; route: RouteOptions }) => {
      if (!schema) return { schema, url };
      const documented = documentRouteSchema(schema);
      const access = route.config?.access;
      if (!access) return { schema: documented, url };
      const extra: Record<string, unknown> = {
        'x-weir-requires': access.requires,
        'x-weir-global-scope': Boolean(access.globalScope),
        security: security(access),
        ...(route.config?.addition ? { 'x-weir-addition': true } : {}),
      };
      return { schema: { ...documented, ...extra } as FastifySchema, url };
    },
  });
  await app.register(swaggerUi, { routePrefix: '/api/docs' });
}

function sortedByName(schemas: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(schemas).sort(([a], [b]) => a.localeCompare(b)));
}
