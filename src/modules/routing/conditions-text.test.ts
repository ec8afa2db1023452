// Conditions in the text form through the API (docs/conditions.md, The text form): routes and
// detection rules take the text or the tree, store the tree, answer condition_text; a syntax
// error is a 422 naming the line and column. And the warning for routes a final route shadows
// (docs/routing.md, Unreachable routes).
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/support/app.js';
import {
  createOrganization,
  createPrincipal,
  injectAs,
  insertDestination,
  type Principal,
} from '../../../test/support/identity.js';

type Json = Record<string, unknown>;
const BASE = '/api/collectors/routes';
let t: TestApp;
let org: number;
let admin: Principal;
let dest: string;

const call = (method: 'GET' | 'POST' | 'PUT', url: string, payload?: unknown) =>
  injectAs(t, admin, method, url, payload);

async function create(body: Json): Promise<Json> {
  const res = await call('POST', BASE, { destination_ids: [dest], ...body });
  expect(res.statusCode, res.body).toBe(201);
  return res.json<Json>();
}

beforeAll(async () => {
  t = await createTestApp({ env: { WEIR_TOKEN_RATE_LIMIT: '1000000' } });
  org = await createOrganization(t, 'Text conditions');
  admin = await createPrincipal(t, { role: 'admin', organizationId: org });
  dest = await insertDestination(t, org, 'siem', { config: JSON.stringify({ url: 'http://127.0.0.1:9/' }) });
});
afterAll(async () => t?.close());
beforeEach(async () => {
  await t.container.database.db.deleteFrom('routes').execute();
});

describe('route conditions as text', () => {
  it('takes the text, stores the tree and answers it printed', async () => {
    const route = await create({
      name: 'auth',
      condition: 'class_uid = 3002 and (status_id = 2 or severity_id >= 4) and actor.user.name ~ "adm*"',
    });
    expect(route.condition).toEqual({
      all: [
        { field: 'class_uid', op: 'eq', value: 3002 },
        {
          any: [
            { field: 'status_id', op: 'eq', value: 2 },
            { field: 'severity_id', op: 'gte', value: 4 },
          ],
        },
        { field: 'actor.user.name', op: 'prefix', value: 'adm' },
      ],
    });
    expect(route.condition_text).toBe(
      'class_uid = 3002 and (status_id = 2 or severity_id >= 4) and actor.user.name startswith "adm"',
    );
    const read = await call('GET', `${BASE}/${route.id as string}`);
    expect(read.json<Json>().condition).toEqual(route.condition);
  });

  it('still takes the JSON tree; its printed text gives the same tree back', async () => {
    const tree = {
      all: [
        { field: 'class_uid', op: 'in', value: [3002, 3003] },
        { not: { field: 'src_endpoint.ip', op: 'cidr', value: ['10.0.0.0/8', '192.168.0.0/16'] } },
        { field: 'process.file.name', op: 'in', value: ['powershell.exe', 'pwsh.exe'], ignore_case: true },
        {
          any: [
            { field: 'actor.user.name', op: 'regex', value: '^svc-[a-z]+$' },
            { field: 'observables[*].value', op: 'contains', value: 'a "quoted" \\ value' },
            { field: 'unmapped["x.y"]', op: 'exists' },
            { field: 'envelope.stream', op: 'ne', value: null },
          ],
        },
        { field: 'device.hostname', op: 'suffix', value: '.corp', ignore_case: true },
        { field: 'severity_id', op: 'lt', value: 6 },
        { field: 'actor.user.uid', op: 'not_in', value: ['0', true] },
        { field: 'dst_endpoint.port', op: 'not_exists' },
      ],
    };
    const fromJson = await create({ name: 'json', condition: tree });
    expect(fromJson.condition).toEqual(tree);
    expect(typeof fromJson.condition_text).toBe('string');
    const fromText = await create({ name: 'text', condition: fromJson.condition_text });
    expect(fromText.condition).toEqual(tree);
    expect(fromText.condition_text).toBe(fromJson.condition_text);
  });

  it('an empty text is no condition (every event); null prints as null', async () => {
    const route = await create({ name: 'all', condition: '   ' });
    expect(route.condition).toBeNull();
    expect(route.condition_text).toBeNull();
  });

  it('refuses a syntax error with 422 naming the line and column', async () => {
    const res = await call('POST', BASE, {
      name: 'bad',
      destination_ids: [dest],
      condition: 'class_uid = 3002 and\n  status_id =',
    });
    expect(res.statusCode).toBe(422);
    const body = res.json<{ detail: string; error: { code: string; details: { errors: Json[] } } }>();
    expect(body.error.code).toBe('route.invalid_definition');
    expect(body.detail).toBe('condition: expected a value, found the end of the query (line 2, column 14)');
    expect(body.error.details.errors[0]).toMatchObject({ path: 'condition', line: 2, column: 14, offset: 34 });
  });

  it('locates an unknown field of a text condition in the text, with the closest known field', async () => {
    const res = await call('POST', BASE, {
      name: 'bad',
      destination_ids: [dest],
      condition: 'class_uid = 3002 and actor.user.nmae = "x"',
    });
    expect(res.statusCode).toBe(422);
    const error = res.json<{ error: { details: { errors: Json[] } } }>().error.details.errors[0]!;
    expect(error).toMatchObject({ path: 'condition.all[1].field', line: 1, column: 22, closest: 'actor.user.name' });
  });

  it('an update takes text too, and the dry run checks drafts written as text', async () => {
    const route = await create({ name: 'r', condition: { field: 'class_uid', op: 'eq', value: 3002 } });
    const put = await call('PUT', `${BASE}/${route.id as string}`, { condition: 'severity_id > 3' });
    expect(put.statusCode, put.body).toBe(200);
    expect(put.json<Json>().condition).toEqual({ field: 'severity_id', op: 'gt', value: 3 });
    const dry = await call('POST', `${BASE}/dry-run`, {
      events: [
        { class_uid: 3002, severity_id: 5 },
        { class_uid: 3002, severity_id: 1 },
      ],
      routes: [{ condition: 'severity_id > 3', destination_ids: [dest] }],
    });
    expect(dry.statusCode, dry.body).toBe(200);
    expect(dry.json<{ totals: { matched: Json } }>().totals.matched).toEqual({ 'draft-1': 1 });
    const bad = await call('POST', `${BASE}/dry-run`, { events: [{}], routes: [{ condition: 'severity_id >' }] });
    expect(bad.statusCode).toBe(422);
    expect(bad.json<{ detail: string }>().detail).toMatch(/^routes\[0\]\.condition: .*\(line 1, column 14\)$/);
  });
});

