import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/support/app.js';
import { createOrganization, createPrincipal, type Principal, injectAs } from '../../../test/support/identity.js';
import { GLOBAL_SCOPE } from '../../core/scope.js';
import { MAX_BULK_IDS } from '../../platform/http/schemas.js';

let t: TestApp;
let orgA: number;
let orgB: number;
let root: Principal; // platform admin (global scope)
let adminA: Principal;
let adminB: Principal;
let viewerA: Principal;
let saA: Principal; // admin service account of org A

const SECRET = 'vendor-api-key-7f3a9c';

beforeAll(async () => {
  // Many calls per token: the per-token limit (60/min) is tested elsewhere.
  t = await createTestApp({ env: { WEIR_TOKEN_RATE_LIMIT: '100000' } });
  t.container.integrations.platforms.register({
    name: 'test_vendor',
    display_name: 'Test vendor',
    kind: 'pull',
    description: 'A pull platform with secrets, registered by the test',
    config_schema: {
      type: 'object',
      properties: {
        base_url: { type: 'string', format: 'uri' },
        api_key: { type: 'string', minLength: 8, writeOnly: true },
        page_size: { type: 'integer', minimum: 1, maximum: 1000 },
      },
      required: ['base_url', 'api_key'],
      additionalProperties: false,
    },
  });
  orgA = await createOrganization(t, 'Org A');
  orgB = await createOrganization(t, 'Org B');
  root = await createPrincipal(t, { role: 'admin' });
  adminA = await createPrincipal(t, { role: 'admin', organizationId: orgA });
  adminB = await createPrincipal(t, { role: 'admin', organizationId: orgB });
  viewerA = await createPrincipal(t, { role: 'viewer', organizationId: orgA });
  saA = await createPrincipal(t, { role: 'admin', organizationId: orgA, kind: 'service_account' });
});
afterAll(async () => t?.close());

type Json = Record<string, unknown>;

const call = (who: Principal, method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: unknown) =>
  injectAs(t, who, method, url, payload);

