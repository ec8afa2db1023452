// Ingestion tokens: create/rotate/delete/status, scoping, and the secret never written down.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/support/app.js';
import { createOrganization, createPrincipal, type Principal } from '../../../test/support/identity.js';

let t: TestApp;
let orgA: number;
let orgB: number;
let adminA: Principal;
let viewerA: Principal;
let saA: Principal;

type Json = Record<string, unknown>;

beforeAll(async () => {
  t = await createTestApp({ env: { WEIR_TOKEN_RATE_LIMIT: '1000000' }, captureLogs: true });
  orgA = await createOrganization(t, 'Org A');
  orgB = await createOrganization(t, 'Org B');
  adminA = await createPrincipal(t, { role: 'admin', organizationId: orgA });
  viewerA = await createPrincipal(t, { role: 'viewer', organizationId: orgA });
  saA = await createPrincipal(t, { role: 'admin', organizationId: orgA, kind: 'service_account' });
});
afterAll(async () => t?.close());

let n = 0;
async function integration(organizationId: number, platform = 'custom'): Promise<number> {
  const row = await t.container.database.db
    .insertInto('integrations')
    .values({ organization_id: organizationId, name: `push-${++n}`, platform, config: '{}' })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

function call(who: Principal, method: 'GET' | 'POST' | 'DELETE', url: string) {
  return t.app.inject({ method, url, headers: who.headers });
}

function push(token: string, body = '{"a":1}') {
  return t.app.inject({
    method: 'POST',
    url: '/api/ingest/events',
    headers: { authorization: `Bearer ${token}` },
    payload: body,
  });
}

describe('POST /api/ingest/integrations/{id}/token', () => {
  it('answers 201 with the token once, its prefix and the push URL', async () => {
    const id = await integration(orgA);
    const res = await call(adminA, 'POST', `/api/ingest/integrations/${id}/token`);
    expect(res.statusCode, res.body).toBe(201);
    const body = res.json<Json>();
    expect(body.token).toMatch(/^svcik_[0-9A-Za-z]{49}$/);
    expect(body).toMatchObject({ integration_id: id, ingest_url: '/api/ingest/{stream}' });
    expect(String(body.token).startsWith(String(body.token_prefix))).toBe(true);
    expect(Date.parse(String(body.created_at))).not.toBeNaN();
    const stored = await t.container.database.db
      .selectFrom('ingestion_tokens')
      .selectAll()
      .where('integration_id', '=', id)
      .executeTakeFirstOrThrow();
    expect(stored.token_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(stored)).not.toContain(String(body.token));
    expect((await push(String(body.token))).statusCode).toBe(200);
  });

  it('accepts the JSON body {} that clients send with it', async () => {
    const id = await integration(orgA);
    const res = await t.app.inject({
      method: 'POST',
      url: `/api/ingest/integrations/${id}/token`,
      headers: adminA.headers,
      payload: {},
    });
    expect(res.statusCode, res.body).toBe(201);
  });

  it('rotates: a second creation replaces the token and the old one stops at once', async () => {
    const id = await integration(orgA);
    const first = (await call(adminA, 'POST', `/api/ingest/integrations/${id}/token`)).json<Json>();
    expect((await push(String(first.token))).statusCode).toBe(200); // now cached
    const second = (await call(adminA, 'POST', `/api/ingest/integrations/${id}/token`)).json<Json>();
    expect(second.token).not.toBe(first.token);
    const old = await push(String(first.token));
    expect(old.statusCode).toBe(401);
    expect(old.json()).toMatchObject({ error: { code: 'ingest.invalid_token' } });
    expect((await push(String(second.token))).statusCode).toBe(200);
    const rows = await t.container.database.db
      .selectFrom('ingestion_tokens')
      .select('integration_id')
      .where('integration_id', '=', id)
      .execute();
    expect(rows).toHaveLength(1);
  });

  it('is allowed to an admin service account and recorded without a creator user', async () => {
    const id = await integration(orgA);
    expect((await call(saA, 'POST', `/api/ingest/integrations/${id}/token`)).statusCode).toBe(201);
    const row = await t.container.database.db
      .selectFrom('ingestion_tokens')
      .select('created_by')
      .where('integration_id', '=', id)
      .executeTakeFirstOrThrow();
    expect(row.created_by).toBeNull();
  });

  it("answers 404 for another organization's integration and an unknown one", async () => {
    const foreign = await integration(orgB);
    for (const target of [foreign, 987654]) {
      const res = await call(adminA, 'POST', `/api/ingest/integrations/${target}/token`);
      expect(res.statusCode).toBe(404);
      expect(typeof res.json().detail).toBe('string');
    }
    expect(
      await t.container.database.db
        .selectFrom('ingestion_tokens')
        .select('integration_id')
        .where('integration_id', '=', foreign)
        .executeTakeFirst(),
    ).toBeUndefined();
  });

  it('answers 403 to a viewer (user.manage)', async () => {
    const id = await integration(orgA);
    const res = await call(viewerA, 'POST', `/api/ingest/integrations/${id}/token`);
    expect(res.statusCode).toBe(403);
    expect(res.json().detail).toMatch(/user\.manage/);
  });

  it('never writes the token to the audit trail or the logs', async () => {
    const id = await integration(orgA);
    const res = await t.app.inject({
      method: 'POST',
      url: `/api/ingest/integrations/${id}/token`,
      headers: { ...adminA.headers, 'x-correlation-id': 'token-audit-check' },
    });
    const token = String(res.json<Json>().token);
    await push(token);
    await t.app.inject({
      method: 'POST',
      url: '/api/ingest/events',
      headers: { 'x-ingest-token': token },
      payload: '{"b":2}',
    });
    const entries = await t.container.database.db
      .selectFrom('audit_log')
      .selectAll()
      .where('correlation_id', '=', 'token-audit-check')
      .execute();
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ operation_id: 'ingest.create_token', outcome: 'success' });
    expect(JSON.stringify(entries)).toContain(token.slice(0, 12));
    const everything = await t.container.database.db.selectFrom('audit_log').selectAll().execute();
    expect(JSON.stringify(everything)).not.toContain(token);
    expect(t.logs.length).toBeGreaterThan(0);
    expect(JSON.stringify(t.logs)).not.toContain(token);
    expect(JSON.stringify(t.logs)).not.toContain(token.slice(12));
  });
});

