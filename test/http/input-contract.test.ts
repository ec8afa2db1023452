// The input contract of every operation (src/platform/http/input.ts), case by case: text
// that cannot be stored, numbers past their column, Fastify's and Node's own refusals, and
// the audit entry of an operation refused for its input. The boundary sweep
// (boundary-sweep.test.ts) walks every operation; these tests say what each answer holds.
import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { escapeText, textProblem } from '../../src/core/text.js';
import { INT32_MAX, withInputBounds } from '../../src/platform/http/input.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { createOrganization, createPrincipal, type Principal } from '../support/identity.js';

let t: TestApp;
let admin: Principal;
let org: number;

beforeAll(async () => {
  t = await createTestApp({ env: { WEIR_TOKEN_RATE_LIMIT: '100000' } });
  org = await createOrganization(t, 'Input');
  admin = await createPrincipal(t, { role: 'admin', organizationId: null });
});
afterAll(async () => t?.close());

const JSON_TYPE = { 'content-type': 'application/json' };

describe('text that cannot be stored', () => {
  it('refuses a NUL in a JSON string of an unauthenticated operation with 422 naming the field', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/auth/login',
      headers: JSON_TYPE,
      payload: '{"username":"ad\\u0000min","password":"x"}',
    });
    expect(res.statusCode).toBe(422);
    expect(res.json().error.code).toBe('request.invalid_text');
    expect(res.json().detail).toBe('body/username contains a NUL character (U+0000), which cannot be stored');
  });

  it('refuses a lone surrogate in a JSON string, and in a field name', async () => {
    const value = await t.app.inject({
      method: 'POST',
      url: '/api/organizations/',
      headers: { ...admin.headers, ...JSON_TYPE },
      payload: '{"name":"a\\ud800b"}',
    });
    expect(value.statusCode).toBe(422);
    expect(value.json().detail).toMatch(/^body\/name contains an unpaired UTF-16 surrogate/);
    const key = await t.app.inject({
      method: 'POST',
      url: '/api/collectors/destinations',
      headers: { ...admin.headers, ...JSON_TYPE },
      payload: `{"name":"d","type":"http","organization_id":${org},"config":{"url":"http://127.0.0.1:9/","x\\udc00":1}}`,
    });
    expect(key.statusCode).toBe(422);
    expect(key.json().detail).toMatch(
      /^body\/config\/x\\udc00 has a field name that contains an unpaired UTF-16 surrogate/,
    );
  });

  it('refuses %00 in a path parameter and in a query parameter', async () => {
    const path = await t.app.inject({ method: 'GET', url: '/api/mappings/a%00b', headers: admin.headers });
    expect(path.statusCode).toBe(422);
    expect(path.json().detail).toMatch(/^params\/definition_id contains a NUL/);
    const query = await t.app.inject({
      method: 'GET',
      url: '/api/integrations/?platform=ok%00ta',
      headers: admin.headers,
    });
    expect(query.statusCode).toBe(422);
    expect(query.json().detail).toMatch(/^querystring\/platform contains a NUL/);
  });

  it('accepts paired surrogates (an emoji) and stores them', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/organizations/',
      headers: { ...admin.headers, ...JSON_TYPE },
      payload: '{"name":"Team \\ud83d\\ude80"}',
    });
    expect(res.statusCode).toBe(201);
    expect(res.json().name).toBe('Team 🚀');
  });

  it('escapes what it cannot store (for logs and the audit trail) and leaves other text alone', () => {
    expect(escapeText('a\u0000b\ud800c\udc00')).toBe('a\\u0000b\\ud800c\\udc00');
    expect(escapeText('ok 🚀')).toBe('ok 🚀');
    expect(textProblem('ok 🚀')).toBeUndefined();
    expect(textProblem('\ud83d')).toMatch(/unpaired/);
  });
});

