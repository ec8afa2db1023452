// The input contract, swept over every operation of the OpenAPI document (operations added
// later are covered without new code). For every path parameter, query parameter and JSON
// body field (nested ones included), the other inputs hold valid values and this one takes
// each boundary value in turn: NUL, a lone surrogate, 10,000 characters, -1, 0, 2^31, 2^53,
// 1e309, a value of the wrong type and null. No answer may be a 5xx, every 4xx carries a
// string `detail`, and no failed operation goes missing from the audit trail.
// The caller is a platform administrator, so the input reaches the services and the
// database, where the faults this sweep guards against lived.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadOperations, seedObjects, type ApiOperation } from '../support/api-operations.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { createOrganization, createPrincipal, type Principal } from '../support/identity.js';
import { loginDocument } from '../support/mappings.js';
import { exampleFor, type JsonSchema } from '../support/schema-example.js';

/** Stands for the JSON number 1e309 (Infinity once parsed), which JSON.stringify cannot write. */
const INFINITE = '\u0001weir-sweep-1e309\u0001';
// 10,000 characters that do not compress (a repeated letter would fit in any index).
const LONG = fc.sample(fc.string({ minLength: 10_000, maxLength: 10_000, unit: 'grapheme-ascii' }), {
  seed: 13,
  numRuns: 1,
})[0]!;

interface Boundary {
  name: string;
  /** The value in a JSON body; a function of the field's schema for the wrong type. */
  json: unknown;
  /** The value in a URL (path segment or query value), already encoded. */
  url: string;
}

const BOUNDARIES: Boundary[] = [
  { name: 'NUL', json: 'a\u0000b', url: 'a%00b' },
  { name: 'lone surrogate', json: 'a\ud800b', url: 'a%ED%A0%80b' },
  { name: '10,000 characters', json: LONG, url: encodeURIComponent(LONG) },
  { name: '-1', json: -1, url: '-1' },
  { name: '0', json: 0, url: '0' },
  { name: '2^31', json: 2 ** 31, url: String(2 ** 31) },
  { name: '2^53', json: 2 ** 53, url: String(2 ** 53) },
  { name: '1e309', json: INFINITE, url: '1e309' },
  { name: 'wrong type', json: undefined, url: '%7B%22a%22%3A1%7D' },
  { name: 'null', json: null, url: '' },
];

/**
 * Valid values a schema cannot tell (a known platform, a mapping document, one of two
 * exclusive fields), so that the baseline request of these operations succeeds and each
 * swept field is the only thing wrong with a request.
 */
const BASELINES: Record<string, () => Record<string, unknown>> = {
  'auth.set_locale': () => ({ locale: 'en-GB' }),
  'integrations.create': () => ({ platform: 'custom' }),
  'mappings.dry_run': () => ({
    document: loginDocument(),
    events: [{ type: 'login', ts: '2026-01-01T00:00:00Z', user: { name: 'a' }, host: 'h' }],
  }),
  'mappings.versions_create': () => ({ document: loginDocument() }),
  'mappings.rollback': () => ({ version: 1 }),
  'routes.create': () => ({ organization_id: Number(ids.organization_id), destination_ids: [ids.destination_id] }),
  'routes.dry_run': () => ({ organization_id: Number(ids.organization_id) }),
  'destinations.create': () => ({
    type: 'http',
    organization_id: Number(ids.organization_id),
    config: { url: 'http://127.0.0.1:9/' },
  }),
  'destinations.dlq_reprocess': () => ({ all: true }),
  'collector_config.update': () => ({ max_pages_per_cycle: 10 }),
  'config_bundle.import': () => ({
    dry_run: true,
    document: {
      format: 'weir.config-bundle',
      version: 1,
      weir_version: '0.1.0',
      exported_at: '2026-01-01T00:00:00Z',
      organization: { name: 'Sweep' },
      integrations: [],
      mappings: [],
      destinations: [],
      routes: [],
      enrichment_tables: [],
      enrichment_policies: [],
    },
  }),
  'search.run': () => ({ query: { organization_id: Number(ids.organization_id) } }),
  'search.replay': () => ({
    organization_id: Number(ids.organization_id),
    destination_id: ids.destination_id,
    time: { last: '1h' },
    query: 'class_uid = 3002',
    where: undefined,
  }),
  'queries.create': () => ({ organization_id: Number(ids.organization_id), query: { query: 'class_uid = 3002' } }),
  'queries.update': () => ({ query: { query: 'class_uid = 3002' } }),
  'schedules.create': () => ({ query_id: ids.query_id, interval_seconds: 3600 }),
  'detection_rules.create': () => ({
    organization_id: Number(ids.organization_id),
    definition: { condition: { field: 'class_uid', op: 'eq', value: 3002 }, severity_id: 3 },
  }),
  'detection_rules.update': () => ({
    definition: { condition: { field: 'class_uid', op: 'eq', value: 3002 }, severity_id: 4 },
  }),
  'detection_rules.rollback': () => ({ version: 1 }),
  'detection_rules.import_sigma': () => ({
    organization_id: Number(ids.organization_id),
    yaml: 'title: sweep\nlogsource:\n  category: process_creation\ndetection:\n  s:\n    Image|endswith: \\cmd.exe\n  condition: s\n',
  }),
  'detections.update': () => ({ status: 'in_progress' }),
  'identity.update_config': () => ({
    issuer: 'https://127.0.0.1:9/',
    redirect_uri: 'https://weir.example.test/api/auth/sso/callback',
    rules: [],
    scopes: ['openid'],
    scim_base_url: null,
  }),
};

