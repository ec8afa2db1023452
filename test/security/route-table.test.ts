// The security suite over the whole route table. For every operation the API serves, read
// from its own OpenAPI document (so operations added later are covered without new code):
//   - 401 without credentials, unless public;
//   - 403 for a principal that lacks the declared permission;
//   - 403 for an organization admin where platform scope is declared;
//   - 404 for an object of another organization, where the operation takes an id.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PERMISSIONS, type Permission } from '../../src/core/access.js';
import { loadOperations, seedObjects, type ApiOperation } from '../support/api-operations.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { createOrganization, createPrincipal, type Principal } from '../support/identity.js';
import { exampleFor } from '../support/schema-example.js';

let t: TestApp;
let ops: ApiOperation[] = [];
let orgA: number;
let orgB: number;
let adminA: Principal;
/** Ids of objects that belong to organization B, by path parameter name. */
let foreign: Record<string, string> = {};

function urlFor(op: ApiOperation): string {
  let url = op.path;
  for (const name of op.params) url = url.replace(`{${name}}`, encodeURIComponent(foreign[name] ?? '987654'));
  const query = op.query
    ? new URLSearchParams(
        Object.entries(exampleFor(op.query) as Record<string, unknown>).map(([k, v]): [string, string] => [
          k,
          String(v),
        ]),
      )
    : undefined;
  return query && [...query].length ? `${url}?${query}` : url;
}

function call(op: ApiOperation, headers: Record<string, string> = {}) {
  const payload = op.body ? (exampleFor(op.body) as object) : undefined;
  return t.app.inject({
    method: op.method as 'GET',
    url: urlFor(op),
    headers,
    ...(payload !== undefined ? { payload } : {}),
  });
}

/** A permission other than `p`, so a token scoped to it lacks `p`. */
function otherThan(p: string): Permission {
  return PERMISSIONS.find((x) => x !== p && x !== 'internal.tenant.read') as Permission;
}

beforeAll(async () => {
  t = await createTestApp({ env: { WEIR_TOKEN_RATE_LIMIT: '1000000', WEIR_LINEAGE_ENABLED: 'true' } });
  orgA = await createOrganization(t, 'Org A');
  orgB = await createOrganization(t, 'Org B');
  adminA = await createPrincipal(t, { role: 'admin', organizationId: orgA });
  foreign = await seedObjects(t, orgB);
  ops = (await loadOperations(t)).filter((o) => o.path.startsWith('/api/'));
});
afterAll(async () => t?.close());

describe('route-table security suite', () => {
  it('covers the served operations', () => {
    expect(ops.length).toBeGreaterThan(0);
    console.log(`security suite: ${ops.length} operations`);
  });

  it('answers 401 without credentials on every non-public operation', async () => {
    const failures: string[] = [];
    for (const op of ops.filter((o) => o.requires !== 'public')) {
      const res = await call(op);
      if (res.statusCode !== 401) failures.push(`${op.method} ${op.path}: ${res.statusCode}`);
      else if (typeof res.json().detail !== 'string') failures.push(`${op.method} ${op.path}: detail not a string`);
    }
    expect(failures).toEqual([]);
  });

  it('answers 403 to a principal lacking the declared permission', async () => {
    const failures: string[] = [];
    for (const op of ops.filter((o) => o.requires !== 'public' && o.requires !== 'authenticated')) {
      const p = await createPrincipal(t, { role: 'admin', organizationId: orgA, scopes: [otherThan(op.requires)] });
      const res = await call(op, p.headers);
      if (res.statusCode !== 403) failures.push(`${op.method} ${op.path}: ${res.statusCode}`);
    }
    expect(failures).toEqual([]);
  });

  it('answers 403 to an organization admin where platform scope is declared', async () => {
    const failures: string[] = [];
    for (const op of ops.filter((o) => o.globalScope)) {
      const res = await call(op, adminA.headers);
      if (res.statusCode !== 403) failures.push(`${op.method} ${op.path}: ${res.statusCode}`);
    }
    expect(failures).toEqual([]);
  });

  it('answers 404 for an object of another organization', async () => {
    const failures: string[] = [];
    const unknownParams = new Set<string>();
    for (const op of ops.filter((o) => o.params.length > 0 && !o.globalScope && o.requires !== 'public')) {
      for (const name of op.params) if (!(name in foreign)) unknownParams.add(name);
      const res = await call(op, adminA.headers);
      if (res.statusCode !== 404) failures.push(`${op.method} ${op.path}: ${res.statusCode} ${res.body.slice(0, 120)}`);
    }
    if (unknownParams.size)
      console.log(`ids without a foreign fixture (checked with an unknown id): ${[...unknownParams].join(', ')}`);
    expect(failures).toEqual([]);
  });
});
