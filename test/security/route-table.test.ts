// The security suite over the whole route table. For every operation the API serves, read
// from its own OpenAPI document (so operations added later are covered without new code):
//   - 401 without credentials, unless public;
//   - 403 for a principal that lacks the declared permission;
//   - 403 for an organization admin where platform scope is declared;
//   - 404 for an object of another organization, where the operation takes an id.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PERMISSIONS, type Permission } from '../../src/core/access.js';
import { newId } from '../../src/core/ids.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { createOrganization, createPrincipal, type Principal } from '../support/identity.js';
import { exampleFor, type JsonSchema } from '../support/schema-example.js';

interface Operation {
  method: string;
  path: string;
  requires: string;
  globalScope: boolean;
  params: string[];
  body?: JsonSchema;
  query?: JsonSchema;
}

let t: TestApp;
let ops: Operation[] = [];
let orgA: number;
let orgB: number;
let adminA: Principal;
/** Ids of objects that belong to organization B, by path parameter name. */
const foreign: Record<string, string> = {};

async function loadOperations(): Promise<Operation[]> {
  const doc = (await t.app.inject({ method: 'GET', url: '/api/openapi.json' })).json() as {
    paths: Record<string, Record<string, Record<string, unknown>>>;
  };
  const out: Operation[] = [];
  for (const [p, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      if (!['get', 'post', 'put', 'patch', 'delete'].includes(method)) continue;
      const parameters = (op.parameters ?? []) as { in: string; name: string; required?: boolean; schema?: JsonSchema }[];
      const content = (op.requestBody as { content?: Record<string, { schema?: JsonSchema }> } | undefined)?.content;
      const queryRequired = parameters.filter((x) => x.in === 'query' && x.required);
      out.push({
        method: method.toUpperCase(),
        path: p,
        requires: String(op['x-weir-requires']),
        globalScope: Boolean(op['x-weir-global-scope']),
        params: parameters.filter((x) => x.in === 'path').map((x) => x.name),
        body: content?.['application/json']?.schema,
        query: queryRequired.length
          ? { type: 'object', required: queryRequired.map((q) => q.name), properties: Object.fromEntries(queryRequired.map((q) => [q.name, q.schema ?? {}])) }
          : undefined,
      });
    }
  }
  return out;
}

/** Creates one object of organization B per kind of id the API takes. */
async function seedForeignObjects(): Promise<void> {
  const db = t.container.database.db;
  foreign.org_id = String(orgB);
  foreign.organization_id = String(orgB);
  const integration = await db.insertInto('integrations').values({ organization_id: orgB, name: 'b-integration', platform: 'custom', config: '{}' }).returning('id').executeTakeFirstOrThrow();
  foreign.integration_id = String(integration.id);
  const userB = await createPrincipal(t, { role: 'viewer', organizationId: orgB });
  foreign.user_id = String(userB.id);
  const saB = await createPrincipal(t, { role: 'viewer', organizationId: orgB, kind: 'service_account' });
  foreign.service_account_id = String(saB.id);
  const tokenB = await db.selectFrom('api_tokens').select('id').where('user_id', '=', userB.id).executeTakeFirstOrThrow();
  foreign.token_id = String(tokenB.id);
  // An organization B mapping definition with one version (mapping ids are UUIDv7 text).
  const definitionB = newId();
  const versionB = newId();
  await db.insertInto('mapping_definitions').values({ id: definitionB, organization_id: orgB, platform: 'custom', stream: 'b-stream', name: 'b mapping' }).execute();
  await db.insertInto('mapping_versions').values({ id: versionB, definition_id: definitionB, version: 1, document: '{}', checksum: 'b' }).execute();
  await db.updateTable('mapping_definitions').set({ live_version_id: versionB }).where('id', '=', definitionB).execute();
  foreign.definition_id = definitionB;
  foreign.version_id = versionB;
  foreign.version_a_id = versionB;
  foreign.version_b_id = versionB;
  // An organization B quarantined event and drift field.
  const eventB = newId();
  await db
    .insertInto('quarantine_events')
    .values({ id: eventB, organization_id: orgB, integration_id: integration.id, stream: 'b-stream', received_at: new Date(), raw: '{}', error_kind: 'no_mapping', error_detail: 'b' })
    .execute();
  foreign.event_id = eventB;
  const fieldB = newId();
  await db
    .insertInto('drift_fields')
    .values({ id: fieldB, organization_id: orgB, integration_id: integration.id, stream: 'b-stream', path: 'b.field', value_type: 'string', first_seen_at: new Date(), last_seen_at: new Date() })
    .execute();
  foreign.field_id = fieldB;
  // An organization B destination and a route to it.
  const destinationB = newId();
  await db.insertInto('destinations').values({ id: destinationB, organization_id: orgB, name: 'b destination', type: 'http', config: JSON.stringify({ url: 'https://b.example.test/' }), delivery: '{}' }).execute();
  foreign.destination_id = destinationB;
  const routeB = newId();
  await db.insertInto('routes').values({ id: routeB, organization_id: orgB, name: 'b route', position: 1, condition: null, transforms: '[]', destination_ids: JSON.stringify([destinationB]) }).execute();
  foreign.route_id = routeB;
  // An organization B live capture session.
  const sessionB = newId();
  await db.insertInto('capture_sessions').values({ id: sessionB, organization_id: orgB, integration_id: integration.id, stream: null, status: 'active', max_events: 10, created_by: null, created_at: new Date(), expires_at: new Date(Date.now() + 3_600_000), stopped_at: null }).execute();
  foreign.session_id = sessionB;
  // An organization B backfill job.
  const jobB = newId();
  await db
    .insertInto('backfill_jobs')
    .values({ id: jobB, organization_id: orgB, integration_id: integration.id, streams: '["b-stream"]', from_ts: new Date(), to_ts: new Date(), status: 'queued', events: 0, created_at: new Date(), updated_at: new Date() })
    .execute();
  foreign.job_id = jobB;
}

function urlFor(op: Operation): string {
  let url = op.path;
  for (const name of op.params) url = url.replace(`{${name}}`, encodeURIComponent(foreign[name] ?? '987654'));
  const query = op.query ? new URLSearchParams(Object.entries(exampleFor(op.query) as Record<string, unknown>).map(([k, v]): [string, string] => [k, String(v)])) : undefined;
  return query && [...query].length ? `${url}?${query}` : url;
}

function call(op: Operation, headers: Record<string, string> = {}) {
  const payload = op.body ? (exampleFor(op.body) as object) : undefined;
  return t.app.inject({ method: op.method as 'GET', url: urlFor(op), headers, ...(payload !== undefined ? { payload } : {}) });
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
  await seedForeignObjects();
  ops = (await loadOperations()).filter((o) => o.path.startsWith('/api/'));
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
    if (unknownParams.size) console.log(`ids without a foreign fixture (checked with an unknown id): ${[...unknownParams].join(', ')}`);
    expect(failures).toEqual([]);
  });
});