function wrongType(schema: JsonSchema | undefined): unknown {
  const type = Array.isArray(schema?.type) ? schema.type[0] : schema?.type;
  return type === 'object' || type === 'array' ? 'not-an-object' : { a: 1 };
}

let t: TestApp;
let admin: Principal;
let ids: Record<string, string> = {};
let ops: ApiOperation[] = [];
let ingestionToken = '';
const answers: { where: string; status: number; body: string; detail: unknown; declared: string[] }[] = [];

/** The example value of a field, with the seeded object's id where the field names one. */
function baseline(schema: JsonSchema | undefined, name?: string): unknown {
  if (name && name in ids) {
    const type = Array.isArray(schema?.type) ? schema.type.find((x) => x !== 'null') : schema?.type;
    return type === 'integer' ? Number(ids[name]) : type === 'array' ? [] : ids[name];
  }
  return withIds(schema, exampleFor(schema));
}

function withIds(schema: JsonSchema | undefined, value: unknown): unknown {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return value;
  const out: Record<string, unknown> = { ...(value as Record<string, unknown>) };
  for (const key of Object.keys(out)) out[key] = baseline(schema?.properties?.[key], key);
  return out;
}

/** Every field of a body schema, nested ones included, as property paths ('0' for an array item). */
function fields(
  schema: JsonSchema | undefined,
  prefix: string[] = [],
  depth = 0,
): { path: string[]; schema: JsonSchema }[] {
  if (!schema || depth > 4) return [];
  const alt = schema.anyOf ?? schema.oneOf;
  if (alt?.length) return fields(alt.find((s) => s.type !== 'null') ?? alt[0], prefix, depth);
  const out: { path: string[]; schema: JsonSchema }[] = [];
  for (const [name, sub] of Object.entries(schema.properties ?? {})) {
    out.push({ path: [...prefix, name], schema: sub });
    out.push(...fields(sub, [...prefix, name], depth + 1));
  }
  if (schema.items) {
    out.push({ path: [...prefix, '0'], schema: schema.items });
    out.push(...fields(schema.items, [...prefix, '0'], depth + 1));
  }
  return out;
}

/** A copy of `body` with the value at `path` replaced (containers created as needed). */
function setAt(body: unknown, path: string[], value: unknown): unknown {
  const root = structuredClone(body ?? {}) as Record<string, unknown>;
  let at: Record<string, unknown> = root;
  for (const [i, key] of path.entries()) {
    if (i === path.length - 1) {
      at[key] = value;
      break;
    }
    const next = at[key];
    if (!next || typeof next !== 'object') at[key] = /^\d+$/.test(path[i + 1]!) ? [] : {};
    at = at[key] as Record<string, unknown>;
  }
  return root;
}

function pathFor(op: ApiOperation, override?: { name: string; url: string }): string {
  let url = op.path;
  for (const name of op.params) {
    const value =
      override?.name === name
        ? override.url
        : encodeURIComponent(ids[name] ?? String(baseline(paramSchema(op, name, 'path'))));
    url = url.replace(`{${name}}`, value);
  }
  return url;
}

function paramSchema(op: ApiOperation, name: string, where: 'path' | 'query'): JsonSchema | undefined {
  return op.parameters.find((p) => p.in === where && p.name === name)?.schema;
}

function queryFor(op: ApiOperation, override?: { name: string; url: string }): string {
  const parts: string[] = [];
  for (const p of op.parameters.filter((x) => x.in === 'query')) {
    if (override?.name === p.name) parts.push(`${p.name}=${override.url}`);
    // An optional parameter that names a seeded object (organization_id above all) is given too:
    // a platform caller must say which organization most organization-scoped operations act on.
    else if (p.required || p.name in ids)
      parts.push(`${p.name}=${encodeURIComponent(String(baseline(p.schema, p.name)))}`);
  }
  return parts.length ? `?${parts.join('&')}` : '';
}

