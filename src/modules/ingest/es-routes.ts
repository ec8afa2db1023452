// Weir as an Elasticsearch cluster for log shippers (Filebeat, Winlogbeat, Logstash, Fluent
// Bit, Vector): `_bulk` under /api/ingest/elasticsearch, and the few requests they make before
// it (cluster info, license, template and lifecycle probes), answered in Elasticsearch's
// shapes. Every request carries the integration's ingestion token (docs/inputs-elasticsearch-bulk.md).
import type { Readable } from 'node:stream';
import type { FastifyReply } from 'fastify';
import { Type } from 'typebox';
import { isAppError } from '../../core/errors.js';
import { route, type Api } from '../../platform/http/routes.js';
import { bulkAnswer, ES_VERSION, esErrorBody, esToken, parseBulk, type ParsedBulk } from './es-bulk.js';
import { presentedToken, rawBodyScope, requestBody } from './routes.js';
import type { IngestService } from './service.js';

export const ES_PREFIX = '/api/ingest/elasticsearch';

const EsAnswer = Type.Object({}, { additionalProperties: true, description: "Elasticsearch's own answer shape" });
const ACCESS = { requires: 'public', ownCredential: 'elasticsearch' } as const;
const CREDENTIAL =
  'Authenticated by the ingestion token as an Elasticsearch client sends it: Basic (any user, the token as password), ' +
  'ApiKey (the token, or base64 of "id:token") or Bearer. Errors are in Elasticsearch\'s shape ({error:{type,reason},status}).';
const AUTHENTICATE = 'Basic realm="security", charset="UTF-8", ApiKey, Bearer realm="security"';

/** A cluster name and uuid that say what answers: Weir, not an Elasticsearch cluster. */
function clusterInfo() {
  return {
    name: 'weir',
    cluster_name: 'weir',
    cluster_uuid: 'weir-elasticsearch-bulk-input',
    version: {
      number: ES_VERSION,
      build_flavor: 'default',
      build_type: 'weir',
      build_hash: 'weir',
      build_date: '2025-01-01T00:00:00.000Z',
      build_snapshot: false,
      lucene_version: '9.12.0',
      minimum_wire_compatibility_version: '7.17.0',
      minimum_index_compatibility_version: '7.0.0',
    },
    tagline: 'You Know, for Search',
  };
}

function esType(status: number, details: Record<string, unknown>): string {
  if (typeof details.es_type === 'string') return details.es_type;
  if (status === 401 || status === 403) return 'security_exception';
  if (status === 429) return 'es_rejected_execution_exception';
  return 'status_exception';
}

/** A failure of the whole request, as Elasticsearch answers one (never a secret: the messages are the catalog's). */
function sendError(reply: FastifyReply, err: unknown): Record<string, unknown> {
  if (!isAppError(err)) throw err;
  for (const [k, v] of Object.entries(err.headers)) void reply.header(k, v);
  if (err.status === 401) void reply.header('www-authenticate', AUTHENTICATE);
  void reply.code(err.status);
  return esErrorBody(err.status, esType(err.status, err.details), err.message);
}

function product(reply: FastifyReply): void {
  void reply.header('x-elastic-product', 'Elasticsearch');
}

function credential(headers: Record<string, string | string[] | undefined>): string | undefined {
  const auth = headers.authorization;
  return esToken(Array.isArray(auth) ? auth[0] : auth) ?? presentedToken({ ...headers, authorization: undefined });
}

/** Reads nothing of the body: the probes that carry one (template puts) are acknowledged without storing it. */
function discard(body: unknown): void {
  (body as Readable | undefined)?.resume?.();
}

type Probe = {
  path: string;
  op: string;
  summary: string;
  answer: () => { status: 200 | 404; body: Record<string, unknown> };
};

const missing = (what: string) => () => ({
  status: 404 as const,
  body: esErrorBody(404, 'resource_not_found_exception', `${what} not found: Weir keeps no ${what}s`),
});
const acknowledged = () => ({ status: 200 as const, body: { acknowledged: true } });

