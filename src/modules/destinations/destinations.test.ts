import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { TestApp } from '../../../test/support/app.js';
import {
  DESTINATIONS,
  destinationsApp,
  open,
  secure,
  SECRET,
  type DestinationsApp,
  type Method,
} from '../../../test/support/destinations.js';
import type { Principal } from '../../../test/support/identity.js';
import { DEFAULT_DELIVERY } from '../../pipeline/delivery/settings.js';

const SECRET2 = 'tok-SECRET-bbbb-2222';
const SECRET3 = 'tok-SECRET-cccc-3333';
let h: DestinationsApp;
let t: TestApp;
let orgA: number;
let orgB: number;
let root: Principal;
let adminA: Principal;
let adminB: Principal;
let viewerA: Principal;

type Json = Record<string, unknown>;
const BASE = DESTINATIONS;
const call = (who: Principal, method: Method, url: string, payload?: unknown) => h.call(who, method, url, payload);
const create = (who: Principal, body: Json) => h.create(who, body);

beforeAll(async () => {
  h = await destinationsApp();
  ({ t, orgA, orgB, root, adminA, adminB } = h);
  viewerA = h.viewerA;
});
afterAll(async () => h?.t.close());
beforeEach(async () => h.clear());

describe('destination types', () => {
  it('lists the types with their schemas and the delivery defaults, for readers', async () => {
    const res = await call(viewerA, 'GET', `${BASE}/destination-types`);
    expect(res.statusCode).toBe(200);
    const types = res.json<Json[]>();
    const fake = types.find((x) => x.type === 'fake_secure');
    expect(fake).toMatchObject({
      title: 'Fake (credential)',
      credential_required: true,
      delivery_defaults: { ...DEFAULT_DELIVERY },
    });
    expect(fake?.config_schema).toMatchObject({ type: 'object', properties: { url: { type: 'string' } } });
    expect(fake?.credential_schema).toMatchObject({ properties: { token: { type: 'string' } } });
    expect(types.find((x) => x.type === 'fake_open')?.credential_schema).toBeNull();
  });
});