async function send(op: ApiOperation, where: string, url: string, body?: unknown): Promise<void> {
  const payload = body === undefined ? undefined : JSON.stringify(body).replaceAll(JSON.stringify(INFINITE), '1e309');
  // Push and the protocol inputs take an integration's ingestion token, not the administrator's.
  const ingest = op.requires === 'public' && op.path.startsWith('/api/ingest/');
  const res = await t.app.inject({
    method: op.method as 'GET',
    url,
    headers: {
      ...(ingest ? { authorization: `Bearer ${await ingestionTokenFor(op)}` } : admin.headers),
      ...(payload !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    ...(payload !== undefined ? { payload } : {}),
  });
  let detail: unknown;
  try {
    detail = (JSON.parse(res.body) as { detail?: unknown }).detail;
  } catch {
    detail = undefined;
  }
  answers.push({
    where: `${op.method} ${op.path} ${where}`,
    status: res.statusCode,
    body: res.body.slice(0, 300),
    detail,
    declared: op.statuses,
  });
}

/** Destructive operations last, so the seeded objects serve every other operation first. */
function destructiveLast(a: ApiOperation, b: ApiOperation): number {
  const rank = (o: ApiOperation) =>
    o.method === 'DELETE' || /delete|deactivate|revoke|purge|discard|rotate/.test(o.path) ? 1 : 0;
  return rank(a) - rank(b);
}

beforeAll(async () => {
  t = await createTestApp({ captureLogs: true, env: { WEIR_TOKEN_RATE_LIMIT: '1000000' } });
  const org = await createOrganization(t, 'Sweep');
  admin = await createPrincipal(t, { role: 'admin', organizationId: null });
  ids = await seedObjects(t, org);
  ops = (await loadOperations(t)).filter((o) => o.path.startsWith('/api/')).sort(destructiveLast);
}, 120_000);

/** An ingestion token for the operation (minted afresh per operation: the sweep of ingest.create_token rotates it). */
async function ingestionTokenFor(op: ApiOperation): Promise<string> {
  if (ingestionToken.startsWith(`${op.operationId} `)) return ingestionToken.slice(op.operationId.length + 1);
  const created = await t.app.inject({
    method: 'POST',
    url: `/api/ingest/integrations/${ids.integration_id}/token`,
    headers: admin.headers,
  });
  const token = String(created.json<{ token?: string }>().token);
  ingestionToken = `${op.operationId} ${token}`;
  return token;
}
afterAll(async () => t?.close());

describe('boundary sweep over every operation', () => {
  it('answers every boundary value of every input with a 4xx or a success, never a 5xx', async () => {
    let inputs = 0;
    for (const op of ops) {
      const body = op.body ? { ...(baseline(op.body) as object), ...BASELINES[op.operationId]?.() } : undefined;
      await send(op, 'baseline', pathFor(op) + queryFor(op), body);
      for (const name of op.params) {
        inputs++;
        for (const b of BOUNDARIES)
          await send(op, `path ${name}=${b.name}`, pathFor(op, { name, url: b.url }) + queryFor(op), body);
      }
      for (const p of op.parameters.filter((x) => x.in === 'query')) {
        inputs++;
        for (const b of BOUNDARIES)
          await send(op, `query ${p.name}=${b.name}`, pathFor(op) + queryFor(op, { name: p.name, url: b.url }), body);
      }
      for (const field of fields(op.body)) {
        inputs++;
        for (const b of BOUNDARIES) {
          const value = b.name === 'wrong type' ? wrongType(field.schema) : b.json;
          await send(
            op,
            `body ${field.path.join('.')}=${b.name}`,
            pathFor(op) + queryFor(op),
            setAt(body, field.path, value),
          );
        }
      }
    }
    console.log(`boundary sweep: ${ops.length} operations, ${inputs} inputs, ${answers.length} requests`);
    // The sweep is only as deep as its baselines: most operations must succeed with them, or
    // each swept field would be refused for another field's fault.
    const baselines = answers.filter((x) => x.where.endsWith(' baseline'));
    const succeeded = baselines.filter((a) => a.status < 300).length;
    console.log(
      `baselines: ${succeeded} of ${baselines.length} succeed; the others: ${baselines
        .filter((a) => a.status >= 300)
        .map((a) => `${a.status} ${a.where}`)
        .join('; ')}`,
    );
    expect(succeeded / baselines.length).toBeGreaterThan(0.75);
    expect(ops.length).toBeGreaterThan(100);
    const faults = answers.filter((a) => a.status >= 500).map((a) => `${a.where}: ${a.status} ${a.body}`);
    expect(faults).toEqual([]);
  }, 900_000);

  it('answers only statuses the OpenAPI document declares for the operation', () => {
    const undeclared = answers
      .filter((a) => !a.declared.includes(String(a.status)))
      .map((a) => `${a.where}: ${a.status}`);
    expect(undeclared).toEqual([]);
  });

  it('gives every 4xx answer a string detail', () => {
    const bare = answers
      .filter((a) => a.status >= 400 && a.status < 500 && typeof a.detail !== 'string')
      .map((a) => `${a.where}: ${a.status} ${a.body}`);
    expect(bare).toEqual([]);
  });

  it('records every failed operation in the audit trail (the offending value escaped)', () => {
    const lost = t.logs.filter((l) => typeof l.msg === 'string' && l.msg.includes('could not record'));
    expect(lost.map((l) => l.msg)).toEqual([]);
    expect(
      t.logs.filter((l) => l.level === 50).map((l) => `${String(l.msg)} ${JSON.stringify(l.err ?? '').slice(0, 200)}`),
    ).toEqual([]);
  });
});
