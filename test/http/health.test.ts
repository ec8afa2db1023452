import { afterEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';

const opened: TestApp[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((t) => t.close().catch(() => undefined)));
});

async function app(env: Record<string, string> = {}): Promise<TestApp> {
  const t = await createTestApp({ env });
  opened.push(t);
  return t;
}

describe('health probes', () => {
  it('/livez and /healthz answer while the process runs', async () => {
    const t = await app();
    for (const url of ['/livez', '/healthz']) {
      const res = await t.app.inject({ method: 'GET', url });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ status: 'ok' });
    }
  });

  it('/readyz checks the database and the cache, and reports no version or edition', async () => {
    const t = await app();
    const res = await t.app.inject({ method: 'GET', url: '/readyz' });
    expect(res.statusCode).toBe(200);
    // The test app's data directory is never created: the disk guard cannot measure it and refuses nothing.
    expect(res.json()).toEqual({
      status: 'ok',
      checks: { database: 'ok', cache: 'ok' },
      disk: { free_bytes: null, floor_bytes: 536870912, refusing_events: false, reserved_bytes: 0 },
    });
    expect(res.body).not.toMatch(/version|edition/i);
  });

  it('/readyz answers 503 naming the database when it is down', async () => {
    const t = await app();
    await t.container.database.close();
    const res = await t.app.inject({ method: 'GET', url: '/readyz' });
    expect(res.statusCode).toBe(503);
    const body = res.json();
    expect(body.detail).toBe('Dependency unavailable: database');
    expect(body.error.code).toBe('dependency.unavailable');
    expect(body.error.details.checks).toEqual({ database: 'down', cache: 'ok' });
  });

  it('/readyz answers 503 naming the cache when Redis is unreachable', async () => {
    // Port 1 on loopback: nothing listens there.
    const t = await app({ REDIS_URL: 'redis://127.0.0.1:1' });
    const res = await t.app.inject({ method: 'GET', url: '/readyz' });
    expect(res.statusCode).toBe(503);
    expect(res.json().detail).toBe('Dependency unavailable: cache');
    expect(res.json().error.details.down).toEqual(['cache']);
  });
});