describe('routes a final route shadows', () => {
  const warningsOf = (r: Json) => (r.warnings ?? []) as Json[];

  it('warns on creation after a final route without condition, and marks both in the list', async () => {
    const all = await create({ name: 'everything', final: true });
    expect(all.warnings).toBeUndefined();
    const later = await create({ name: 'auth', condition: 'class_uid = 3002', final: false });
    expect(warningsOf(later)).toEqual([
      expect.objectContaining({ code: 'route.unreachable', route_id: all.id, route_name: 'everything', position: 1 }),
    ]);
    expect(warningsOf(later)[0]!.message).toMatch(/^Never matches: route "everything" \(position 1\) is final/);
    const list = (await call('GET', `${BASE}?organization_id=${org}`)).json<Json[]>();
    expect(list.map((r) => [r.name, warningsOf(r).map((w) => w.code)])).toEqual([
      ['everything', ['route.shadows']],
      ['auth', ['route.unreachable']],
    ]);
  });

  it('warns after a final route with the same condition, or one the later condition implies', async () => {
    const first = await create({ name: 'windows', condition: 'metadata.product.name = "Windows"', final: true });
    const same = await create({
      name: 'same',
      condition: { field: 'metadata.product.name', op: 'eq', value: 'Windows' },
    });
    const narrower = await create({
      name: 'narrower',
      condition: 'metadata.product.name = "Windows" and severity_id > 3',
    });
    const other = await create({ name: 'other', condition: 'metadata.product.name = "Okta"' });
    for (const r of [same, narrower]) expect(warningsOf(r).map((w) => w.route_id)).toEqual([first.id]);
    expect(other.warnings).toBeUndefined();
  });

  it('a reorder that puts the route first, or a final route made not final, clears the warning', async () => {
    const all = await create({ name: 'everything', final: true });
    const later = await create({ name: 'auth', condition: 'class_uid = 3002' });
    expect(warningsOf(later)).toHaveLength(1);
    const reordered = await call('POST', `${BASE}/reorder`, { route_ids: [later.id, all.id] });
    expect(reordered.statusCode, reordered.body).toBe(200);
    expect(reordered.json<Json[]>().map((r) => [r.name, warningsOf(r).length])).toEqual([
      ['auth', 0],
      ['everything', 0],
    ]);
    const back = await call('POST', `${BASE}/reorder`, { route_ids: [all.id, later.id] });
    expect(back.json<Json[]>().map((r) => warningsOf(r).map((w) => w.code))).toEqual([
      ['route.shadows'],
      ['route.unreachable'],
    ]);
    const put = await call('PUT', `${BASE}/${all.id as string}`, { final: false });
    expect(put.json<Json>().warnings).toBeUndefined();
    const read = await call('GET', `${BASE}/${later.id as string}`);
    expect(read.json<Json>().warnings).toBeUndefined();
  });

  it('a disabled final route shadows nothing', async () => {
    await create({ name: 'everything', final: true, enabled: false });
    const later = await create({ name: 'auth', condition: 'class_uid = 3002' });
    expect(later.warnings).toBeUndefined();
  });
});