describe('numbers past their column', () => {
  it.each([
    ['/api/integrations/2147483648', 'params/integration_id must be <= 2147483647'],
    ['/api/integrations/?offset=1e309', 'querystring/offset must be <= 2147483647'],
    ['/api/organizations/?page=1e309', 'querystring/page must be <= 2147483647'],
    ['/api/integrations/?organization_id=9007199254740991', 'querystring/organization_id must be <= 2147483647'],
    ['/api/v1/service-accounts/2147483648', 'params/service_account_id must be <= 2147483647'],
  ])('answers 422 for %s', async (url, detail) => {
    const res = await t.app.inject({ method: 'GET', url, headers: admin.headers });
    expect(res.statusCode).toBe(422);
    expect(res.json().detail).toBe(detail);
  });

  it('refuses 1e309 (Infinity once parsed) in a JSON body', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/service-accounts',
      headers: { ...admin.headers, ...JSON_TYPE },
      payload: '{"name":"sa","role":"viewer","organization_id":1e309}',
    });
    expect(res.statusCode).toBe(422);
    expect(res.json().detail).toMatch(/^body\/organization_id must be <= 2147483647/);
  });

  it('gives every request schema bounds where it sets none, and keeps those it sets', () => {
    const schema = {
      type: 'object',
      properties: {
        id: { type: 'integer' },
        small: { type: 'integer', minimum: 1, maximum: 10 },
        ratio: { type: 'number' },
        name: { type: 'string' },
        kind: { type: 'string', enum: ['a', 'b'] },
        either: { anyOf: [{ type: 'integer' }, { type: 'null' }] },
      },
    };
    const bounded = withInputBounds(schema, 'body') as { properties: Record<string, Record<string, unknown>> };
    expect(bounded.properties.id).toMatchObject({ minimum: -2147483648, maximum: INT32_MAX });
    expect(bounded.properties.small).toMatchObject({ minimum: 1, maximum: 10 });
    expect(bounded.properties.ratio).toMatchObject({ maximum: Number.MAX_VALUE, minimum: -Number.MAX_VALUE });
    expect(bounded.properties.name).toMatchObject({ maxLength: 4096 });
    expect(bounded.properties.kind).not.toHaveProperty('maxLength');
    expect((bounded.properties.either!.anyOf as Record<string, unknown>[])[0]).toMatchObject({ maximum: INT32_MAX });
    expect(schema.properties.id).toEqual({ type: 'integer' });
  });

  it('publishes the bounds in the OpenAPI document', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/api/openapi.json' })).json();
    const list = doc.paths['/api/integrations/'].get.parameters as { name: string; schema: Record<string, unknown> }[];
    expect(list.find((p) => p.name === 'offset')?.schema).toMatchObject({ minimum: 0, maximum: INT32_MAX });
  });
});

describe('answers Fastify and Node give before a route runs', () => {
  it('414 for a path parameter past 256 characters, with the error body', async () => {
    const res = await t.app.inject({
      method: 'GET',
      url: `/api/integrations/${'1'.repeat(300)}`,
      headers: admin.headers,
    });
    expect(res.statusCode).toBe(414);
    expect(res.json()).toMatchObject({
      detail: 'A path parameter of the URL is longer than 256 characters',
      error: { code: 'request.uri_too_long' },
    });
  });

  it('400 for a percent-encoding that is not UTF-8, with the error body', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/mappings/%E0%A4%A', headers: admin.headers });
    expect(res.statusCode).toBe(400);
    expect(typeof res.json().detail).toBe('string');
  });

  it('431 for headers past the limit, with the error body (a real socket)', async () => {
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = t.app.server.address() as AddressInfo;
    const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = httpRequest(
        { host: '127.0.0.1', port, path: '/livez', headers: { 'x-big': 'a'.repeat(20_000) } },
        (res) => {
          let body = '';
          res.on('data', (c: Buffer) => (body += c.toString()));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        },
      );
      req.on('error', reject);
      req.end();
    });
    expect(answer.status).toBe(431);
    expect(JSON.parse(answer.body)).toMatchObject({ error: { code: 'request.header_too_large' } });
    expect(typeof JSON.parse(answer.body).detail).toBe('string');
  });

  it('names the allowed values of a union of literals', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/history/audit?outcome=maybe', headers: admin.headers });
    expect(res.statusCode).toBe(422);
    expect(res.json().detail).toBe('querystring/outcome must be one of: "success", "failed", "denied", "error"');
  });
});

/** The audit entry of one answered request (by its correlation id). */
function auditRowOf(res: { headers: Record<string, unknown> }) {
  return t.container.database.db
    .selectFrom('audit_log')
    .selectAll()
    .where('correlation_id', '=', String(res.headers['x-correlation-id']))
    .executeTakeFirstOrThrow();
}

describe('the audit trail of an operation refused for its input', () => {
  it('records a failed entry with the offending value escaped', async () => {
    const res = await t.app.inject({ method: 'DELETE', url: '/api/collectors/routes/a%00b', headers: admin.headers });
    expect(res.statusCode).toBe(422);
    const row = await auditRowOf(res);
    expect(row).toMatchObject({
      outcome: 'failed',
      status: 422,
      error_code: 'request.invalid_text',
      target_id: 'a\\u0000b',
    });
  });

  it('records a failed entry for a number past its column, without the organization it cannot hold', async () => {
    const res = await t.app.inject({
      method: 'PUT',
      url: '/api/organizations/2147483648',
      headers: { ...admin.headers, ...JSON_TYPE },
      payload: '{"name":"x"}',
    });
    expect(res.statusCode).toBe(422);
    const row = await auditRowOf(res);
    expect(row).toMatchObject({
      outcome: 'failed',
      status: 422,
      error_code: 'request.validation_failed',
      target_id: '2147483648',
      organization_id: null,
    });
    const chain = await sql<{ n: number }>`select count(*)::int as n from audit_log`.execute(t.container.database.db);
    expect(chain.rows[0]!.n).toBeGreaterThan(0);
  });
});