describe('create and read', () => {
  it('creates an organization destination: defaults filled, credential sealed and never returned', async () => {
    const d = await create(adminA, secure('Splunk', { description: ' main ', delivery: { max_events: 100 } }));
    expect(d).toEqual({
      id: expect.any(String),
      organization_id: orgA,
      name: 'Splunk',
      description: 'main',
      type: 'fake_secure',
      config: { url: 'http://127.0.0.1:1', index: 'main' },
      delivery: { ...DEFAULT_DELIVERY, max_events: 100 },
      enabled: true,
      disabled_reason: null,
      has_credential: true,
      credential_updated_at: expect.stringMatching(/Z$/),
      shadow_destination_id: null,
      version: 1,
      created_at: expect.stringMatching(/Z$/),
      updated_at: expect.stringMatching(/Z$/),
      warnings: [],
    });
    const got = await call(viewerA, 'GET', `${BASE}/${String(d.id)}`);
    const { warnings: _, ...saved } = d;
    expect(got.json()).toEqual(saved);
    const row = await t.container.database.db
      .selectFrom('destinations')
      .selectAll()
      .where('id', '=', String(d.id))
      .executeTakeFirstOrThrow();
    expect(row.credential).not.toContain(SECRET);
    expect(row.credential_key_id).toBe(t.container.destinations.cipher.currentKeyId);
    expect(row.delivery).toEqual({ max_events: 100 });
    expect(await t.container.destinations.directory.credential(String(d.id))).toEqual({ token: SECRET });
  });

  it('refuses what the type does not accept, with a string detail and the code', async () => {
    const cases: [Json, number, string][] = [
      [{ ...secure('x'), type: 'nope' }, 422, 'destination.unknown_type'],
      [{ ...secure('x'), config: { url: '' } }, 422, 'destination.invalid_config'],
      [{ ...secure('x'), config: { url: 'u', extra: 1 } }, 422, 'destination.invalid_config'],
      [{ ...secure('x'), credential: undefined }, 422, 'destination.invalid_credential'],
      [{ ...secure('x'), credential: { token: 'short' } }, 422, 'destination.invalid_credential'],
      [{ ...secure('x'), credential: { token: SECRET3, other: SECRET3 } }, 422, 'destination.invalid_credential'],
      [{ ...open('x'), credential: { token: SECRET3 } }, 422, 'destination.invalid_credential'],
      [{ ...secure('x'), credential: { token: 5 } }, 422, 'request.validation_failed'],
      [{ ...secure('  ') }, 422, 'request.validation_failed'],
      [{ ...secure('x'), delivery: { backoff_base_ms: 5000, backoff_max_ms: 1000 } }, 422, 'request.validation_failed'],
      [{ ...secure('x'), delivery: { max_events: 0 } }, 422, 'request.validation_failed'],
      [{ ...secure('x'), colour: 'red' }, 422, 'request.validation_failed'],
      [{ ...secure('x'), organization_id: orgB }, 404, 'resource.not_found'],
      [{ ...secure('x'), organization_id: null }, 403, 'destination.global_needs_platform_scope'],
    ];
    for (const [body, status, code] of cases) {
      const res = await call(adminA, 'POST', BASE, body);
      expect(res.statusCode, `${JSON.stringify(body)}: ${res.body}`).toBe(status);
      expect(typeof res.json().detail).toBe('string');
      expect(res.json().error.code).toBe(code);
      expect(res.body).not.toContain(SECRET3);
    }
    const bad = (await call(adminA, 'POST', BASE, { ...secure('x'), config: { index: 3 } })).json();
    expect(bad.error.details.errors.map((e: Json) => e.location).sort()).toEqual([
      'body/config/index',
      'body/config/url',
    ]);
    expect(await t.container.database.db.selectFrom('destinations').select('id').execute()).toEqual([]);
  });

  it('says in words what a file destination path and prefix may be, never with the regular expression', async () => {
    const res = await call(adminA, 'POST', BASE, {
      name: 'files',
      type: 'file',
      config: { path: '../elsewhere', prefix: '-x' },
    });
    expect(res.statusCode).toBe(422);
    expect(res.json().error.code).toBe('destination.invalid_config');
    expect(res.json().detail).toBe(
      'body/config/path must be a relative directory such as "siem/okta" or ".": names separated by "/", not starting with "/" or a drive letter (C:), without a ".." segment, a backslash or a NUL character',
    );
    expect(res.json().error.details.errors).toContainEqual({
      location: 'body/config/prefix',
      message: 'must be 1 to 100 letters, digits, ".", "_" or "-", starting with a letter or a digit',
    });
    expect(res.body).not.toContain('(?!');
  });

  it('keeps names unique per owner, case-insensitively', async () => {
    await create(adminA, open('Archive'));
    const dup = await call(adminA, 'POST', BASE, open('ARCHIVE'));
    expect(dup.statusCode).toBe(409);
    expect(dup.json().error.code).toBe('destination.name_taken');
    await create(adminB, open('Archive'));
    await create(root, open('Archive'));
  });

  it('is user.manage to write and destination.read to read', async () => {
    expect((await call(viewerA, 'POST', BASE, open('v'))).statusCode).toBe(403);
    expect((await call(viewerA, 'GET', BASE)).statusCode).toBe(200);
  });
});

