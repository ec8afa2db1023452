import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';

interface SpecOperation {
  method: string;
  path: string;
  requires: string;
}

const SPEC_FILE = path.resolve(import.meta.dirname, '../fixtures/operations.json');
const specOps = JSON.parse(readFileSync(SPEC_FILE, 'utf8')) as SpecOperation[];
const key = (method: string, p: string) => `${method.toUpperCase()} ${p.replace(/\{[^}]+\}/g, '{}')}`;
// The spec lists the two SSO rows twice (auth and sso families).
const specKeys = new Map(specOps.map((o) => [key(o.method, o.path), o]));

let t: TestApp;
let doc: { openapi: string; paths: Record<string, Record<string, Record<string, unknown>>> };

beforeAll(async () => {
  t = await createTestApp();
  const res = await t.app.inject({ method: 'GET', url: '/api/openapi.json' });
  expect(res.statusCode).toBe(200);
  doc = res.json();
});
afterAll(async () => t?.close());

function operations() {
  const out: { method: string; path: string; op: Record<string, unknown> }[] = [];
  for (const [p, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      if (['get', 'post', 'put', 'patch', 'delete'].includes(method)) out.push({ method, path: p, op });
    }
  }
  return out;
}

describe('OpenAPI document', () => {
  it('is OpenAPI 3.1 and public', () => {
    expect(doc.openapi).toBe('3.1.0');
  });

  it('gives every operation an operationId of the form family.verb, unique', () => {
    const ids = operations().map((o) => o.op.operationId);
    for (const id of ids) expect(id).toMatch(/^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+$/);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('declares every response status, the error ones included', () => {
    for (const { op, method, path: p } of operations()) {
      const responses = op.responses as Record<string, unknown>;
      // A success is a 2xx, or a redirect for the operations whose success sends the browser on (SSO).
      expect(
        Object.keys(responses).some((s) => s.startsWith('2') || s === '302'),
        `${method} ${p}`,
      ).toBe(true);
      expect(responses['500'], `${method} ${p}`).toBeDefined();
      if (op['x-weir-requires'] !== 'public') expect(responses['401'], `${method} ${p}`).toBeDefined();
    }
  });

  it('publishes what each operation requires', () => {
    for (const { op } of operations()) expect(typeof op['x-weir-requires']).toBe('string');
  });

  it('serves no /api operation the spec does not list, with the permission the spec gives', () => {
    const served = operations();
    // Weir's own additions (running a search, replay) are marked and documented as such.
    const unknown = served.filter(
      (o) => o.path.startsWith('/api/') && !specKeys.has(key(o.method, o.path)) && o.op['x-weir-addition'] !== true,
    );
    expect(unknown.map((o) => `${o.method.toUpperCase()} ${o.path}`)).toEqual([]);
    const mismatched = served
      .map((o) => ({ o, spec: specKeys.get(key(o.method, o.path)) }))
      .filter(({ o, spec }) => spec && !spec.requires.startsWith(String(o.op['x-weir-requires'])))
      .map(
        ({ o, spec }) =>
          `${o.method.toUpperCase()} ${o.path}: serves ${String(o.op['x-weir-requires'])}, spec ${spec?.requires}`,
      );
    expect(mismatched).toEqual([]);
    const coverage = served.filter((o) => specKeys.has(key(o.method, o.path))).length;
    console.log(`OpenAPI coverage: ${coverage} of ${specKeys.size} spec operations served`);
  });

  it('marks every operation the spec does not list as an addition, described as such', () => {
    const additions = operations().filter((o) => o.op['x-weir-addition'] === true);
    for (const a of additions) {
      expect(specKeys.has(key(a.method, a.path)), `${a.method} ${a.path} is in the spec`).toBe(false);
      expect(String(a.op.description)).toMatch(/^Weir's addition/);
    }
    console.log(`Additions: ${additions.map((a) => `${a.method.toUpperCase()} ${a.path}`).join(', ')}`);
  });

  it('serves the health probes of the spec', () => {
    for (const p of ['/livez', '/readyz', '/healthz']) expect(doc.paths[p]?.get).toBeDefined();
  });

  it('serves interactive docs at /api/docs', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/docs/' });
    expect([200, 302]).toContain(res.statusCode);
    const page =
      res.statusCode === 302 ? await t.app.inject({ method: 'GET', url: String(res.headers.location) }) : res;
    expect(page.body).toMatch(/swagger/i);
  });
});
