import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/support/app.js';
import { createOrganization, createPrincipal, type Principal, injectAs } from '../../../test/support/identity.js';
import { defineMapping, loginDocument } from '../../../test/support/mappings.js';
import { BUNDLE_SCHEMA_ID } from './schema.js';

type Json = Record<string, unknown>;
let t: TestApp;
let orgA: number;
let orgB: number;
let orgC: number;
let root: Principal;
let adminA: Principal;
let adminB: Principal;
const SECRET = 'Bearer-SECRET-zz-4242';

const call = (who: Principal, method: 'GET' | 'POST', url: string, payload?: unknown) =>
  injectAs(t, who, method, url, payload);
async function ok(who: Principal, method: 'GET' | 'POST', url: string, payload?: unknown, status = 200): Promise<Json> {
  const res = await call(who, method, url, payload);
  expect(res.statusCode, res.body).toBe(status);
  return res.json<Json>();
}
const exportOf = (who: Principal, org?: number) =>
  ok(who, 'GET', `/api/collectors/config/export${org ? `?organization_id=${org}` : ''}`);
const importTo = (who: Principal, body: Json, org?: number) =>
  call(who, 'POST', `/api/collectors/config/import${org ? `?organization_id=${org}` : ''}`, body);
const count = async (
  table: 'routes' | 'destinations' | 'enrichment_tables' | 'enrichment_policies' | 'integrations',
  org: number,
) => (await t.container.database.db.selectFrom(table).select('id').where('organization_id', '=', org).execute()).length;

beforeAll(async () => {
  t = await createTestApp({ env: { WEIR_TOKEN_RATE_LIMIT: '1000000' } });
  orgA = await createOrganization(t, 'Org A');
  orgB = await createOrganization(t, 'Org B');
  orgC = await createOrganization(t, 'Org C');
  root = await createPrincipal(t, { role: 'admin' });
  adminA = await createPrincipal(t, { role: 'admin', organizationId: orgA });
  adminB = await createPrincipal(t, { role: 'admin', organizationId: orgB });
  // Org A's configuration, made through the API.
  await ok(adminA, 'POST', '/api/integrations/', { name: 'app', platform: 'custom', organization_id: orgA }, 201);
  const dest = await ok(
    adminA,
    'POST',
    '/api/collectors/destinations',
    { name: 'siem', type: 'http', config: { url: 'http://127.0.0.1:9/in' }, credential: { bearer_token: SECRET } },
    201,
  );
  await ok(
    adminA,
    'POST',
    '/api/collectors/routes',
    { name: 'logins', condition: { field: 'class_uid', op: 'eq', value: 3002 }, destination_ids: [dest.id] },
    201,
  );
  const def = await defineMapping(t, orgA, 'custom', 'auth');
  await ok(adminA, 'POST', `/api/mappings/${def}/versions`, { document: loginDocument() }, 201);
  const table = await ok(
    adminA,
    'POST',
    '/api/collectors/enrichment/tables',
    { name: 'assets', key_column: 'host', match: 'exact', format: 'json', rows: [{ host: 'db1', owner: 'ops' }] },
    201,
  );
  await ok(
    adminA,
    'POST',
    '/api/collectors/enrichment/policies',
    {
      name: 'owner',
      condition: { field: 'class_uid', op: 'eq', value: 3002 },
      key: 'dst_endpoint.hostname',
      lookup: { table_id: table.id },
      output: { fields: { 'dst_endpoint.owner.name': 'owner' } },
    },
    201,
  );
});
afterAll(async () => t?.close());