describe('visibility and scope', () => {
  it('shows an organization its own and the global destinations; others are not found', async () => {
    const a = await create(adminA, open('A one'));
    const b = await create(adminB, open('B one'));
    const g = await create(root, open('Global one'));
    expect(g.organization_id).toBeNull();
    const ids = async (who: Principal, q = '') =>
      (await call(who, 'GET', `${BASE}${q}`)).json<{ items: Json[]; total: number }>().items.map((d) => d.id);
    expect(await ids(adminA)).toEqual([a.id, g.id]);
    expect(await ids(adminB)).toEqual([b.id, g.id]);
    expect(await ids(root)).toEqual([a.id, b.id, g.id]);
    expect(await ids(root, '?global=true')).toEqual([g.id]);
    expect(await ids(root, `?org_id=${orgB}`)).toEqual([b.id]);
    expect(await ids(adminA, '?type=fake_secure')).toEqual([]);
    const page = (await call(root, 'GET', `${BASE}?limit=1&offset=1`)).json();
    expect(page).toMatchObject({ total: 3, limit: 1, offset: 1, items: [{ id: b.id }] });

    expect((await call(adminA, 'GET', `${BASE}/${String(g.id)}`)).statusCode).toBe(200);
    for (const [method, suffix, body] of [
      ['GET', '', undefined],
      ['PUT', '', { name: 'mine' }],
      ['DELETE', '', undefined],
      ['GET', '/audit', undefined],
      ['POST', '/credential/revoke', undefined],
      ['POST', '/shadow', { target_destination_id: null }],
      ['POST', '/test', undefined],
    ] as [Method, string, Json | undefined][]) {
      const res = await call(adminA, method, `${BASE}/${String(b.id)}${suffix}`, body);
      expect(res.statusCode, `${method} ${suffix}`).toBe(404);
    }
  });

  it('lets only platform scope change a global destination (403 for an organization admin)', async () => {
    const g = await create(root, secure('Shared SIEM'));
    for (const [method, suffix, body] of [
      ['PUT', '', { name: 'mine' }],
      ['DELETE', '', undefined],
      ['POST', '/credential/revoke', undefined],
      ['POST', '/credential/rotate', { credential: { token: SECRET2 } }],
      ['POST', '/shadow', { target_destination_id: null }],
    ] as [Method, string, Json | undefined][]) {
      const res = await call(adminA, method, `${BASE}/${String(g.id)}${suffix}`, body);
      expect(res.statusCode, `${method} ${suffix}`).toBe(403);
      expect(res.json().error.code).toBe('destination.global_needs_platform_scope');
    }
    expect((await call(root, 'PUT', `${BASE}/${String(g.id)}`, { name: 'Shared SIEM 2' })).statusCode).toBe(200);
  });
});

