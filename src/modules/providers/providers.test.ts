import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/support/app.js';
import { createOrganization, createPrincipal, type Principal } from '../../../test/support/identity.js';
import {
  FAKE_API_KEY,
  fakeProviderConnector,
  startFakeProvider,
  type FakeProvider,
} from '../../../test/support/vendors/fake-provider.js';
import { registerConnector } from '../../connectors/index.js';
import { filterableFields } from './service.js';

let t: TestApp;
let sim: FakeProvider;
let viewer: Principal;

type Json = Record<string, unknown>;

beforeAll(async () => {
  sim = await startFakeProvider();
  registerConnector(fakeProviderConnector());
  t = await createTestApp({ env: { WEIR_TOKEN_RATE_LIMIT: '100000' } });
  viewer = await createPrincipal(t, { role: 'viewer', organizationId: await createOrganization(t, 'Org A') });
});
afterAll(async () => {
  await t?.close();
  await sim?.close();
});

const get = (url: string) => t.app.inject({ method: 'GET', url, headers: viewer.headers });
const test = (platform: string, payload: unknown) =>
  t.app.inject({
    method: 'POST',
    url: `/api/providers/${platform}/test-connection`,
    headers: viewer.headers,
    payload: payload as Json,
  });

describe('GET /api/providers/platforms', () => {
  it('lists the platforms with a connector: auth, streams, config schema, tenant discovery', async () => {
    const res = await get('/api/providers/platforms');
    expect(res.statusCode, res.body).toBe(200);
    const fake = res.json<Json[]>().find((p) => p.platform === 'fake_provider');
    expect(fake).toMatchObject({
      display_name: 'Fake provider',
      auth: 'api_token',
      tenant_discovery: true,
      secret_fields: ['api_key'],
      streams: [
        { name: 'events', cursor_kind: 'date' },
        { name: 'alerts', cursor_kind: 'opaque' },
      ],
    });
    expect((fake!.config_schema as { properties: Json }).properties.api_key).toMatchObject({ writeOnly: true });
    expect(res.json<Json[]>().some((p) => p.platform === 'custom')).toBe(false);
  });
});

describe('GET /api/providers/query-capabilities', () => {
  it('describes each stream: cursor, backfill look-back (min of 90 days and retention), page size, rate limits', async () => {
    const res = await get('/api/providers/query-capabilities');
    expect(res.statusCode, res.body).toBe(200);
    const fake = res.json<Json[]>().find((p) => p.platform === 'fake_provider')!;
    expect(fake.rate_limit).toMatchObject({
      max_wait_in_call_seconds: 60,
      headers: expect.arrayContaining(['Retry-After']),
    });
    expect(fake.streams).toEqual([
      expect.objectContaining({
        stream: 'events',
        cursor_kind: 'date',
        page_size: 100,
        retention_days: 30,
        backfill: { supported: true, max_lookback_days: 30, chunk_seconds: 21_600 },
        filterable_fields: [],
      }),
      expect.objectContaining({
        stream: 'alerts',
        cursor_kind: 'opaque',
        retention_days: 365,
        backfill: expect.objectContaining({ max_lookback_days: 90 }),
      }),
    ]);
  });

  it('says per stream what a live query pushes down to the vendor (Okta: eventType for metadata.event_code)', async () => {
    const res = await get('/api/providers/query-capabilities');
    type Live = { platform: string; streams: { live_query: Json & { fields: unknown[] } }[] };
    const okta = res.json<Live[]>().find((p) => p.platform === 'okta')!;
    expect(okta.streams[0]!.live_query).toMatchObject({
      supported: true,
      or: true,
      parameter: expect.stringContaining('filter'),
    });
    expect(okta.streams[0]!.live_query.fields).toContainEqual({
      field: 'metadata.event_code',
      vendor_field: 'eventType',
      ops: ['eq', 'prefix', 'contains'],
    });
    const fake = res.json<Live[]>().find((p) => p.platform === 'fake_provider')!;
    expect(fake.streams[0]!.live_query).toEqual({ supported: false, parameter: null, or: false, fields: [] });
  });

  it('derives filterable fields from the built-in mapping of the stream', () => {
    const fields = filterableFields('okta', 'system_log');
    expect(fields).toEqual(
      expect.arrayContaining(['eventType', 'actor.alternateId', 'client.ipAddress', 'outcome.result']),
    );
    expect(filterableFields('nope', 'nothing')).toEqual([]);
  });
});

describe('POST /api/providers/{platform}/test-connection', () => {
  it('tests a config with a real vendor call and stores nothing', async () => {
    const integrationsBefore = await t.container.database.db.selectFrom('integrations').select('id').execute();
    const res = await test('fake_provider', { config: { collect: true, base_url: sim.url, api_key: FAKE_API_KEY } });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({
      ok: true,
      platform: 'fake_provider',
      detail: 'authenticated as partner-account',
      error_kind: null,
      status: null,
    });
    expect(sim.log.at(-1)).toMatchObject({ path: '/v1/whoami', authorized: true });
    expect(await t.container.database.db.selectFrom('integrations').select('id').execute()).toEqual(integrationsBefore);
    expect(await t.container.database.db.selectFrom('integration_checks').select('id').execute()).toEqual([]);
    expect(res.body).not.toContain(FAKE_API_KEY);
  });

  it('answers 200 ok false when the vendor refuses, never echoing the secret', async () => {
    const wrong = 'not-the-key-998877';
    const res = await test('fake_provider', { config: { collect: true, base_url: sim.url, api_key: wrong } });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ ok: false, error_kind: 'auth', status: 401 });
    expect(res.body).not.toContain(wrong);
    const audit = await t.container.database.db
      .selectFrom('audit_log')
      .select(['details', 'outcome'])
      .where('operation_id', '=', 'providers.test_connection')
      .execute();
    expect(audit.length).toBe(2);
    expect(JSON.stringify(audit)).not.toContain(wrong);
  });

  it('validates the config against the platform schema (422) and knows only platforms with a connector (404)', async () => {
    const invalid = await test('fake_provider', { config: { collect: true, base_url: sim.url } });
    expect(invalid.statusCode).toBe(422);
    expect(invalid.json().error.code).toBe('integration.invalid_config');
    expect(invalid.json().error.details.errors.map((e: Json) => e.location)).toContain('body/config/api_key');
    const extra = await test('fake_provider', {
      config: { collect: true, base_url: sim.url, api_key: FAKE_API_KEY, surprise: 1 },
    });
    expect(extra.statusCode).toBe(422);
    for (const platform of ['custom', 'no_such_platform']) {
      const res = await test(platform, { config: {} });
      expect(res.statusCode, platform).toBe(404);
      expect(typeof res.json().detail).toBe('string');
    }
    expect((await test('fake_provider', {})).statusCode).toBe(422);
  });

  it('needs credentials', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/providers/fake_provider/test-connection',
      payload: { config: {} },
    });
    expect(res.statusCode).toBe(401);
  });
});
