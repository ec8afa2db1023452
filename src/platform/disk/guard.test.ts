// The disk guard: new events refused (503, Retry-After) while the data directory's disk is
// under its floor, through the API users push to; reads go on; health and /metrics show it.
// The floor is set just above the real free space of a real directory (no mount needed).
import { mkdtempSync, rmSync, statfsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/support/app.js';
import { createOrganization, createPrincipal, type Principal } from '../../../test/support/identity.js';
import { createDiskGuard } from './guard.js';

describe('createDiskGuard', () => {
  it('refuses under the floor, lets through again above it, and reads the disk at most once per refresh', () => {
    let free = 100;
    let reads = 0;
    const guard = createDiskGuard({
      path: '/x',
      floorBytes: 50,
      refreshMs: 0,
      statfs: () => (reads++, { bavail: free, blocks: 1000, bsize: 1 }),
    });
    expect(() => guard.check()).not.toThrow();
    free = 49;
    expect(() => guard.check()).toThrowError(expect.objectContaining({ code: 'storage.disk_low', status: 503 }));
    expect(guard.state()).toMatchObject({ free_bytes: 49, floor_bytes: 50, refusing: true });
    free = 60;
    expect(() => guard.check()).not.toThrow();
    const cached = createDiskGuard({
      path: '/x',
      floorBytes: 50,
      refreshMs: 60_000,
      statfs: () => (reads++, { bavail: 1, blocks: 1, bsize: 1 }),
    });
    reads = 0;
    for (let i = 0; i < 5; i++) expect(() => cached.check()).toThrow();
    expect(reads).toBe(1);
  });

  it('counts what accepted events will still write as used: refused while free − reserved is under the floor', () => {
    let reserved = 0;
    const guard = createDiskGuard({
      path: '/x',
      floorBytes: 50,
      refreshMs: 0,
      statfs: () => ({ bavail: 100, blocks: 1000, bsize: 1 }),
      reserved: () => reserved,
    });
    expect(guard.refusal()).toBeUndefined();
    reserved = 60;
    const refused = guard.refusal();
    expect(refused).toMatchObject({
      code: 'storage.disk_low',
      details: { free_bytes: 100, reserved_bytes: 60, floor_bytes: 50 },
    });
    expect(refused?.message).toMatch(/events already accepted will still take about 60/);
    expect(guard.state()).toMatchObject({ free_bytes: 100, reserved_bytes: 60, refusing: true });
    reserved = 40;
    expect(guard.refusal()).toBeUndefined();
    // A floor of 0 turns the guard off.
    expect(
      createDiskGuard({
        path: '/x',
        floorBytes: 0,
        refreshMs: 0,
        statfs: () => ({ bavail: 0, blocks: 1, bsize: 1 }),
        reserved: () => 10,
      }).refusal(),
    ).toBeUndefined();
  });

  it('guards nothing where the directory cannot be measured', () => {
    const guard = createDiskGuard({ path: '/nonexistent/weir', floorBytes: 1 });
    expect(() => guard.check()).not.toThrow();
    expect(guard.state()).toMatchObject({ free_bytes: null, refusing: false });
  });
});

describe('the disk guard through the API', () => {
  let t: TestApp;
  let admin: Principal;
  let org: number;
  const dataDir = mkdtempSync(path.join(tmpdir(), 'weir-disk-'));
  beforeAll(async () => {
    const s = statfsSync(dataDir);
    // Just above what is free now: the guard refuses, whatever the disk.
    const floor = Math.min(s.bavail * s.bsize + 8 * 1024 ** 3, 1024 ** 4);
    t = await createTestApp({
      env: {
        WEIR_DATA_DIR: dataDir,
        WEIR_DISK_FLOOR_BYTES: String(floor),
        WEIR_PROMETHEUS_ENABLED: 'true',
        WEIR_TOKEN_RATE_LIMIT: '100000',
      },
    });
    org = await createOrganization(t, 'Disk');
    admin = await createPrincipal(t, { role: 'admin', organizationId: org });
  });
  afterAll(async () => {
    await t?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('refuses a push with 503 and Retry-After, keeps serving reads, and says so in /readyz and /metrics', async () => {
    const created = await t.app.inject({
      method: 'POST',
      url: '/api/integrations/',
      headers: admin.headers,
      payload: { name: 'push', platform: 'custom', organization_id: org },
    });
    expect(created.statusCode, created.body).toBe(201);
    const integrationId = created.json<{ id: number }>().id;
    const token = (
      await t.app.inject({
        method: 'POST',
        url: `/api/ingest/integrations/${integrationId}/token`,
        headers: admin.headers,
      })
    ).json<{ token: string }>().token;

    const pushed = await t.app.inject({
      method: 'POST',
      url: '/api/ingest/events',
      headers: { authorization: `Bearer ${token}` },
      payload: '{"a":1}\n',
    });
    expect(pushed.statusCode, pushed.body).toBe(503);
    expect(pushed.headers['retry-after']).toBe('30');
    expect(pushed.json()).toMatchObject({
      detail: expect.stringMatching(/WEIR_DISK_FLOOR_BYTES/),
      error: { code: 'storage.disk_low' },
    });

    // Reads go on.
    expect(
      (await t.app.inject({ method: 'GET', url: `/api/integrations/${integrationId}`, headers: admin.headers }))
        .statusCode,
    ).toBe(200);
    const ready = await t.app.inject({ method: 'GET', url: '/readyz' });
    expect(ready.statusCode).toBe(200);
    expect(ready.json()).toMatchObject({ disk: { refusing_events: true, free_bytes: expect.any(Number) } });
    const metrics = await t.app.inject({ method: 'GET', url: '/metrics' });
    expect(metrics.body).toMatch(/^weir_disk_refusing_events(\{[^}]*\})? 1$/m);
    expect(metrics.body).toMatch(/^weir_disk_free_bytes(\{[^}]*\})? \d+/m);
  });
});
