// The mapping author's tools through the API: dry runs, samples, field discovery, casts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/support/app.js';
import {
  createOrganization,
  createPrincipal,
  type Principal,
  injectAs,
  insertIntegration,
} from '../../../test/support/identity.js';
import { defineMapping, loginDocument } from '../../../test/support/mappings.js';
import { newId } from '../../core/ids.js';
import { TYPE_CASTS } from '../../pipeline/normalize/casts.js';

let t: TestApp;
let orgA: number;
let orgB: number;
let root: Principal;
let adminA: Principal;
let viewerA: Principal;
let intA: number; // platform custom, org A
let intA2: number; // platform custom, org A, no samples of stream auth
let intB: number; // platform custom, org B
let defA: string; // org A, custom/auth, live: loginDocument
let builtin: string; // built-in custom/auth, live: loginDocument
let v1: Json;

type Json = Record<string, unknown>;
type DryRun = { version: Json | null; policy: string; results: Json[]; summary: Json };

const GOOD = {
  type: 'login',
  ts: 1704161045,
  user: { name: 'ana' },
  client: { ip: '10.1.2.3' },
  host: 'idp.example.com',
};
const NO_USER = { type: 'login', ts: 1704161045, client: { ip: '10.1.2.3' }, host: 'idp.example.com' };
const NO_HOST = { type: 'login', ts: 1704161045, user: { name: 'ana' }, client: { ip: '10.1.2.3' } };
const BAD_IP = { type: 'login', ts: 1704161045, user: { name: 'ana' }, client: { ip: 'not-an-ip' }, host: 'h' };
const LOGOUT = { type: 'logout' };

const call = (who: Principal, method: 'GET' | 'POST', url: string, payload?: unknown) =>
  injectAs(t, who, method, url, payload);

const integration = (organizationId: number, name: string) => insertIntegration(t, organizationId, name);

let clock = Date.parse('2025-05-01T00:00:00Z');
async function sample(organizationId: number, integrationId: number, stream: string, raw: Json): Promise<string> {
  const id = newId();
  clock += 1000;
  await t.container.database.db
    .insertInto('raw_samples')
    .values({
      id,
      organization_id: organizationId,
      integration_id: integrationId,
      stream,
      received_at: new Date(clock),
      raw: JSON.stringify(raw),
    })
    .execute();
  return id;
}