describe('detection rule conditions as text', () => {
  it('takes the text, stores the tree, answers condition_text; 422 with the position', async () => {
    const res = await call('POST', '/api/detections/rules', {
      name: 'failed logons',
      definition: { condition: 'class_uid = 3002 and status_id = 2', severity_id: 3 },
    });
    expect(res.statusCode, res.body).toBe(201);
    const rule = res.json<{ definition: Json; condition_text: string }>();
    expect(rule.definition.condition).toEqual({
      all: [
        { field: 'class_uid', op: 'eq', value: 3002 },
        { field: 'status_id', op: 'eq', value: 2 },
      ],
    });
    expect(rule.condition_text).toBe('class_uid = 3002 and status_id = 2');
    const bad = await call('POST', '/api/detections/rules', {
      name: 'bad',
      definition: { condition: 'class_uid = 3002 and (status_id = 2', severity_id: 3 },
    });
    expect(bad.statusCode).toBe(422);
    expect(bad.json<{ detail: string }>().detail).toBe(
      'definition.condition: expected ")", found the end of the query (line 1, column 36)',
    );
  });

  it("a Sigma rule's dry run answers its condition as text, ignore_case as nocase", async () => {
    const yaml = readFileSync(
      new URL(
        '../../../third_party/sigma/rules/windows/process_creation/proc_creation_win_whoami_groups_discovery.yml',
        import.meta.url,
      ),
      'utf8',
    );
    const res = await call('POST', '/api/detections/rules/sigma?dry_run=true', { yaml });
    expect(res.statusCode, res.body).toBe(200);
    const out = res.json<{ definition: { condition: unknown }; condition_text: string }>();
    expect(out.condition_text).toMatch(/nocase/);
    // The text says the compiled tree exactly: a rule created from it has the same condition.
    const made = await call('POST', '/api/detections/rules', {
      name: 'whoami groups (text)',
      definition: { condition: out.condition_text, severity_id: 2 },
    });
    expect(made.statusCode, made.body).toBe(201);
    expect(made.json<{ definition: { condition: unknown } }>().definition.condition).toEqual(out.definition.condition);
  });
});

describe('enrichment policy conditions as text', () => {
  const policy = {
    key: 'src_endpoint.ip',
    lookup: { source_id: 'builtin-geoip' },
    output: { fields: { 'src_endpoint.location.country': 'country_code' } },
  };

  it('takes the text and stores the tree; a syntax error is a 422 with the line and column', async () => {
    const res = await call('POST', '/api/collectors/enrichment/policies', {
      ...policy,
      name: 'geo for logons',
      condition: 'class_uid = 3002 and src_endpoint.ip exists',
    });
    expect(res.statusCode, res.body).toBe(201);
    expect(JSON.stringify(res.json())).toContain(
      JSON.stringify({
        all: [
          { field: 'class_uid', op: 'eq', value: 3002 },
          { field: 'src_endpoint.ip', op: 'exists' },
        ],
      }),
    );
    const bad = await call('POST', '/api/collectors/enrichment/policies', {
      ...policy,
      name: 'bad',
      condition: 'class_uid = = 3002',
    });
    expect(bad.statusCode).toBe(422);
    const body = bad.json<{ detail: string; error: { code: string } }>();
    expect(body.error.code).toBe('enrichment.invalid_rule');
    expect(body.detail).toBe('condition: expected a value, found "=" (line 1, column 13)');
  });
});
