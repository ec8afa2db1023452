// GET /metrics on the API listener: the pipeline's instruments in the Prometheus text
// format when WEIR_PROMETHEUS_ENABLED=true, not routed otherwise, never in the API document.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';
import { createOrganization, createPrincipal } from '../support/identity.js';

let on: TestApp;
let off: TestApp;
beforeAll(async () => {
  [on, off] = await Promise.all([createTestApp({ env: { WEIR_PROMETHEUS_ENABLED: 'true' } }), createTestApp()]);
});
afterAll(async () => {
  await on?.close();
  await off?.close();
});

describe('GET /metrics', () => {
  it('answers the events pushed in, per organization and integration, without credentials', async () => {
    const orgId = await createOrganization(on, 'Scraped');
    const admin = await createPrincipal(on, { role: 'admin', organizationId: orgId });
    const created = await on.app.inject({
      method: 'POST',
      url: '/api/integrations/',
      headers: admin.headers,
      payload: { name: 'push', platform: 'custom', organization_id: orgId },
    });
    const integrationId = created.json<{ id: number }>().id;
    const token = (
      await on.app.inject({
        method: 'POST',
        url: `/api/ingest/integrations/${integrationId}/token`,
        headers: admin.headers,
      })
    ).json<{ token: string }>().token;
    const pushed = await on.app.inject({
      method: 'POST',
      url: '/api/ingest/s',
      headers: { authorization: `Bearer ${token}` },
      payload: '{"a":1}\n{"a":2}',
    });
    expect(pushed.statusCode).toBe(200);

    const res = await on.app.inject({ method: 'GET', url: '/metrics' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(res.body).toMatch(/^collector_up\{role="api"\} 1$/m);
    expect(res.body).toContain(`collector_events_in_total{org_id="${orgId}",integration_id="${integrationId}"} 2`);
    expect(res.body).toMatch(/^# TYPE collector_bytes_in_total counter$/m);
  });

  it('is not routed when Prometheus is off, and is never an API operation', async () => {
    expect((await off.app.inject({ method: 'GET', url: '/metrics' })).statusCode).toBe(404);
    const doc = (await on.app.inject({ method: 'GET', url: '/api/openapi.json' })).json<{
      paths: Record<string, unknown>;
    }>();
    expect(doc.paths['/metrics']).toBeUndefined();
  });
});