let n = 0;
async function create(who: Principal, body: Json): Promise<Json> {
  const res = await call(who, 'POST', '/api/integrations/', {
    name: `integration-${++n}`,
    platform: 'custom',
    ...body,
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json<Json>();
}

describe('POST /api/integrations/', () => {
  it('creates a custom (push) integration with no configuration: 201 and its representation', async () => {
    const res = await call(adminA, 'POST', '/api/integrations/', {
      name: 'Firewall push',
      platform: 'custom',
      organization_id: orgA,
    });
    expect(res.statusCode).toBe(201);
    const body = res.json<Json>();
    expect(body).toMatchObject({
      name: 'Firewall push',
      platform: 'custom',
      organization_id: orgA,
      parent_id: null,
      is_active: true,
      config: {},
    });
    expect(typeof body.id).toBe('number');
    expect(body.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
    expect(body.updated_at).toMatch(/Z$/);
  });

  it('accepts is_active and config, and service accounts of the organization', async () => {
    const body = await create(saA, {
      organization_id: orgA,
      is_active: false,
      config: { description: 'from a script' },
    });
    expect(body).toMatchObject({ is_active: false, config: { description: 'from a script' } });
  });

  it('answers 404 for an organization outside the caller scope or that does not exist', async () => {
    const res = await call(adminA, 'POST', '/api/integrations/', {
      name: 'x',
      platform: 'custom',
      organization_id: orgB,
    });
    expect(res.statusCode).toBe(404);
    expect(res.json().detail).toBe('Organization not found');
    const missing = await call(root, 'POST', '/api/integrations/', {
      name: 'x',
      platform: 'custom',
      organization_id: 999_999,
    });
    expect(missing.statusCode).toBe(404);
  });

  it('refuses an unknown platform with 422 naming the known ones', async () => {
    const res = await call(adminA, 'POST', '/api/integrations/', {
      name: 'x',
      platform: 'nope',
      organization_id: orgA,
    });
    expect(res.statusCode).toBe(422);
    expect(res.json().error.code).toBe('integration.unknown_platform');
    expect(res.json().error.details.known).toContain('custom');
  });

  it('validates config against the platform schema (422 with every issue located)', async () => {
    const custom = await call(adminA, 'POST', '/api/integrations/', {
      name: 'x',
      platform: 'custom',
      organization_id: orgA,
      config: { api_url: 'x' },
    });
    expect(custom.statusCode).toBe(422);
    expect(custom.json().error.code).toBe('integration.invalid_config');
    expect(custom.json().detail).toMatch(/body\/config\/api_url/);
    const vendor = await call(adminA, 'POST', '/api/integrations/', {
      name: 'x',
      platform: 'test_vendor',
      organization_id: orgA,
      config: { base_url: 'not a url', page_size: 'ten' },
    });
    expect(vendor.statusCode).toBe(422);
    const locations = (vendor.json().error.details.errors as { location: string }[]).map((e) => e.location).sort();
    expect(locations).toEqual(['body/config/api_key', 'body/config/base_url', 'body/config/page_size']);
  });

  it('refuses malformed bodies with 422', async () => {
    for (const body of [
      { platform: 'custom', organization_id: orgA },
      { name: 'x', platform: 'custom', organization_id: orgA, extra: 1 },
      { name: 'x', platform: 'custom', organization_id: String(orgA) },
      { name: '   ', platform: 'custom', organization_id: orgA },
      { name: 'x', platform: 'custom', organization_id: orgA, config: [] },
    ]) {
      const res = await call(adminA, 'POST', '/api/integrations/', body);
      expect(res.statusCode, JSON.stringify(body)).toBe(422);
      expect(typeof res.json().detail).toBe('string');
    }
  });

  it('keeps names unique per organization, case-insensitive (409), but not across organizations', async () => {
    await create(adminA, { name: 'Mail Gateway', organization_id: orgA });
    const dup = await call(adminA, 'POST', '/api/integrations/', {
      name: 'mail gateway',
      platform: 'custom',
      organization_id: orgA,
    });
    expect(dup.statusCode).toBe(409);
    expect(dup.json().error.code).toBe('integration.name_taken');
    await create(adminB, { name: 'Mail Gateway', organization_id: orgB });
  });

  it('accepts a parent of the same organization only, one level deep', async () => {
    const parentA = await create(adminA, { organization_id: orgA });
    const parentB = await create(adminB, { organization_id: orgB });
    const child = await create(adminA, { organization_id: orgA, parent_id: parentA.id });
    expect(child.parent_id).toBe(parentA.id);
    for (const parent_id of [parentB.id, 999_999, child.id]) {
      const res = await call(root, 'POST', '/api/integrations/', {
        name: `p-${String(parent_id)}`,
        platform: 'custom',
        organization_id: orgA,
        parent_id,
      });
      expect(res.statusCode).toBe(422);
      expect(res.json().error.code).toBe('integration.invalid_parent');
    }
    // A foreign parent and a missing one read the same to an organization admin.
    const foreign = await call(adminA, 'POST', '/api/integrations/', {
      name: 'pf',
      platform: 'custom',
      organization_id: orgA,
      parent_id: parentB.id,
    });
    const missing = await call(adminA, 'POST', '/api/integrations/', {
      name: 'pm',
      platform: 'custom',
      organization_id: orgA,
      parent_id: 999_998,
    });
    expect(foreign.json().detail).toBe(missing.json().detail);
  });

  it('is refused to a viewer with 403 naming integration.write', async () => {
    const res = await call(viewerA, 'POST', '/api/integrations/', {
      name: 'x',
      platform: 'custom',
      organization_id: orgA,
    });
    expect(res.statusCode).toBe(403);
    expect(res.json().detail).toContain('integration.write');
  });
});

describe('secret config fields', () => {
  let id: number;
  const secretOf = async (integrationId: number) => {
    const row = await t.container.integrations.service.find(GLOBAL_SCOPE, integrationId);
    return (await t.container.integrations.service.collectTarget(row!)).config.api_key;
  };

  it('are accepted and never returned: they read as {"configured": true}', async () => {
    const res = await call(adminA, 'POST', '/api/integrations/', {
      name: 'Vendor',
      platform: 'test_vendor',
      organization_id: orgA,
      config: { base_url: 'https://vendor.example', api_key: SECRET },
    });
    expect(res.statusCode).toBe(201);
    expect(res.body).not.toContain(SECRET);
    expect(res.json().config).toEqual({ base_url: 'https://vendor.example', api_key: { configured: true } });
    id = res.json().id;
    const get = await call(adminA, 'GET', `/api/integrations/${id}`);
    expect(get.body).not.toContain(SECRET);
    expect(get.json().config.api_key).toEqual({ configured: true });
    const list = await call(adminA, 'GET', '/api/integrations/?limit=500');
    expect(list.body).not.toContain(SECRET);
  });

  it('keep the stored value when the placeholder is sent back, and change when a value is sent', async () => {
    const same = await call(adminA, 'PUT', `/api/integrations/${id}`, {
      config: { base_url: 'https://v2.example', api_key: { configured: true }, page_size: 50 },
    });
    expect(same.statusCode, same.body).toBe(200);
    expect(same.json().config).toEqual({
      base_url: 'https://v2.example',
      api_key: { configured: true },
      page_size: 50,
    });
    expect(await secretOf(id)).toBe(SECRET);
    const changed = await call(adminA, 'PUT', `/api/integrations/${id}`, {
      config: { base_url: 'https://v2.example', api_key: 'another-secret-1' },
    });
    expect(changed.statusCode).toBe(200);
    expect(await secretOf(id)).toBe('another-secret-1');
  });

  it('are encrypted at rest: the row holds a ciphertext bound to the integration, and the config a placeholder', async () => {
    const row = await t.container.database.db
      .selectFrom('integrations')
      .selectAll()
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    expect(JSON.stringify(row)).not.toContain('another-secret-1');
    expect(row.config.api_key).toEqual({ configured: true });
    expect(row.secrets).toMatch(/^[A-Za-z0-9+/=]{40,}$/);
    // The ciphertext copied onto another integration does not open there.
    const other = await call(adminA, 'POST', '/api/integrations/', {
      name: 'Vendor copy',
      platform: 'test_vendor',
      organization_id: orgA,
      config: { base_url: 'https://vendor.example', api_key: 'copy-target-key' },
    });
    await t.container.database.db
      .updateTable('integrations')
      .set({ secrets: row.secrets, secrets_key_id: row.secrets_key_id, config: JSON.stringify(row.config) })
      .where('id', '=', other.json().id)
      .execute();
    const copied = await t.container.integrations.service.find(GLOBAL_SCOPE, other.json().id);
    await expect(t.container.integrations.service.collectTarget(copied!)).rejects.toThrow(/does not decrypt/);
  });

  it('written in plain config before encryption are sealed at start', async () => {
    const legacy = await t.container.database.db
      .insertInto('integrations')
      .values({
        organization_id: orgA,
        name: 'legacy',
        platform: 'test_vendor',
        config: JSON.stringify({ base_url: 'https://vendor.example', api_key: 'legacy-secret-9' }),
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    const { sealIntegrationSecrets, createIntegrationSecrets } = await import('./secrets.js');
    const { createCredentialCipher } = await import('../../platform/crypto/credentials.js');
    const db = t.container.database.db;
    const { createIntegrationStore } = await import('./store.js');
    const store = createIntegrationStore(db);
    const secrets = createIntegrationSecrets(
      createCredentialCipher(t.container.keys.key('integration-secrets'), [], 'integration'),
    );
    const result = await sealIntegrationSecrets({
      rows: () => store.secretRows(['test_vendor'], secrets.currentKeyId),
      write: (row, next) => store.writeSealed(row, next),
      secrets,
      platformOf: (name) => t.container.integrations.platforms.get(name),
      logger: pino({ level: 'silent' }),
    });
    expect(result.sealed).toBeGreaterThanOrEqual(1);
    const row = await db.selectFrom('integrations').selectAll().where('id', '=', legacy.id).executeTakeFirstOrThrow();
    expect(JSON.stringify(row.config)).not.toContain('legacy-secret-9');
    expect(await secretOf(legacy.id)).toBe('legacy-secret-9');
  });

  it('refuse a placeholder with nothing stored behind it (422)', async () => {
    const res = await call(adminA, 'POST', '/api/integrations/', {
      name: 'Vendor 2',
      platform: 'test_vendor',
      organization_id: orgA,
      config: { base_url: 'https://vendor.example', api_key: { configured: true } },
    });
    expect(res.statusCode).toBe(422);
    expect(res.json().error.code).toBe('integration.invalid_config');
  });
});

describe('GET /api/integrations/ and /{id}', () => {
  it('lists the caller scope only, in the {total, items, limit, offset} envelope', async () => {
    const b = await create(adminB, { organization_id: orgB });
    const res = await call(adminA, 'GET', '/api/integrations/');
    expect(res.statusCode).toBe(200);
    const body = res.json<{ total: number; items: Json[]; limit: number; offset: number }>();
    expect(body).toMatchObject({ limit: 50, offset: 0 });
    expect(body.total).toBe(body.items.length);
    expect(body.items.every((i) => i.organization_id === orgA)).toBe(true);
    expect(body.items.some((i) => i.id === b.id)).toBe(false);
    expect(Object.keys(body.items[0] ?? {}).sort()).toEqual([
      'created_at',
      'id',
      'is_active',
      'name',
      'organization_id',
      'parent_id',
      'platform',
      'updated_at',
    ]);
    const all = await call(root, 'GET', '/api/integrations/?limit=500');
    expect(all.json().items.some((i: Json) => i.id === b.id)).toBe(true);
  });

  it('pages with limit and offset and filters by organization, platform, state and parent', async () => {
    const first = await call(root, 'GET', '/api/integrations/?limit=2&offset=0');
    const second = await call(root, 'GET', '/api/integrations/?limit=2&offset=2');
    expect(first.json().items).toHaveLength(2);
    expect(first.json().total).toBe(second.json().total);
    expect(second.json().items[0].id).toBeGreaterThan(first.json().items[1].id);
    const byOrg = await call(root, 'GET', `/api/integrations/?org_id=${orgB}&limit=500`);
    expect(byOrg.json().items.every((i: Json) => i.organization_id === orgB)).toBe(true);
    const foreign = await call(adminA, 'GET', `/api/integrations/?organization_id=${orgB}`);
    expect(foreign.json()).toMatchObject({ total: 0, items: [] });
    const vendor = await call(root, 'GET', '/api/integrations/?platform=test_vendor');
    expect(vendor.json().items.every((i: Json) => i.platform === 'test_vendor')).toBe(true);
    const inactive = await call(root, 'GET', '/api/integrations/?is_active=false&limit=500');
    expect(inactive.json().total).toBeGreaterThan(0);
    expect(inactive.json().items.every((i: Json) => i.is_active === false)).toBe(true);
    const parent = await create(adminA, { organization_id: orgA });
    const child = await create(adminA, { organization_id: orgA, parent_id: parent.id });
    const children = await call(adminA, 'GET', `/api/integrations/?parent_id=${String(parent.id)}`);
    expect(children.json().items.map((i: Json) => i.id)).toEqual([child.id]);
  });

  it('refuses unknown parameters and bad values with 422', async () => {
    expect((await call(adminA, 'GET', '/api/integrations/?org=1')).statusCode).toBe(422);
    expect((await call(adminA, 'GET', '/api/integrations/?limit=0')).statusCode).toBe(422);
    expect((await call(adminA, 'GET', '/api/integrations/?is_active=maybe')).statusCode).toBe(422);
  });

  it('is open to any authenticated caller, and 401 without a credential', async () => {
    expect((await call(viewerA, 'GET', '/api/integrations/')).statusCode).toBe(200);
    expect((await t.app.inject({ method: 'GET', url: '/api/integrations/' })).statusCode).toBe(401);
  });

  it("gets one integration of the scope; another organization's answers 404", async () => {
    const a = await create(adminA, { organization_id: orgA });
    const b = await create(adminB, { organization_id: orgB });
    const own = await call(viewerA, 'GET', `/api/integrations/${String(a.id)}`);
    expect(own.statusCode).toBe(200);
    expect(own.json()).toMatchObject({ id: a.id, config: {} });
    const foreign = await call(adminA, 'GET', `/api/integrations/${String(b.id)}`);
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json()).toMatchObject({ detail: 'Integration not found', error: { code: 'resource.not_found' } });
    expect((await call(adminA, 'GET', '/api/integrations/999999')).json().detail).toBe('Integration not found');
    expect((await call(adminA, 'GET', '/api/integrations/99999999999')).statusCode).toBe(422);
  });

  it('redirects the unslashed listing to the slashed path (307)', async () => {
    const res = await call(adminA, 'GET', '/api/integrations');
    expect(res.statusCode).toBe(307);
    expect(res.headers.location).toBe('/api/integrations/');
  });
});

describe('PUT /api/integrations/{id}', () => {
  it('changes only the fields given', async () => {
    const a = await create(adminA, { organization_id: orgA, config: { description: 'one' } });
    const res = await call(adminA, 'PUT', `/api/integrations/${String(a.id)}`, { name: 'Renamed', is_active: false });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      id: a.id,
      name: 'Renamed',
      is_active: false,
      config: { description: 'one' },
      platform: 'custom',
    });
    const config = await call(adminA, 'PUT', `/api/integrations/${String(a.id)}`, { config: {} });
    expect(config.json()).toMatchObject({ name: 'Renamed', config: {} });
  });

  it('refuses a name taken in the organization (409) and an invalid config (422)', async () => {
    const a = await create(adminA, { name: 'Taken name', organization_id: orgA });
    const b = await create(adminA, { organization_id: orgA });
    const dup = await call(adminA, 'PUT', `/api/integrations/${String(b.id)}`, { name: 'TAKEN NAME' });
    expect(dup.statusCode).toBe(409);
    const same = await call(adminA, 'PUT', `/api/integrations/${String(a.id)}`, { name: 'taken name' });
    expect(same.statusCode).toBe(200);
    const bad = await call(adminA, 'PUT', `/api/integrations/${String(b.id)}`, { config: { nope: true } });
    expect(bad.statusCode).toBe(422);
    expect((await call(adminA, 'PUT', `/api/integrations/${String(b.id)}`, { organization_id: orgB })).statusCode).toBe(
      422,
    );
  });

  it('attaches and detaches a parent under the same rules as creation', async () => {
    const parent = await create(adminA, { organization_id: orgA });
    const other = await create(adminA, { organization_id: orgA });
    const attached = await call(adminA, 'PUT', `/api/integrations/${String(other.id)}`, { parent_id: parent.id });
    expect(attached.json().parent_id).toBe(parent.id);
    const cycle = await call(adminA, 'PUT', `/api/integrations/${String(parent.id)}`, { parent_id: other.id });
    expect(cycle.statusCode).toBe(422);
    const self = await call(adminA, 'PUT', `/api/integrations/${String(parent.id)}`, { parent_id: parent.id });
    expect(self.statusCode).toBe(422);
    const hasChildren = await create(adminA, { organization_id: orgA });
    const loose = await create(adminA, { organization_id: orgA });
    const deeper = await call(adminA, 'PUT', `/api/integrations/${String(parent.id)}`, { parent_id: hasChildren.id });
    expect(deeper.json().error.code).toBe('integration.invalid_parent');
    expect(
      (await call(adminA, 'PUT', `/api/integrations/${String(loose.id)}`, { parent_id: hasChildren.id })).statusCode,
    ).toBe(200);
    const detached = await call(adminA, 'PUT', `/api/integrations/${String(other.id)}`, { parent_id: null });
    expect(detached.json().parent_id).toBeNull();
  });

  it("answers 404 for another organization's integration and 403 to a viewer", async () => {
    const b = await create(adminB, { organization_id: orgB });
    const res = await call(adminA, 'PUT', `/api/integrations/${String(b.id)}`, { name: 'hijacked' });
    expect(res.statusCode).toBe(404);
    expect((await call(adminB, 'GET', `/api/integrations/${String(b.id)}`)).json().name).not.toBe('hijacked');
    const viewer = await call(viewerA, 'PUT', `/api/integrations/${String(b.id)}`, { name: 'x' });
    expect(viewer.statusCode).toBe(403);
    expect(viewer.json().detail).toContain('integration.write');
  });
});

describe('DELETE /api/integrations/{id}', () => {
  // Each test deletes with its own admin: the limit is 5 per minute per user.
  const admin = () => createPrincipal(t, { role: 'admin', organizationId: orgA });

  it('removes an integration: 204, then 404', async () => {
    const who = await admin();
    const a = await create(who, { organization_id: orgA });
    const res = await call(who, 'DELETE', `/api/integrations/${String(a.id)}`);
    expect(res.statusCode).toBe(204);
    expect(res.body).toBe('');
    expect((await call(who, 'GET', `/api/integrations/${String(a.id)}`)).statusCode).toBe(404);
    expect((await call(who, 'DELETE', `/api/integrations/${String(a.id)}`)).statusCode).toBe(404);
  });

  it('refuses a parent with active children (409) unless cascade=true, which removes them too', async () => {
    const who = await admin();
    const parent = await create(who, { organization_id: orgA });
    const child = await create(who, { organization_id: orgA, parent_id: parent.id });
    const refused = await call(who, 'DELETE', `/api/integrations/${String(parent.id)}`);
    expect(refused.statusCode).toBe(409);
    expect(refused.json().error).toMatchObject({
      code: 'integration.has_active_children',
      details: { active_children: [child.id] },
    });
    expect((await call(who, 'GET', `/api/integrations/${String(parent.id)}`)).statusCode).toBe(200);
    expect((await call(who, 'DELETE', `/api/integrations/${String(parent.id)}?cascade=false`)).statusCode).toBe(409);
    const cascaded = await call(who, 'DELETE', `/api/integrations/${String(parent.id)}?cascade=true`);
    expect(cascaded.statusCode).toBe(204);
    expect((await call(who, 'GET', `/api/integrations/${String(child.id)}`)).statusCode).toBe(404);
  });

  it('removes a parent whose children are all inactive, children included', async () => {
    const who = await admin();
    const parent = await create(who, { organization_id: orgA });
    const child = await create(who, { organization_id: orgA, parent_id: parent.id, is_active: false });
    expect((await call(who, 'DELETE', `/api/integrations/${String(parent.id)}`)).statusCode).toBe(204);
    expect((await call(who, 'GET', `/api/integrations/${String(child.id)}`)).statusCode).toBe(404);
  });

  it("answers 404 for another organization's integration, which stays", async () => {
    const who = await admin();
    const b = await create(adminB, { organization_id: orgB });
    expect((await call(who, 'DELETE', `/api/integrations/${String(b.id)}?cascade=true`)).statusCode).toBe(404);
    expect((await call(adminB, 'GET', `/api/integrations/${String(b.id)}`)).statusCode).toBe(200);
  });

  it('is refused to a viewer with 403 naming integration.write', async () => {
    const a = await create(adminA, { organization_id: orgA });
    const res = await call(viewerA, 'DELETE', `/api/integrations/${String(a.id)}`);
    expect(res.statusCode).toBe(403);
    expect(res.json().detail).toContain('integration.write');
  });

  it('allows 5 deletions per minute per user: the 6th answers 429 with Retry-After', async () => {
    const who = await admin();
    const ids: number[] = [];
    for (let i = 0; i < 6; i++) ids.push((await create(adminA, { organization_id: orgA })).id as number);
    for (const id of ids.slice(0, 5))
      expect((await call(who, 'DELETE', `/api/integrations/${id}`)).statusCode).toBe(204);
    const limited = await call(who, 'DELETE', `/api/integrations/${String(ids[5])}`);
    expect(limited.statusCode).toBe(429);
    expect(typeof limited.json().detail).toBe('string');
    expect(limited.json().error.code).toBe('rate_limit.exceeded');
    const retry = Number(limited.headers['retry-after']);
    expect(Number.isInteger(retry) && retry >= 1 && retry <= 60).toBe(true);
    expect(limited.headers).toMatchObject({
      'ratelimit-limit': '5',
      'ratelimit-remaining': '0',
      'ratelimit-policy': '5;w=60',
    });
    expect((await call(adminA, 'GET', `/api/integrations/${String(ids[5])}`)).statusCode).toBe(200);
    // Per user: another admin still may.
    expect((await call(await admin(), 'DELETE', `/api/integrations/${String(ids[5])}`)).statusCode).toBe(204);
  });
});

describe('POST /api/integrations/bulk/deactivate', () => {
  it('deactivates those in scope and reports the rest as not found, never 403', async () => {
    const active = await create(adminA, { organization_id: orgA });
    const inactive = await create(adminA, { organization_id: orgA, is_active: false });
    const foreign = await create(adminB, { organization_id: orgB });
    const res = await call(adminA, 'POST', '/api/integrations/bulk/deactivate', {
      ids: [active.id, inactive.id, foreign.id, 999_999, active.id],
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      requested: 4,
      deactivated: 1,
      unchanged: 1,
      not_found: 2,
      errors: [
        { id: foreign.id, code: 'resource.not_found', detail: 'Integration not found' },
        { id: 999_999, code: 'resource.not_found', detail: 'Integration not found' },
      ],
    });
    expect((await call(adminA, 'GET', `/api/integrations/${String(active.id)}`)).json().is_active).toBe(false);
    expect((await call(adminB, 'GET', `/api/integrations/${String(foreign.id)}`)).json().is_active).toBe(true);
  });

  it('takes 1 to 500 integer ids (422 otherwise) and is refused to a viewer (403)', async () => {
    expect((await call(adminA, 'POST', '/api/integrations/bulk/deactivate', { ids: [] })).statusCode).toBe(422);
    const many = Array.from({ length: MAX_BULK_IDS + 1 }, (_, i) => i + 1);
    expect((await call(adminA, 'POST', '/api/integrations/bulk/deactivate', { ids: many })).statusCode).toBe(422);
    expect((await call(adminA, 'POST', '/api/integrations/bulk/deactivate', { ids: ['1'] })).statusCode).toBe(422);
    const ok = await call(adminA, 'POST', '/api/integrations/bulk/deactivate', {
      ids: many.slice(0, 500).map((i) => i + 1_000_000),
    });
    expect(ok.json()).toMatchObject({ requested: 500, not_found: 500 });
    const viewer = await call(viewerA, 'POST', '/api/integrations/bulk/deactivate', { ids: [1] });
    expect(viewer.statusCode).toBe(403);
    expect(viewer.json().detail).toContain('integration.write');
  });
});

describe('GET /api/integrations/platforms', () => {
  it('lists the registry with kind, config schema and secret fields, to any authenticated caller', async () => {
    const res = await call(viewerA, 'GET', '/api/integrations/platforms');
    expect(res.statusCode).toBe(200);
    const platforms = res.json<Json[]>();
    const custom = platforms.find((p) => p.name === 'custom');
    expect(custom).toMatchObject({ kind: 'push', secret_fields: [], config_schema: { type: 'object' } });
    expect(typeof custom?.display_name).toBe('string');
    const vendor = platforms.find((p) => p.name === 'test_vendor');
    expect(vendor).toMatchObject({ kind: 'pull', secret_fields: ['api_key'] });
    expect((vendor?.config_schema as { properties: Record<string, Json> }).properties.api_key?.writeOnly).toBe(true);
  });
});
