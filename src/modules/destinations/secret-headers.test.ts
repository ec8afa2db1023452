// The http type's credential.secret_headers through the API: an object of header names to
// values, set on create and by rotation, never returned, sealed at rest, and sent with
// every delivery by the real dispatcher.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/support/app.js';
import { addRoute, routedBatch, until } from '../../../test/support/delivery-engine.js';
import { createOrganization, createPrincipal, type Principal } from '../../../test/support/identity.js';
import { integration } from '../../../test/support/quarantine.js';
import { startWebhookReceiver, type WebhookReceiver } from '../../../test/support/webhook-receiver.js';

type Json = Record<string, unknown>;
const BASE = '/api/collectors/destinations';
const FIRST = 'sh-Kq7Wz2Lp9Xv4Nb1Rt8Ym5';
const SECOND = 'sh-Jd3Fg6Hk0Pa2Sd5Zx9Cv7';

let t: TestApp;
let org: number;
let admin: Principal;
let viewer: Principal;
let receiver: WebhookReceiver;

const call = (who: Principal, method: 'GET' | 'POST' | 'PUT', url: string, payload?: Json) =>
  t.app.inject({ method, url, headers: who.headers, ...(payload ? { payload } : {}) });
const body = (url: string, credential: Json) => ({
  name: `hook-${Math.random()}`,
  type: 'http',
  organization_id: org,
  config: { url },
  credential,
  delivery: { max_wait_ms: 0 },
});

beforeAll(async () => {
  receiver = await startWebhookReceiver({ keepBodies: true });
  t = await createTestApp({
    env: { WEIR_TOKEN_RATE_LIMIT: '1000000', WEIR_DISPATCH_POLL_MS: '20' },
    captureLogs: true,
  });
  org = await createOrganization(t, 'Headers');
  admin = await createPrincipal(t, { role: 'admin', organizationId: org });
  viewer = await createPrincipal(t, { role: 'viewer', organizationId: org });
});

afterAll(async () => {
  await t?.close();
  await receiver?.close();
});

describe('credential.secret_headers of an http destination', () => {
  it('is set as an object on create, never read back, sealed at rest, rotated, and sent with every delivery', async () => {
    const created = await call(
      admin,
      'POST',
      BASE,
      body(`${receiver.url}/in`, {
        secret_headers: { 'X-Api-Key': FIRST, 'X-Tenant-Secret': 'ts-Qw4Er7Ty1Ui' },
        bearer_token: 'bt-Zx8Cv5Bn2Mq',
      }),
    );
    expect(created.statusCode, created.body).toBe(201);
    const id = created.json<Json>().id as string;
    expect(created.json<Json>()).toMatchObject({ has_credential: true });

    const read = await call(viewer, 'GET', `${BASE}/${id}`);
    expect(read.statusCode).toBe(200);
    expect(read.json<Json>()).toMatchObject({ has_credential: true });
    for (const text of [created.body, read.body]) expect(text).not.toMatch(/sh-Kq7W|ts-Qw4E|X-Api-Key|bt-Zx8C/);
    const row = await t.container.database.db
      .selectFrom('destinations')
      .select('credential')
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    expect(row.credential).not.toContain(FIRST);
    expect(row.credential).not.toContain('X-Api-Key');

    await addRoute(t, org, { destinations: [id] });
    const source = await integration(t, org, 'headers-push');
    const loops = t.container.loops.filter((l) => l.role === 'dispatcher').map((l) => l.start());
    try {
      await routedBatch(t, t.container.delivery, org, source, [{ class_uid: 3002, n: 1 }]);
      await until(() => receiver.requests.length >= 1, 10_000, 'the first delivery');
      expect(receiver.requests[0]!.headers).toMatchObject({
        'x-api-key': FIRST,
        'x-tenant-secret': 'ts-Qw4Er7Ty1Ui',
        authorization: 'Bearer bt-Zx8Cv5Bn2Mq',
      });

      const rotated = await call(admin, 'POST', `${BASE}/${id}/credential/rotate`, {
        credential: { secret_headers: { 'X-Api-Key': SECOND } },
      });
      expect(rotated.statusCode, rotated.body).toBe(200);
      expect(rotated.body).not.toContain(SECOND);
      // The lanes follow the new version; the next batch carries the new value only.
      await until(
        async () =>
          (await t.container.destinations.directory.list()).find((d) => d.id === id)?.version ===
          rotated.json<Json>().version,
        5_000,
        'the new version',
      );
      await new Promise((resolve) => setTimeout(resolve, 1_200));
      await routedBatch(t, t.container.delivery, org, source, [{ class_uid: 3002, n: 2 }]);
      await until(() => receiver.requests.length >= 2, 10_000, 'the second delivery');
      const last = receiver.requests.at(-1)!.headers;
      expect(last['x-api-key']).toBe(SECOND);
      expect(last['x-tenant-secret']).toBeUndefined();
      expect(last.authorization).toBeUndefined();
    } finally {
      await Promise.all(loops.map((l) => l.stop()));
    }
    expect(JSON.stringify(t.logs)).not.toMatch(/sh-Kq7W|sh-Jd3F|ts-Qw4E/);
  });

  it('refuses a string, a nested value, a header Weir owns, and a credential change through PUT, with a clear 422', async () => {
    const asString = await call(admin, 'POST', BASE, body(receiver.url, { secret_headers: '{"X-Api-Key":"v"}' }));
    expect(asString.statusCode).toBe(422);
    expect(asString.json<Json>().detail).toMatch(/secret_headers/);
    const nested = await call(admin, 'POST', BASE, body(receiver.url, { secret_headers: { 'X-Api-Key': { v: 1 } } }));
    expect(nested.statusCode).toBe(422);
    const badName = await call(admin, 'POST', BASE, body(receiver.url, { secret_headers: { 'Bad Header': 'v' } }));
    expect(badName.statusCode).toBe(422);
    expect(badName.json<Json>().detail).toMatch(/secret_headers/);

    const ok = await call(admin, 'POST', BASE, body(receiver.url, { secret_headers: { 'X-Api-Key': FIRST } }));
    expect(ok.statusCode).toBe(201);
    const put = await call(admin, 'PUT', `${BASE}/${ok.json<Json>().id as string}`, {
      credential: { secret_headers: { 'X-Api-Key': SECOND } },
    });
    expect(put.statusCode).toBe(422);
    expect(put.json<Json>().detail).toMatch(/credential\/rotate/);
  });
});