describe('configuration bundle', () => {
  it('exports by name with secrets as markers, never values, and audits the read', async () => {
    const doc = await exportOf(adminA);
    expect(doc).toMatchObject({ format: 'weir.config-bundle', version: 1, organization: { name: 'Org A' } });
    expect(JSON.stringify(doc)).not.toContain(SECRET);
    const dest = (doc.destinations as Json[])[0]!;
    expect(dest.credential).toEqual({ bearer_token: { $secret: 'destination:siem:bearer_token' } });
    expect((doc.routes as Json[])[0]).toMatchObject({ name: 'logins', destinations: ['siem'] });
    expect((doc.mappings as Json[])[0]).toMatchObject({ platform: 'custom', stream: 'auth', version: 1 });
    expect((doc.enrichment_tables as Json[])[0]).toMatchObject({
      name: 'assets',
      rows: [{ host: 'db1', owner: 'ops' }],
    });
    const audit = await t.container.database.db
      .selectFrom('audit_log')
      .selectAll()
      .where('operation_id', '=', 'config_bundle.export')
      .execute();
    expect(audit.length).toBeGreaterThan(0);
  });

  it('another organization is 404; a platform caller must name one', async () => {
    expect((await call(adminB, 'GET', `/api/collectors/config/export?organization_id=${orgA}`)).statusCode).toBe(404);
    expect((await call(root, 'GET', '/api/collectors/config/export')).statusCode).toBe(422);
  });

  it('dry run into an empty organization: everything is create, a missing secret a conflict, nothing written', async () => {
    const doc = await exportOf(adminA);
    const res = await importTo(adminB, { document: doc, dry_run: true });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json<Json>();
    expect(body).toMatchObject({ dry_run: true, applied: false });
    const siem = (body.items as Json[]).find((i) => i.kind === 'destination')!;
    expect(siem).toMatchObject({ action: 'conflict' });
    expect(String(siem.reason)).toContain('destination:siem:bearer_token');
    expect(await count('destinations', orgB)).toBe(0);
  });

  it('an apply with a conflict is 409 with the diff and applies nothing', async () => {
    const doc = await exportOf(adminA);
    const res = await importTo(adminB, { document: doc });
    expect(res.statusCode, res.body).toBe(409);
    const body = res.json<{ error: { code: string; details: Json } }>();
    expect(body.error.code).toBe('config_bundle.conflict');
    expect(body.error.details.summary).toMatchObject({ conflict: 1 });
    expect(await count('integrations', orgB)).toBe(0);
  });

  it('an item refused half-way (its own validator) rolls the whole import back', async () => {
    const doc = await exportOf(adminA);
    // A route condition its validator refuses, after destinations, integrations and mappings were written.
    (doc.routes as Json[])[0]!.condition = { field: 'class_uid', op: 'no_such_op', value: 1 };
    const res = await importTo(adminB, { document: doc, secrets: { 'destination:siem:bearer_token': 'x-token' } });
    expect(res.statusCode, res.body).toBe(422);
    expect(res.json<{ detail: string }>().detail).toContain('route "logins"');
    for (const table of ['integrations', 'destinations', 'routes', 'enrichment_tables'] as const)
      expect(await count(table, orgB)).toBe(0);
    const defs = await t.container.database.db
      .selectFrom('mapping_definitions')
      .select('id')
      .where('organization_id', '=', orgB)
      .execute();
    expect(defs).toHaveLength(0);
  });

  it('round trip: export, import into an empty organization, export again gives the same configuration', async () => {
    const doc = await exportOf(adminA);
    const res = await importTo(adminB, { document: doc, secrets: { 'destination:siem:bearer_token': 'other-token' } });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json<Json>();
    expect(body).toMatchObject({ applied: true, summary: { conflict: 0, update: 0 } });
    for (const item of (body.items as Json[]).filter((i) => i.kind !== 'collector_settings'))
      expect(item.id).toBeDefined();
    const again = await exportOf(adminB);
    const strip = (d: Json) => ({ ...d, exported_at: null, organization: null });
    expect(strip(again)).toEqual(strip(doc));
    // A second import is all unchanged.
    const second = (await importTo(adminB, { document: doc, dry_run: true })).json<Json>();
    expect(second.summary).toMatchObject({ create: 0, update: 0, conflict: 0 });
    const audit = await t.container.database.db
      .selectFrom('audit_log')
      .selectAll()
      .where('operation_id', '=', 'config_bundle.import')
      .execute();
    expect(JSON.stringify(audit)).not.toContain('other-token');
  });

  it('a change is an update with a new version; a type clash a conflict; an unknown destination a conflict', async () => {
    const doc = await exportOf(adminA);
    (doc.routes as Json[])[0]!.description = 'edited';
    const res = await importTo(adminB, { document: doc });
    expect(res.statusCode, res.body).toBe(200);
    const route = (res.json<Json>().items as Json[]).find((i) => i.kind === 'route')!;
    expect(route).toMatchObject({ action: 'update', changes: ['description'] });
    const row = await t.container.database.db
      .selectFrom('routes')
      .select(['version', 'description'])
      .where('organization_id', '=', orgB)
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ version: 2, description: 'edited' });

    (doc.destinations as Json[])[0]!.type = 'file';
    (doc.routes as Json[])[0]!.destinations = ['nowhere'];
    const dry = (await importTo(adminB, { document: doc, dry_run: true })).json<Json>();
    const actions = Object.fromEntries(
      (dry.items as Json[]).map((i) => [`${String(i.kind)}:${String(i.name)}`, i.action]),
    );
    expect(actions['destination:siem']).toBe('conflict');
    expect(actions['route:logins']).toBe('conflict');
  });

  it('refuses a newer format version, a malformed document and a deep one with 422', async () => {
    const doc = await exportOf(adminA);
    const newer = await importTo(adminA, { document: { ...doc, version: 2 } });
    expect(newer.statusCode).toBe(422);
    expect(newer.json<{ detail: string }>().detail).toContain('newer');
    const bad = await importTo(adminA, { document: { ...doc, routes: [{ name: 1 }] } });
    expect(bad.statusCode).toBe(422);
    expect(JSON.stringify(bad.json())).toContain('body/document/routes/0');
    let deep: Json = {};
    for (let i = 0; i < 40; i++) deep = { a: deep };
    // Too deep for the JSON parser (400 request.json_too_deep) or for the bundle (422): refused, never a 5xx.
    expect([400, 422]).toContain(
      (await importTo(adminA, { document: { ...doc, collector_settings: deep } })).statusCode,
    );
    expect((await importTo(adminA, { document: { format: 'other' } })).statusCode).toBe(422);
  });

  it('collector settings are changed only with platform scope', async () => {
    const doc = await exportOf(adminA);
    const settings = { ...(doc.collector_settings as Json), dedup_hours: 48 };
    const res = await importTo(adminA, { document: { ...doc, collector_settings: settings }, dry_run: true });
    expect((res.json<Json>().items as Json[]).find((i) => i.kind === 'collector_settings')).toMatchObject({
      action: 'conflict',
    });
    const applied = await importTo(root, { document: { ...doc, collector_settings: settings } }, orgC);
    expect(applied.statusCode, applied.body).toBe(409); // siem's secret is needed in org C
    const withSecret = await importTo(
      root,
      { document: { ...doc, collector_settings: settings }, secrets: { 'destination:siem:bearer_token': 't' } },
      orgC,
    );
    expect(withSecret.statusCode, withSecret.body).toBe(200);
    expect(((await exportOf(root, orgC)).collector_settings as Json).dedup_hours).toBe(48);
  });

  it('mapping definitions travel with their versions: created in order with the live one live; an existing one only gets a new version', async () => {
    const orgD = await createOrganization(t, 'Org D');
    const orgE = await createOrganization(t, 'Org E');
    const adminD = await createPrincipal(t, { role: 'admin', organizationId: orgD });
    const adminE = await createPrincipal(t, { role: 'admin', organizationId: orgE });
    const def = await defineMapping(t, orgD, 'custom', 'vpn');
    const docs = [
      loginDocument(),
      loginDocument([{ target: 'status_id', value: 1 }]),
      loginDocument([{ target: 'status_id', value: 2 }]),
    ];
    for (const [i, document] of docs.entries())
      await ok(adminD, 'POST', `/api/mappings/${def}/versions`, { document, comment: `v${i + 1}` }, 201);
    await ok(adminD, 'POST', `/api/mappings/${def}/rollback`, { version: 2 });

    const doc = await exportOf(adminD);
    const mapping = (doc.mappings as Json[])[0]!;
    expect(mapping).toMatchObject({ stream: 'vpn', version: 2, document: docs[1] });
    expect(mapping.versions).toEqual(docs.map((document, i) => ({ version: i + 1, comment: `v${i + 1}`, document })));

    const res = await importTo(adminE, { document: doc });
    expect(res.statusCode, res.body).toBe(200);
    const id = res.json<{ items: Json[] }>().items.find((i) => i.kind === 'mapping')!.id as string;
    const versions = (await ok(adminE, 'GET', `/api/mappings/${id}/versions?limit=50`)) as { items: Json[] };
    expect(versions.items.map((v) => [v.version, v.comment, v.is_live])).toEqual([
      [3, 'v3', false],
      [2, 'v2', true],
      [1, 'v1', false],
    ]);
    for (const v of versions.items) {
      const full = await ok(adminE, 'GET', `/api/mappings/${id}/versions/${String(v.id)}`);
      expect(full.document).toEqual(docs[Number(v.version) - 1]);
    }
    const again = await exportOf(adminE);
    expect(again.mappings).toEqual(doc.mappings);

    // Into the existing definition: unchanged history is unchanged; another live document is one new version.
    expect((await importTo(adminE, { document: doc, dry_run: true })).json<Json>().summary).toMatchObject({
      create: 0,
      update: 0,
    });
    const edited = structuredClone(doc);
    const m = (edited.mappings as Json[])[0]!;
    m.document = docs[2];
    m.version = 3;
    const applied = await importTo(adminE, { document: edited });
    expect(applied.statusCode, applied.body).toBe(200);
    expect(applied.json<{ items: Json[] }>().items.find((i) => i.kind === 'mapping')).toMatchObject({
      action: 'update',
      changes: ['document'],
    });
    const after = (await ok(adminE, 'GET', `/api/mappings/${id}/versions?limit=50`)) as { items: Json[] };
    expect(after.items.map((v) => [v.version, v.is_live])).toEqual([
      [4, true],
      [3, false],
      [2, false],
      [1, false],
    ]);

    // A live version that is not among the versions, or whose document differs, is refused.
    const wrong = structuredClone(doc);
    (wrong.mappings as Json[])[0]!.version = 7;
    const refused = await importTo(adminE, { document: wrong, dry_run: true });
    expect(refused.statusCode).toBe(422);
    expect(refused.json<{ detail: string }>().detail).toContain('mappings/0/version');
  });

  it("enrichment sources: the organization's own by name, the credential's value a marker, a small database carried and a large one marked; policies remapped", async () => {
    const SRC_SECRET = 'sk-src-Hq3Lw8Rt5Yp1';
    const heard: string[] = [];
    const api = createServer((req, res) => {
      heard.push(String(req.headers['x-api-key']));
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"verdict":"benign"}');
    });
    await new Promise<void>((resolve) => api.listen(0, '127.0.0.1', resolve));
    const apiUrl = `http://127.0.0.1:${(api.address() as AddressInfo).port}`;
    try {
      const orgG = await createOrganization(t, 'Org G');
      const orgH = await createOrganization(t, 'Org H');
      const orgI = await createOrganization(t, 'Org I');
      const adminG = await createPrincipal(t, { role: 'admin', organizationId: orgG });
      const adminH = await createPrincipal(t, { role: 'admin', organizationId: orgH });
      const adminI = await createPrincipal(t, { role: 'admin', organizationId: orgI });
      const S = '/api/collectors/enrichment/sources';
      const dir = createRequire(import.meta.url)
        .resolve('@ip-location-db/geo-whois-asn-country-mmdb/package.json')
        .replace(/package\.json$/, '');
      const small = readFileSync(`${dir}geo-whois-asn-country-ipv4.mmdb`).toString('base64');
      const intel = await ok(
        adminG,
        'POST',
        S,
        {
          name: 'intel',
          kind: 'http',
          config: { url_template: `${apiUrl}/{key}` },
          credential: { header: 'X-Api-Key', value: SRC_SECRET },
        },
        201,
      );
      const feed = await ok(
        adminG,
        'POST',
        S,
        { name: 'bad-hosts', kind: 'feed', config: { url: `${apiUrl}/feed`, format: 'lines', interval_minutes: 60 } },
        201,
      );
      const geo = await ok(adminG, 'POST', S, { name: 'small-geo', kind: 'mmdb', mmdb_base64: small }, 201);
      const P = '/api/collectors/enrichment/policies';
      await ok(
        adminG,
        'POST',
        P,
        {
          name: 'intel-check',
          order: 1,
          key: 'src_endpoint.ip',
          lookup: { source_id: intel.id },
          output: { enrichment: { name: 'intel', type: 'reputation' } },
        },
        201,
      );
      await ok(
        adminG,
        'POST',
        P,
        {
          name: 'blocked',
          order: 2,
          key: 'src_endpoint.ip',
          lookup: { source_id: feed.id },
          output: { enrichment: { name: 'blocklist', type: 'indicator' } },
        },
        201,
      );
      await ok(
        adminG,
        'POST',
        P,
        {
          name: 'geo',
          order: 3,
          key: 'src_endpoint.ip',
          lookup: { source_id: geo.id },
          output: { fields: { 'src_endpoint.location.country': 'country_code' } },
        },
        201,
      );
      await ok(
        adminG,
        'POST',
        P,
        {
          name: 'builtin',
          order: 4,
          key: 'src_endpoint.ip',
          lookup: { source_id: 'builtin-geoip' },
          output: { fields: { 'src_endpoint.location.region': 'country_code' } },
        },
        201,
      );

      const doc = await exportOf(adminG);
      expect(JSON.stringify(doc)).not.toContain(SRC_SECRET);
      const sources = doc.enrichment_sources as Json[];
      expect(sources.map((x) => x.name).sort()).toEqual(['bad-hosts', 'intel', 'small-geo']); // not the built-in GeoIP
      expect(sources.find((x) => x.name === 'intel')).toMatchObject({
        kind: 'http',
        shared: false,
        credential: { header: 'X-Api-Key', value: { $secret: 'enrichment_source:intel:credential' } },
      });
      expect(sources.find((x) => x.name === 'bad-hosts')).toMatchObject({
        kind: 'feed',
        credential: null,
        table: 'bad-hosts (feed)',
      });
      expect(sources.find((x) => x.name === 'small-geo')!.mmdb_base64).toBe(small);
      expect((doc.enrichment_tables as Json[]).map((x) => x.name)).not.toContain('bad-hosts (feed)'); // the feed fills it
      expect((doc.enrichment_policies as Json[]).map((p) => p.lookup)).toEqual(
        expect.arrayContaining([
          { source: 'intel' },
          { source: 'bad-hosts' },
          { source: 'small-geo' },
          { source: 'GeoIP (built in)' },
        ]),
      );

      // Into an empty organization: the credential's value is needed; then everything is created, policies on the new sources.
      const dry = (await importTo(adminH, { document: doc, dry_run: true })).json<{ items: Json[] }>();
      expect(dry.items.find((i) => i.kind === 'enrichment_source' && i.name === 'intel')).toMatchObject({
        action: 'conflict',
        reason: 'secret needed: enrichment_source:intel:credential',
      });
      const applied = await importTo(adminH, {
        document: doc,
        secrets: { 'enrichment_source:intel:credential': `${SRC_SECRET}-H` },
      });
      expect(applied.statusCode, applied.body).toBe(200);
      const strip = (d: Json) => ({ ...d, exported_at: null, organization: null });
      expect(strip(await exportOf(adminH))).toEqual(strip(doc));
      const hSources = (await ok(adminH, 'GET', S)) as unknown as Json[];
      const hIntel = hSources.find((x) => x.name === 'intel' && x.organization_id === orgH)!;
      const hPolicies = (await ok(adminH, 'GET', P)) as unknown as Json[];
      expect(hPolicies.find((p) => p.name === 'intel-check')!.lookup).toEqual({ source_id: hIntel.id });
      expect(hSources.find((x) => x.name === 'bad-hosts' && x.organization_id === orgH)!.table_id).toEqual(
        expect.any(String),
      );
      // H's source calls with H's secret.
      expect((await ok(adminH, 'POST', `${S}/${String(hIntel.id)}/test`, { key: '8.8.8.8' })).ok).toBe(true);
      expect(heard.at(-1)).toBe(`${SRC_SECRET}-H`);
      // Again: unchanged; a changed header without its value is a conflict.
      expect((await importTo(adminH, { document: doc, dry_run: true })).json<Json>().summary).toMatchObject({
        create: 0,
        update: 0,
        conflict: 0,
      });
      const header = structuredClone(doc);
      ((header.enrichment_sources as Json[]).find((x) => x.name === 'intel')!.credential as Json).header =
        'X-Other-Key';
      const h = (await importTo(adminH, { document: header, dry_run: true })).json<{ items: Json[] }>();
      expect(h.items.find((i) => i.kind === 'enrichment_source' && i.name === 'intel')).toMatchObject({
        action: 'conflict',
        changes: ['credential'],
      });

      // Sharing needs Enterprise where it is imported: refused, naming the source, nothing written.
      const shared = structuredClone(doc);
      (shared.enrichment_sources as Json[]).find((x) => x.name === 'intel')!.shared = true;
      const refused = await importTo(adminI, {
        document: shared,
        secrets: { 'enrichment_source:intel:credential': 'x-value' },
      });
      expect(refused.statusCode).toBe(403);
      expect(refused.json<{ detail: string; error: { code: string } }>()).toMatchObject({
        error: { code: 'enrichment.source_sharing_requires_enterprise' },
      });
      expect(refused.json<{ detail: string }>().detail).toContain('enrichment_source "intel"');
      expect(
        await t.container.database.db
          .selectFrom('enrichment_sources')
          .select('id')
          .where('organization_id', '=', orgI)
          .execute(),
      ).toHaveLength(0);

      // A database too large to carry is marked (null): a new source needs its upload first.
      const large = readFileSync(`${dir}geo-whois-asn-country.mmdb`).toString('base64');
      await ok(adminG, 'POST', S, { name: 'big-geo', kind: 'mmdb', mmdb_base64: large }, 201);
      const withLarge = await exportOf(adminG);
      expect((withLarge.enrichment_sources as Json[]).find((x) => x.name === 'big-geo')).toMatchObject({
        kind: 'mmdb',
        mmdb_base64: null,
      });
      const needs = (await importTo(adminH, { document: withLarge, dry_run: true })).json<{ items: Json[] }>();
      expect(needs.items.find((i) => i.name === 'big-geo')).toMatchObject({
        action: 'conflict',
        reason: expect.stringContaining('upload'),
      });
      // Once uploaded there, the import keeps the stored database.
      await ok(adminH, 'POST', S, { name: 'big-geo', kind: 'mmdb', mmdb_base64: large }, 201);
      expect(
        (await importTo(adminH, { document: withLarge, dry_run: true }))
          .json<{ items: Json[] }>()
          .items.find((i) => i.name === 'big-geo'),
      ).toMatchObject({ action: 'unchanged' });
    } finally {
      api.closeAllConnections();
      await new Promise((resolve) => api.close(resolve));
    }
  });

  it('the document schema is a named component of the API document and equals docs/config-bundle.schema.json', async () => {
    const api = (await t.app.inject({ method: 'GET', url: '/api/openapi.json' })).json<{
      components: { schemas: Record<string, Json> };
    }>();
    const served = api.components.schemas[BUNDLE_SCHEMA_ID];
    expect(served).toBeDefined();
    const file = JSON.parse(
      readFileSync(new URL('../../../docs/config-bundle.schema.json', import.meta.url), 'utf8'),
    ) as Json;
    expect(file).toEqual(served);
  });
});
