// Routes that exercise the HTTP conventions through the same registration mechanism the
// modules use. Registered only by tests (buildApp's extraRoutes).
import { Type } from 'typebox';
import { errors } from '../../src/core/errors.js';
import { offsetEnvelope, pageBody } from '../../src/core/paging.js';
import { route, type Api } from '../../src/platform/http/routes.js';
import {
  DateParam,
  OffsetEnvelope,
  OffsetQuery,
  PAGE_HEADERS,
  PageBodySchema,
  PageQuery,
  setPageHeaders,
  Timestamp,
} from '../../src/platform/http/schemas.js';

const Item = Type.Object({ n: Type.Integer(), at: Timestamp() });
const ITEMS = Array.from({ length: 7 }, (_, i) => ({ n: i, at: new Date(Date.UTC(2026, 0, 1, 0, 0, i)) }));

export function fixtureRoutes(app: Api): void {
  route(app, {
    method: 'GET',
    url: '/api/fixtures/things/',
    operationId: 'fixtures.list_offset',
    summary: 'limit/offset envelope, org alias, date filter',
    access: { requires: 'public' },
    schema: {
      querystring: Type.Object({
        ...OffsetQuery,
        organization_id: Type.Optional(Type.Integer()),
        since: Type.Optional(DateParam()),
      }),
      response: {
        200: Type.Intersect([
          OffsetEnvelope(Item),
          Type.Object({
            organization_id: Type.Union([Type.Integer(), Type.Null()]),
            since: Type.Union([Timestamp(), Type.Null()]),
          }),
        ]),
      },
    },
    handler: async (req) => {
      const { limit = 50, offset = 0, organization_id, since } = req.query;
      const selected = ITEMS.filter((i) => !since || i.at >= since);
      return {
        ...offsetEnvelope(selected.slice(offset, offset + limit), selected.length, { limit, offset }),
        organization_id: organization_id ?? null,
        since: since ?? null,
      };
    },
  });

  route(app, {
    method: 'GET',
    url: '/api/fixtures/pages/',
    operationId: 'fixtures.list_pages_headers',
    summary: 'page/size with count headers',
    access: { requires: 'public' },
    schema: {
      querystring: Type.Object({ ...PageQuery }),
      response: { 200: { ...Type.Array(Item), headers: PAGE_HEADERS } },
    },
    handler: async (req, reply) => {
      const { page = 1, size = 50 } = req.query;
      setPageHeaders(reply, ITEMS.length, { page, size });
      return ITEMS.slice((page - 1) * size, page * size);
    },
  });

  route(app, {
    method: 'GET',
    url: '/api/fixtures/page-body',
    operationId: 'fixtures.list_pages_body',
    summary: 'page/size with the count in the body',
    access: { requires: 'public' },
    schema: {
      querystring: Type.Object({ ...PageQuery, org_id: Type.Optional(Type.Integer()) }),
      response: { 200: PageBodySchema(Item) },
    },
    handler: async (req) => {
      const { page = 1, size = 50 } = req.query;
      return pageBody(ITEMS.slice((page - 1) * size, page * size), ITEMS.length, { page, size });
    },
  });

  route(app, {
    method: 'POST',
    url: '/api/fixtures/echo',
    operationId: 'fixtures.echo',
    summary: 'echoes a JSON body',
    access: { requires: 'public' },
    schema: {
      body: Type.Object({ name: Type.String({ maxLength: 20 }), payload: Type.Optional(Type.Unknown()) }),
      response: { 200: Type.Object({ name: Type.String(), payload: Type.Optional(Type.Unknown()) }) },
    },
    handler: async (req) => {
      req.log.info({ name: req.body.name }, 'echo handler ran');
      return req.body;
    },
  });

  route(app, {
    method: 'POST',
    url: '/api/fixtures/conflict',
    operationId: 'fixtures.conflict',
    summary: 'throws a typed error',
    access: { requires: 'public' },
    schema: { response: { 200: Type.Object({}) } },
    handler: async () => {
      throw errors.conflict('Already exists', { name: 'x' });
    },
  });

  route(app, {
    method: 'GET',
    url: '/api/fixtures/crash',
    operationId: 'fixtures.crash',
    summary: 'throws an unexpected error',
    access: { requires: 'public' },
    schema: { response: { 200: Type.Object({}) } },
    handler: async () => {
      throw new Error('secret internal detail');
    },
  });

  route(app, {
    method: 'GET',
    url: '/api/fixtures/private',
    operationId: 'fixtures.private',
    summary: 'needs a permission',
    access: { requires: 'user.manage' },
    schema: { response: { 200: Type.Object({}) } },
    handler: async () => ({}),
  });
}