const GET_PROBES: Probe[] = [
  {
    path: '',
    op: 'es_info',
    summary: 'Cluster information (the version Weir answers as)',
    answer: () => ({ status: 200 as const, body: clusterInfo() }),
  },
  {
    path: '/',
    op: 'es_info_root',
    summary: 'Cluster information, with the trailing slash',
    answer: () => ({ status: 200 as const, body: clusterInfo() }),
  },
  {
    path: '/_license',
    op: 'es_license',
    summary: 'A basic, active license (Beats refuse a cluster without one)',
    answer: () => ({
      status: 200 as const,
      body: {
        license: {
          status: 'active',
          uid: '00000000-0000-4000-8000-000000000031',
          type: 'basic',
          issue_date: '2025-01-01T00:00:00.000Z',
          issue_date_in_millis: 1735689600000,
          max_nodes: 1000,
          max_resource_units: null,
          issued_to: 'weir',
          issuer: 'weir',
          start_date_in_millis: -1,
        },
      },
    }),
  },
  {
    path: '/_xpack',
    op: 'es_xpack',
    summary: 'Features: a basic license, index lifecycle available',
    answer: () => ({
      status: 200 as const,
      body: {
        build: { hash: 'weir', date: '2025-01-01T00:00:00.000Z' },
        license: { uid: '00000000-0000-4000-8000-000000000031', type: 'basic', mode: 'basic', status: 'active' },
        features: { ilm: { available: true, enabled: true }, security: { available: true, enabled: true } },
        tagline: 'You know, for X',
      },
    }),
  },
  {
    path: '/_cluster/health',
    op: 'es_health',
    summary: 'Cluster health: green while Weir answers',
    answer: () => ({
      status: 200 as const,
      body: { cluster_name: 'weir', status: 'green', timed_out: false, number_of_nodes: 1, number_of_data_nodes: 1 },
    }),
  },
  {
    path: '/_index_template/:name',
    op: 'es_index_template_get',
    summary: 'An index template: none is kept (404)',
    answer: missing('index template'),
  },
  {
    path: '/_template/:name',
    op: 'es_template_get',
    summary: 'A legacy template: none is kept (404)',
    answer: missing('template'),
  },
  {
    path: '/_ilm/policy/:name',
    op: 'es_ilm_get',
    summary: 'A lifecycle policy: none is kept (404)',
    answer: missing('lifecycle policy'),
  },
  {
    path: '/_data_stream/:name',
    op: 'es_data_stream_get',
    summary: 'A data stream: none is kept (404)',
    answer: missing('data stream'),
  },
];

const PUT_PROBES: Probe[] = [
  {
    path: '/_index_template/:name',
    op: 'es_index_template_put',
    summary: 'Acknowledges an index template without storing it',
    answer: acknowledged,
  },
  {
    path: '/_template/:name',
    op: 'es_template_put',
    summary: 'Acknowledges a legacy template without storing it',
    answer: acknowledged,
  },
  {
    path: '/_ilm/policy/:name',
    op: 'es_ilm_put',
    summary: 'Acknowledges a lifecycle policy without storing it',
    answer: acknowledged,
  },
  {
    path: '/_data_stream/:name',
    op: 'es_data_stream_put',
    summary: 'Acknowledges a data stream (events go to the stream of its name)',
    answer: acknowledged,
  },
];

export function esBulkRoutes(app: Api, service: IngestService): void {
  rawBodyScope(app, (scope) => {
    for (const [method, probes] of [
      ['GET', GET_PROBES],
      ['PUT', PUT_PROBES],
    ] as const) {
      for (const p of probes) {
        route(scope, {
          method,
          url: `${ES_PREFIX}${p.path}`,
          operationId: `ingest.${p.op}`,
          summary: `Elasticsearch input: ${p.summary}`,
          description: CREDENTIAL,
          access: ACCESS,
          addition: true,
          audit: false,
          query: 'open',
          schema: {
            ...(p.path.includes(':name') ? { params: Type.Object({ name: Type.String({ maxLength: 255 }) }) } : {}),
            response: { 200: EsAnswer, 401: EsAnswer, 403: EsAnswer, 404: EsAnswer, 429: EsAnswer, 503: EsAnswer },
          },
          handler: async (req, reply) => {
            product(reply);
            discard(req.body);
            try {
              await service.verifyToken(credential(req.headers));
            } catch (err) {
              return sendError(reply, err);
            }
            const { status, body } = p.answer();
            void reply.code(status);
            return body;
          },
        });
      }
    }

    for (const method of ['POST', 'PUT'] as const) {
      for (const withIndex of [false, true]) {
        route(scope, {
          method,
          url: `${ES_PREFIX}${withIndex ? '/:index' : ''}/_bulk`,
          operationId: `ingest.es_bulk${withIndex ? '_index' : ''}${method === 'PUT' ? '_put' : ''}`,
          summary: `Elasticsearch input: _bulk index and create actions become events${withIndex ? ' (default index from the path)' : ''}`,
          description:
            `${CREDENTIAL} NDJSON action/source pairs; gzip with Content-Encoding: gzip. Each index or create item is ` +
            'an event of the stream named after its index; update and delete are answered per item with 400. ' +
            'Items Weir could not accept now are answered 429 (resend them); a whole request it could not take is a 429/503 with Retry-After.',
          access: ACCESS,
          addition: true,
          audit: false,
          query: 'open',
          schema: {
            ...(withIndex ? { params: Type.Object({ index: Type.String({ maxLength: 255 }) }) } : {}),
            response: {
              200: EsAnswer,
              400: EsAnswer,
              401: EsAnswer,
              403: EsAnswer,
              413: EsAnswer,
              415: EsAnswer,
              429: EsAnswer,
              503: EsAnswer,
            },
          },
          handler: async (req, reply) => {
            product(reply);
            const started = Date.now();
            const pathIndex = (req.params as { index?: string }).index;
            let parsed: ParsedBulk = { items: [], events: [] };
            try {
              const outcome = await service.receive(
                {
                  token: credential(req.headers),
                  ...requestBody(req),
                },
                (body) => {
                  parsed = parseBulk(body, pathIndex);
                  return parsed.events;
                },
              );
              return bulkAnswer(parsed, outcome.accepted, Date.now() - started);
            } catch (err) {
              return sendError(reply, err);
            }
          },
        });
      }
    }
  });
}