async function auditCount(): Promise<number> {
  const row = await t.container.database.db
    .selectFrom('audit_log')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

beforeAll(async () => {
  t = await createTestApp({ env: { WEIR_TOKEN_RATE_LIMIT: '1000000' } });
  orgA = await createOrganization(t, 'Org A');
  orgB = await createOrganization(t, 'Org B');
  root = await createPrincipal(t, { role: 'admin' });
  adminA = await createPrincipal(t, { role: 'admin', organizationId: orgA });
  viewerA = await createPrincipal(t, { role: 'viewer', organizationId: orgA });
  intA = await integration(orgA, 'a-app');
  intA2 = await integration(orgA, 'a-other');
  intB = await integration(orgB, 'b-app');
  defA = await defineMapping(t, orgA, 'custom', 'auth');
  builtin = await defineMapping(t, null, 'custom', 'auth');
  v1 = (await call(adminA, 'POST', `/api/mappings/${defA}/versions`, { document: loginDocument() })).json<Json>();
  expect(
    (await call(root, 'POST', `/api/mappings/${builtin}/versions`, { document: loginDocument() })).statusCode,
  ).toBe(201);
  await sample(orgA, intA, 'auth', {
    ...GOOD,
    user: { name: 'ana', email: 'ana.silva@example.com' },
    extra: { tags: ['a', 1] },
  });
  await sample(orgA, intA, 'auth', { ...NO_HOST, session: null });
  await sample(orgA, intA, 'other', { type: 'noise' });
  await sample(orgA, intA2, 'auth', GOOD);
  await sample(orgB, intB, 'auth', { ...GOOD, secret_b: 'only in B' });
});
afterAll(async () => t?.close());

describe('GET /api/mappings/normalize/type-casts', () => {
  it('lists every cast with what it accepts and produces (not captured by /api/mappings/{definition_id})', async () => {
    const res = await call(viewerA, 'GET', '/api/mappings/normalize/type-casts');
    expect(res.statusCode).toBe(200);
    const casts = res.json<Json[]>();
    expect(casts.map((c) => c.name)).toEqual(TYPE_CASTS.map((c) => c.name));
    expect(casts.find((c) => c.name === 'timestamp')).toMatchObject({
      output: 'timestamp_t',
      example: { input: expect.anything(), output: expect.any(Number) },
    });
  });
});

describe('GET /api/mappings/samples', () => {
  it('answers recent raw samples of an integration in scope, newest first, personal data masked', async () => {
    const res = await call(viewerA, 'GET', `/api/mappings/samples?integration_id=${intA}`);
    expect(res.statusCode).toBe(200);
    const body = res.json<{ total: number; items: Json[]; limit: number; offset: number }>();
    expect(body).toMatchObject({ total: 3, limit: 20, offset: 0 });
    expect(body.items.map((s) => s.stream)).toEqual(['other', 'auth', 'auth']);
    const first = body.items[2]!;
    expect(first).toMatchObject({ integration_id: intA, stream: 'auth', received_at: expect.stringMatching(/Z$/) });
    const raw = first.raw as { user: Json; client: Json; host: string };
    expect(raw.user.email).not.toContain('ana.silva');
    expect(raw.user.name).not.toBe('ana');
    expect(raw.client.ip).toBe('10.1.2.x');
    expect(raw.host).toBe('idp.example.com');
  });

  it('filters by stream and pages', async () => {
    const auth = (
      await call(viewerA, 'GET', `/api/mappings/samples?integration_id=${intA}&stream=auth&limit=1&offset=1`)
    ).json<{ total: number; items: Json[] }>();
    expect(auth.total).toBe(2);
    expect(auth.items).toHaveLength(1);
    expect((auth.items[0]!.raw as Json).type).toBe('login');
  });

  it("answers 404 for another organization's integration and 422 for a missing id or a limit over 50", async () => {
    expect((await call(adminA, 'GET', `/api/mappings/samples?integration_id=${intB}`)).statusCode).toBe(404);
    expect((await call(adminA, 'GET', '/api/mappings/samples')).statusCode).toBe(422);
    expect((await call(adminA, 'GET', `/api/mappings/samples?integration_id=${intA}&limit=51`)).statusCode).toBe(422);
  });
});

describe('POST /api/mappings/dry-run', () => {
  it('runs a draft on given events: OCSF output, every issue, and what the strict default would quarantine', async () => {
    const before = await auditCount();
    const res = await call(viewerA, 'POST', '/api/mappings/dry-run', {
      document: loginDocument(),
      events: [GOOD, NO_USER, NO_HOST, BAD_IP, LOGOUT],
    });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json<DryRun>();
    expect(body.version).toBeNull();
    expect(body.policy).toBe('strict');
    const [good, noUser, noHost, badIp, logout] = body.results as Json[];
    expect(good).toMatchObject({ index: 0, ok: true, quarantine: false, issues: [] });
    expect(good!.ocsf).toMatchObject({
      class_uid: 3002,
      user: { name: 'ana' },
      src_endpoint: { ip: '10.1.2.3' },
      time: 1704161045000,
    });
    expect(noUser).toMatchObject({
      ok: false,
      quarantine: true,
      error_kind: 'missing_required',
      issues: [{ path: 'user', kind: 'missing_required' }],
    });
    expect(noUser!.ocsf).toBeDefined();
    expect(noHost).toMatchObject({
      ok: false,
      quarantine: true,
      error_kind: 'invalid_ocsf',
      issues: [{ kind: 'constraint' }],
    });
    expect(badIp).toMatchObject({ ok: false, quarantine: true, error_kind: 'cast_failed', issues: [] });
    expect(logout).toMatchObject({ ok: false, quarantine: true, error_kind: 'no_matching_rule' });
    expect(body.summary).toEqual({ total: 5, ok: 1, flagged: 0, quarantined: 4 });
    // A dry run changes nothing: no audit entry either.
    expect(await auditCount()).toBe(before);
  });

  it("follows the organization's lenient policy: invalid OCSF is flagged, a missing required attribute still quarantined", async () => {
    await t.container.database.db
      .insertInto('ocsf_policies')
      .values({ organization_id: orgA, mode: 'lenient' })
      .execute();
    try {
      const body = (
        await call(viewerA, 'POST', '/api/mappings/dry-run', { definition_id: defA, events: [GOOD, NO_USER, NO_HOST] })
      ).json<DryRun>();
      expect(body.policy).toBe('lenient');
      expect(body.results.map((r) => [r.ok, r.quarantine, r.error_kind ?? null])).toEqual([
        [true, false, null],
        [false, true, 'missing_required'],
        [false, false, 'invalid_ocsf'],
      ]);
      expect(body.summary).toEqual({ total: 3, ok: 1, flagged: 1, quarantined: 1 });
      // A platform admin names the organization whose policy applies; strict when it has none.
      const forB = (
        await call(root, 'POST', '/api/mappings/dry-run', {
          document: loginDocument(),
          events: [NO_HOST],
          organization_id: orgB,
        })
      ).json<DryRun>();
      expect(forB.policy).toBe('strict');
    } finally {
      await t.container.database.db.deleteFrom('ocsf_policies').where('organization_id', '=', orgA).execute();
    }
  });

  it('runs the live version of a definition, or the version named', async () => {
    const v2 = (
      await call(adminA, 'POST', `/api/mappings/${defA}/versions`, {
        document: loginDocument([{ target: 'status_id', value: 1 }]),
      })
    ).json<Json>();
    const live = (
      await call(viewerA, 'POST', '/api/mappings/dry-run', { definition_id: defA, events: [GOOD] })
    ).json<DryRun>();
    expect(live.version).toEqual({ id: v2.id, definition_id: defA, version: 2 });
    expect(live.results[0]!.ocsf).toMatchObject({ status_id: 1 });
    const old = (
      await call(viewerA, 'POST', '/api/mappings/dry-run', { definition_id: defA, version_id: v1.id, events: [GOOD] })
    ).json<DryRun>();
    expect(old.version).toMatchObject({ id: v1.id, version: 1 });
    expect(old.results[0]!.ocsf).not.toHaveProperty('status_id');
  });

  it("runs on an integration's recent samples and masks inputs and outputs", async () => {
    const res = await call(viewerA, 'POST', '/api/mappings/dry-run', {
      document: loginDocument(),
      sample: { integration_id: intA, stream: 'auth' },
    });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json<DryRun>();
    expect(body.summary).toEqual({ total: 2, ok: 1, flagged: 0, quarantined: 1 });
    const good = body.results.find((r) => r.ok)!;
    expect(good.sample_id).toEqual(expect.any(String));
    expect(JSON.stringify(good)).not.toContain('ana.silva');
    expect((good.input as { client: Json }).client.ip).toBe('10.1.2.x');
    expect((good.ocsf as { src_endpoint: Json }).src_endpoint.ip).toBe('10.1.2.x');
    expect((good.ocsf as { user: Json }).user.name).not.toBe('ana');
    expect((good.ocsf as { class_uid: number }).class_uid).toBe(3002);
  });

  it('answers 422 mapping.invalid_document for an invalid draft, with the problems located', async () => {
    const res = await call(viewerA, 'POST', '/api/mappings/dry-run', {
      document: loginDocument([{ target: 'bogus', from: 'x' }]),
      events: [GOOD],
    });
    expect(res.statusCode).toBe(422);
    expect(res.json().error).toMatchObject({
      code: 'mapping.invalid_document',
      details: { problems: [{ at: '/rules/0/set/5/target' }] },
    });
  });

  it('answers 422 unless exactly one mapping source and one event source are given', async () => {
    const bad = [
      { events: [GOOD] },
      { document: loginDocument(), definition_id: defA, events: [GOOD] },
      { document: loginDocument() },
      { document: loginDocument(), events: [GOOD], sample: { integration_id: intA } },
      { document: loginDocument(), version_id: v1.id, events: [GOOD] },
      { document: loginDocument(), events: Array.from({ length: 101 }, () => GOOD) },
      { document: loginDocument(), events: [] },
    ];
    for (const payload of bad)
      expect(
        (await call(viewerA, 'POST', '/api/mappings/dry-run', payload)).statusCode,
        JSON.stringify(payload).slice(0, 80),
      ).toBe(422);
  });

  it("answers 404 for another organization's definition, integration or organization, and 409 without a live version", async () => {
    const defB = await defineMapping(t, orgB, 'custom', 'auth');
    expect(
      (await call(adminA, 'POST', '/api/mappings/dry-run', { definition_id: defB, events: [GOOD] })).statusCode,
    ).toBe(404);
    expect(
      (
        await call(adminA, 'POST', '/api/mappings/dry-run', {
          document: loginDocument(),
          sample: { integration_id: intB },
        })
      ).statusCode,
    ).toBe(404);
    expect(
      (
        await call(adminA, 'POST', '/api/mappings/dry-run', {
          document: loginDocument(),
          events: [GOOD],
          organization_id: orgB,
        })
      ).statusCode,
    ).toBe(404);
    const empty = await defineMapping(t, orgA, 'custom', 'empty');
    const res = await call(adminA, 'POST', '/api/mappings/dry-run', { definition_id: empty, events: [GOOD] });
    expect(res.statusCode).toBe(409);
    expect(res.json().detail).toContain('no live version');
  });
});

describe('POST /api/mappings/test-cases', () => {
  type Cases = {
    version: Json | null;
    total: number;
    passed: number;
    failed: number;
    results: { index: number; name: string; ok: boolean; failures: string[] }[];
  };
  const withTests = (tests: Json[]) => ({ ...loginDocument(), tests });
  const CASES = [
    { name: 'a sign-in', input: GOOD, expect: { class_uid: 3002, 'user.name': 'ana', 'src_endpoint.ip': '10.1.2.3' } },
    { name: 'the wrong user', input: GOOD, expect: { 'user.name': 'bob', 'dst_endpoint.hostname': null } },
    { name: 'a logout', input: LOGOUT, quarantine: 'no_matching_rule' },
  ];

  it("runs a draft's cases without publishing: pass or fail per case, each failure with what was expected and what came", async () => {
    const before = (await call(viewerA, 'GET', `/api/mappings/${defA}/versions`)).json<{ total: number }>().total;
    const res = await call(viewerA, 'POST', '/api/mappings/test-cases', { document: withTests(CASES) });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json<Cases>();
    expect(body).toMatchObject({ version: null, total: 3, passed: 2, failed: 1 });
    expect(body.results.map((r) => [r.name, r.ok])).toEqual([
      ['a sign-in', true],
      ['the wrong user', false],
      ['a logout', true],
    ]);
    expect(body.results[1]!.failures).toEqual([
      'user.name: expected "bob", got "ana"',
      'dst_endpoint.hostname: expected (absent), got "idp.example.com"',
    ]);
    expect((await call(viewerA, 'GET', `/api/mappings/${defA}/versions`)).json<{ total: number }>().total).toBe(before);
  });

  it("runs a stored version's cases, the live one by default", async () => {
    const passing = CASES.filter((c) => c.name !== 'the wrong user');
    const published = (
      await call(adminA, 'POST', `/api/mappings/${defA}/versions`, { document: withTests(passing) })
    ).json<Json>();
    const body = (await call(viewerA, 'POST', '/api/mappings/test-cases', { definition_id: defA })).json<Cases>();
    expect(body).toMatchObject({ version: { id: published.id, definition_id: defA }, total: 2, passed: 2, failed: 0 });
    const old = (
      await call(viewerA, 'POST', '/api/mappings/test-cases', { definition_id: defA, version_id: v1.id })
    ).json<Cases>();
    expect(old).toMatchObject({ version: { id: v1.id, version: 1 }, total: 0, results: [] });
  });

  it("answers 422 for an invalid draft or the wrong mix of inputs, 404 outside the caller's scope", async () => {
    const invalidDraft = await call(viewerA, 'POST', '/api/mappings/test-cases', {
      document: withTests([{ name: 'x', input: GOOD }]),
    });
    expect(invalidDraft.statusCode).toBe(422);
    expect(invalidDraft.json().error).toMatchObject({ code: 'mapping.invalid_document' });
    for (const payload of [
      {},
      { document: loginDocument(), definition_id: defA },
      { document: loginDocument(), version_id: v1.id },
    ]) {
      const res = await call(viewerA, 'POST', '/api/mappings/test-cases', payload);
      expect(res.statusCode).toBe(422);
      expect(typeof res.json().detail).toBe('string');
    }
    const defB = await defineMapping(t, orgB, 'custom', 'tests');
    expect((await call(adminA, 'POST', '/api/mappings/test-cases', { definition_id: defB })).statusCode).toBe(404);
  });
});

describe('GET /api/mappings/{definition_id}/discover-fields', () => {
  it("reports the fields of the organization's samples with types, frequencies and whether the live version reads them", async () => {
    const res = await call(viewerA, 'GET', `/api/mappings/${defA}/discover-fields`);
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json<{ samples: number; truncated: boolean; fields: Json[] }>();
    expect(body.samples).toBe(3); // intA and intA2, stream auth
    expect(body.truncated).toBe(false);
    const byPath = Object.fromEntries(body.fields.map((f) => [f.path, f]));
    expect(body.fields.map((f) => f.path)).toEqual([...body.fields.map((f) => f.path)].sort());
    // Only assigned paths count as read; `type` is tested by a rule's `when`, and kept under unmapped.
    expect(byPath['type']).toMatchObject({
      types: { string: 3 },
      count: 3,
      frequency: 1,
      mapped: false,
      example: 'login',
    });
    expect(byPath['host']).toMatchObject({ count: 2, frequency: 0.6667, mapped: true });
    expect(byPath['user.name']).toMatchObject({ mapped: true, types: { string: 3 } });
    expect(byPath['user.name']!.example).not.toBe('ana');
    expect(byPath['user.email']).toMatchObject({ count: 1, mapped: false });
    expect(String(byPath['user.email']!.example)).not.toContain('ana.silva');
    expect(byPath['extra.tags[]']).toMatchObject({ types: { number: 1, string: 1 }, count: 1, mapped: false });
    expect(byPath['session']).toMatchObject({ types: { null: 1 }, example: null });
    expect(byPath['secret_b']).toBeUndefined(); // org B's sample
  });

  it('narrows to one integration and checks it fits the definition', async () => {
    const one = (
      await call(viewerA, 'GET', `/api/mappings/${defA}/discover-fields?integration_id=${intA2}&limit=10`)
    ).json<{ samples: number }>();
    expect(one.samples).toBe(1);
    expect((await call(adminA, 'GET', `/api/mappings/${defA}/discover-fields?integration_id=${intB}`)).statusCode).toBe(
      404,
    );
    const okta = (
      await t.container.database.db
        .insertInto('integrations')
        .values({ organization_id: orgA, name: 'a-okta', platform: 'okta', config: '{}' })
        .returning('id')
        .executeTakeFirstOrThrow()
    ).id;
    const mismatch = await call(adminA, 'GET', `/api/mappings/${defA}/discover-fields?integration_id=${okta}`);
    expect(mismatch.statusCode).toBe(422);
    expect(mismatch.json().detail).toContain('platform "okta"');
  });

  it("reads every organization in scope for a built-in: a platform admin sees org B's fields, org A does not", async () => {
    const a = (await call(viewerA, 'GET', `/api/mappings/${builtin}/discover-fields`)).json<{
      samples: number;
      fields: Json[];
    }>();
    expect(a.samples).toBe(3);
    const all = (await call(root, 'GET', `/api/mappings/${builtin}/discover-fields`)).json<{
      samples: number;
      fields: Json[];
    }>();
    expect(all.samples).toBe(4);
    expect(all.fields.some((f) => f.path === 'secret_b')).toBe(true);
  });

  it('marks nothing mapped without a live version', async () => {
    const empty = await defineMapping(t, orgA, 'custom', 'other');
    const body = (await call(viewerA, 'GET', `/api/mappings/${empty}/discover-fields`)).json<{
      samples: number;
      fields: Json[];
    }>();
    expect(body.samples).toBe(1);
    expect(body.fields).toEqual([
      { path: 'type', types: { string: 1 }, count: 1, frequency: 1, mapped: false, example: 'noise' },
    ]);
  });
});