describe('DELETE /api/ingest/integrations/{id}/token', () => {
  it('removes the token (204); pushes with it stop at once; a second delete is 404', async () => {
    const id = await integration(orgA);
    const token = String((await call(adminA, 'POST', `/api/ingest/integrations/${id}/token`)).json<Json>().token);
    expect((await push(token)).statusCode).toBe(200);
    const del = await call(adminA, 'DELETE', `/api/ingest/integrations/${id}/token`);
    expect(del.statusCode, del.body).toBe(204);
    expect((await push(token)).statusCode).toBe(401);
    expect((await call(adminA, 'DELETE', `/api/ingest/integrations/${id}/token`)).statusCode).toBe(404);
  });

  it("answers 404 for another organization's integration, leaving its token working", async () => {
    const foreign = await integration(orgB);
    const adminB = await createPrincipal(t, { role: 'admin', organizationId: orgB });
    const token = String((await call(adminB, 'POST', `/api/ingest/integrations/${foreign}/token`)).json<Json>().token);
    expect((await call(adminA, 'DELETE', `/api/ingest/integrations/${foreign}/token`)).statusCode).toBe(404);
    expect((await push(token)).statusCode).toBe(200);
  });
});

describe('GET /api/ingest/integrations/{id}', () => {
  it('describes an integration without a token', async () => {
    const id = await integration(orgA);
    const res = await call(adminA, 'GET', `/api/ingest/integrations/${id}`);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({
      integration_id: id,
      organization_id: orgA,
      platform: 'custom',
      is_active: true,
      token: { configured: false, token_prefix: null, created_at: null, last_used_at: null },
      ingest_url: '/api/ingest/{stream}',
      stats: { days: 7, events_in: 0, bytes_in: 0, last_event_at: null, streams: [] },
    });
  });

  it('shows the token state, its last use and the counters of the last 7 days per stream', async () => {
    const id = await integration(orgA);
    const created = (await call(adminA, 'POST', `/api/ingest/integrations/${id}/token`)).json<Json>();
    expect((await push(String(created.token))).statusCode).toBe(200);
    const db = t.container.database.db;
    const today = new Date().toISOString().slice(0, 10);
    const old = new Date(Date.now() - 10 * 86_400_000).toISOString().slice(0, 10);
    const at = new Date('2030-01-01T00:00:00Z');
    await db
      .insertInto('stream_counters')
      .values([
        {
          organization_id: orgA,
          integration_id: id,
          stream: 'dns',
          day: today,
          events_in: 10,
          bytes_in: 1000,
          last_event_at: at,
        },
        {
          organization_id: orgA,
          integration_id: id,
          stream: 'auth',
          day: today,
          events_in: 3,
          bytes_in: 300,
          last_event_at: null,
        },
        {
          organization_id: orgA,
          integration_id: id,
          stream: 'dns',
          day: old,
          events_in: 99,
          bytes_in: 9900,
          last_event_at: null,
        },
      ])
      .execute();
    const res = await call(adminA, 'GET', `/api/ingest/integrations/${id}`);
    expect(res.statusCode).toBe(200);
    const body = res.json<Json>();
    expect(body.token).toMatchObject({
      configured: true,
      token_prefix: created.token_prefix,
      created_at: created.created_at,
    });
    expect(Date.parse(String((body.token as Json).last_used_at))).not.toBeNaN();
    expect(body.stats).toMatchObject({
      events_in: 13,
      bytes_in: 1300,
      last_event_at: '2030-01-01T00:00:00.000Z',
      streams: [
        { stream: 'auth', events_in: 3, bytes_in: 300, last_event_at: null },
        { stream: 'dns', events_in: 10, bytes_in: 1000, last_event_at: '2030-01-01T00:00:00.000Z' },
      ],
    });
  });

  it('writes last-use times in batches', async () => {
    const id = await integration(orgA);
    const token = String((await call(adminA, 'POST', `/api/ingest/integrations/${id}/token`)).json<Json>().token);
    await push(token);
    const db = t.container.database.db;
    const read = () =>
      db
        .selectFrom('ingestion_tokens')
        .select('last_used_at')
        .where('integration_id', '=', id)
        .executeTakeFirstOrThrow();
    expect((await read()).last_used_at).toBeNull();
    // The container flushes every 30 s and at shutdown; the test flushes by hand.
    await t.container.ingest.service.flushLastUsed();
    const written = (await read()).last_used_at;
    expect(written).toBeInstanceOf(Date);
    const status = (await call(adminA, 'GET', `/api/ingest/integrations/${id}`)).json<{ token: Json }>();
    expect(status.token.last_used_at).toBe(written?.toISOString());
  });

  it('answers 404 outside the scope and 403 to a viewer', async () => {
    const foreign = await integration(orgB);
    expect((await call(adminA, 'GET', `/api/ingest/integrations/${foreign}`)).statusCode).toBe(404);
    expect((await call(viewerA, 'GET', `/api/ingest/integrations/${foreign}`)).statusCode).toBe(403);
    const root = await createPrincipal(t, { role: 'admin' });
    expect((await call(root, 'GET', `/api/ingest/integrations/${foreign}`)).statusCode).toBe(200);
  });
});
