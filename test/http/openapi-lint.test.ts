// The API document as a standard tool reads it: Redocly's `recommended` ruleset finds no error,
// nothing of the schema library leaks into it, clients learn where to send requests and
// which credential each operation takes, and the recurring shapes are shared components.
import { createConfig, lintFromString } from '@redocly/openapi-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';

interface Operation {
  operationId: string;
  security?: Record<string, string[]>[];
  responses: Record<string, { content?: Record<string, { schema: Record<string, unknown> }> }>;
  'x-weir-requires': string;
}
interface Doc {
  servers?: { url: string }[];
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, unknown>; securitySchemes: Record<string, Record<string, unknown>> };
}

let t: TestApp;
let source: string;
let doc: Doc;

beforeAll(async () => {
  t = await createTestApp();
  const res = await t.app.inject({ method: 'GET', url: '/api/openapi.json' });
  expect(res.statusCode).toBe(200);
  source = res.body;
  doc = res.json();
});
afterAll(async () => t?.close());

const METHODS = ['get', 'put', 'post', 'delete', 'patch'];
function operations(): { method: string; path: string; op: Operation }[] {
  return Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => METHODS.includes(method))
      .map(([method, op]) => ({ method, path, op })),
  );
}

/** Every key of the document with its JSON pointer. */
function* keys(node: unknown, pointer = ''): Generator<[string, string]> {
  if (Array.isArray(node)) {
    for (const [i, item] of node.entries()) yield* keys(item, `${pointer}/${i}`);
  } else if (typeof node === 'object' && node !== null) {
    for (const [key, value] of Object.entries(node)) {
      yield [key, `${pointer}/${key}`];
      yield* keys(value, `${pointer}/${key}`);
    }
  }
}

describe('OpenAPI document lint', () => {
  it("passes Redocly's recommended ruleset without an error", async () => {
    const config = await createConfig({
      extends: ['recommended'],
      rules: {
        // The interface specification itself declares collection paths with a trailing slash
        // (GET /api/integrations/, ...), and the router answers them as declared: not ours to change.
        'no-path-trailing-slash': 'off',
      },
    });
    const problems = await lintFromString({ source, config });
    const errors = problems
      .filter((p) => p.severity === 'error')
      .map((p) => `${p.ruleId}: ${p.message} at ${p.location[0]?.pointer ?? '?'}`);
    expect(errors, errors.slice(0, 50).join('\n')).toEqual([]);
    const warnings = problems.filter((p) => p.severity === 'warn').map((p) => `${p.ruleId}: ${p.message}`);
    console.log(`Redocly recommended: 0 errors, ${warnings.length} warnings\n${warnings.join('\n')}`);
  });

  it("carries no key of the schema library, and the validator's only as extensions", () => {
    const leaked = [...keys(doc)].filter(([key]) => key.startsWith('~') || key === 'errorMessage' || key === '$id');
    expect(leaked.map(([, pointer]) => pointer).slice(0, 20)).toEqual([]);
    expect(source).not.toMatch(/"~[a-z]/i);
    expect(source).not.toContain('x-weir-component');
  });

  it('tells a generated client where to send requests: the origin that serves the document', () => {
    expect(doc.servers).toEqual([expect.objectContaining({ url: '/' })]);
  });

  it('declares the credentials of every operation: none for public ones, the ingestion token for push', () => {
    const schemes = doc.components.securitySchemes;
    expect(schemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(schemes.session).toMatchObject({ type: 'apiKey', in: 'cookie', name: 'weir_session' });
    expect(schemes.ingestionToken).toMatchObject({ type: 'http', scheme: 'bearer', bearerFormat: 'svcik_...' });
    expect(schemes.ingestionTokenHeader).toMatchObject({ type: 'apiKey', in: 'header', name: 'X-Ingest-Token' });

    const push = doc.paths['/api/ingest/{stream}']?.post;
    expect(push?.security).toEqual([{ ingestionToken: [] }, { ingestionTokenHeader: [] }]);

    for (const { method, path, op } of operations()) {
      const where = `${method.toUpperCase()} ${path}`;
      expect(op.security, where).toBeDefined();
      // Push and the protocol inputs take the ingestion token, not a management credential.
      if (JSON.stringify(op.security) === JSON.stringify(push?.security)) continue;
      if (op['x-weir-requires'] === 'public') expect(op.security, where).toEqual([]);
      else expect(op.security, where).toEqual([{ bearer: [] }, { session: [] }]);
    }
    for (const [path, method] of [
      ['/healthz', 'get'],
      ['/api/auth/bootstrap', 'post'],
      ['/api/auth/login', 'post'],
    ] as const) {
      expect(doc.paths[path]?.[method]?.security, `${method} ${path}`).toEqual([]);
    }
  });

  it('shares the error body and the recurring resources as components', () => {
    const schemas = doc.components.schemas;
    for (const name of ['Error', 'Integration', 'Destination', 'Route', 'DetectionRule', 'User', 'Organization'])
      expect(schemas[name], name).toBeDefined();
    const errorRef = { $ref: '#/components/schemas/Error' };
    for (const { method, path, op } of operations()) {
      expect(op.responses['500']?.content?.['application/json']?.schema, `${method} ${path}`).toEqual(errorRef);
    }
    expect(doc.paths['/api/integrations/{integration_id}']?.get?.responses['200']?.content).toEqual({
      'application/json': { schema: { $ref: '#/components/schemas/Integration' } },
    });
    // Every reference points at a component that is there.
    const refs = [...keys(doc)].filter(([key]) => key === '$ref').length;
    expect(refs).toBeGreaterThan(operations().length);
    const dangling = [...source.matchAll(/"\$ref":"#\/components\/schemas\/([^"]+)"/g)]
      .map((m) => m[1]!)
      .filter((name) => !(name in schemas));
    expect(dangling).toEqual([]);
  });
});