describe('PUT', () => {
  it('changes the given fields, bumps the version, and refuses a credential', async () => {
    const d = await create(adminA, secure('Edit me'));
    const id = String(d.id);
    const res = await call(adminA, 'PUT', `${BASE}/${id}`, {
      name: 'Edited',
      config: { url: 'http://h' },
      delivery: { timeout_ms: 500 },
      enabled: false,
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({
      name: 'Edited',
      config: { url: 'http://h', index: 'main' },
      delivery: { ...DEFAULT_DELIVERY, timeout_ms: 500 },
      enabled: false,
      disabled_reason: null,
      has_credential: true,
      version: 2,
    });
    const withCredential = await call(adminA, 'PUT', `${BASE}/${id}`, { credential: { token: SECRET3 } });
    expect(withCredential.statusCode).toBe(422);
    expect(withCredential.json().error.code).toBe('destination.invalid_credential');
    expect(withCredential.json().detail).toContain(`/api/collectors/destinations/${id}/credential/rotate`);
    expect((await call(adminA, 'PUT', `${BASE}/${id}`, { type: 'fake_open' })).statusCode).toBe(422);
    expect((await call(adminA, 'PUT', `${BASE}/${id}`, { config: { url: 7 } })).json().error.code).toBe(
      'destination.invalid_config',
    );
    const other = await create(adminA, open('Taken'));
    expect((await call(adminA, 'PUT', `${BASE}/${id}`, { name: 'taken' })).statusCode).toBe(409);
    expect((await call(adminA, 'PUT', `${BASE}/${String(other.id)}`, { name: 'Taken' })).statusCode).toBe(200);
    expect((await call(adminA, 'GET', `${BASE}/${id}`)).json()).toMatchObject({ name: 'Edited', version: 2 });
  });
});

describe('credential rotate and revoke', () => {
  it('revoke disables until rotate; enabling without a credential is refused', async () => {
    const d = await create(adminA, secure('Rotating'));
    const id = String(d.id);
    const revoked = await call(adminA, 'POST', `${BASE}/${id}/credential/revoke`);
    expect(revoked.statusCode).toBe(200);
    expect(revoked.json()).toMatchObject({
      enabled: false,
      disabled_reason: 'credential_revoked',
      has_credential: false,
      version: 2,
    });
    expect(await t.container.destinations.directory.credential(id)).toBeNull();
    expect((await call(adminA, 'POST', `${BASE}/${id}/credential/revoke`)).statusCode).toBe(200);

    const enable = await call(adminA, 'PUT', `${BASE}/${id}`, { enabled: true });
    expect(enable.statusCode).toBe(400);
    expect(enable.json().error.code).toBe('destination.no_credential');

    const badRotate = await call(adminA, 'POST', `${BASE}/${id}/credential/rotate`, { credential: { token: 'short' } });
    expect(badRotate.json().error.code).toBe('destination.invalid_credential');
    const rotated = await call(adminA, 'POST', `${BASE}/${id}/credential/rotate`, { credential: { token: SECRET2 } });
    expect(rotated.statusCode).toBe(200);
    expect(rotated.json()).toMatchObject({ enabled: true, disabled_reason: null, has_credential: true, version: 3 });
    expect(await t.container.destinations.directory.credential(id)).toEqual({ token: SECRET2 });

    // A destination disabled by hand stays disabled through a rotation.
    await call(adminA, 'PUT', `${BASE}/${id}`, { enabled: false });
    expect(
      (await call(adminA, 'POST', `${BASE}/${id}/credential/rotate`, { credential: { token: SECRET } })).json(),
    ).toMatchObject({ enabled: false });

    const opened = await create(adminA, open('No secret'));
    const none = await call(adminA, 'POST', `${BASE}/${String(opened.id)}/credential/revoke`);
    expect(none.statusCode).toBe(400);
    expect(none.json().error.code).toBe('destination.no_credential');
    expect(
      (await call(adminA, 'POST', `${BASE}/${String(opened.id)}/credential/rotate`, { credential: { token: SECRET3 } }))
        .statusCode,
    ).toBe(422);
  });

  it('keeps credentials out of every response, audit entry and log line; credential audit lists only credential operations', async () => {
    const d = await create(adminA, secure('Audited', { credential: { token: SECRET } }));
    const id = String(d.id);
    await call(adminA, 'PUT', `${BASE}/${id}`, { description: 'x' });
    await call(adminA, 'POST', `${BASE}/${id}/credential/rotate`, { credential: { token: SECRET2 } });
    await call(adminA, 'POST', `${BASE}/${id}/credential/rotate`, { credential: { token: 'short' } });
    await call(adminA, 'PUT', `${BASE}/${id}`, { credential: { token: SECRET3 } });
    await call(adminA, 'POST', `${BASE}/${id}/credential/revoke`);
    await call(adminA, 'POST', BASE, secure('Refused', { credential: { token: SECRET3, extra: SECRET3 } }));

    const creds = await call(adminA, 'GET', `${BASE}/${id}/credential/audit`);
    expect(creds.statusCode).toBe(200);
    expect(creds.json().items.map((e: Json) => [e.operation_id, e.outcome])).toEqual([
      ['destinations.credential_revoke', 'success'],
      ['destinations.credential_rotate', 'failed'],
      ['destinations.credential_rotate', 'success'],
      ['destinations.create', 'success'],
    ]);
    expect((await call(viewerA, 'GET', `${BASE}/${id}/credential/audit`)).statusCode).toBe(403);
    const all = (await call(viewerA, 'GET', `${BASE}/${id}/audit`)).json();
    expect(all.total).toBe(6);
    expect(all.items[0]).toMatchObject({
      operation_id: 'destinations.credential_revoke',
      target_type: 'destinations',
      target_id: id,
      organization_id: orgA,
    });

    const audit = await t.container.database.db.selectFrom('audit_log').selectAll().execute();
    const logs = JSON.stringify(t.logs);
    const rows = JSON.stringify(await t.container.database.db.selectFrom('destinations').selectAll().execute());
    for (const secret of [SECRET, SECRET2, SECRET3]) {
      expect(JSON.stringify(audit)).not.toContain(secret);
      expect(logs).not.toContain(secret);
      expect(rows).not.toContain(secret);
    }
    expect(t.logs.length).toBeGreaterThan(0);
  });
});
