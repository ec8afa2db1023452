// The data plane's counters reach an OTLP receiver: collector_events_in_total{org_id,
// integration_id} and collector_bytes_in_total on accept, collector_quarantine_total when the
// worker quarantines, exported by the real SDK from a test app with telemetry on.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Consumer } from '../../src/platform/queue/port.js';
import { startConsumers } from '../../src/roles/jobs.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { createOrganization, createPrincipal } from '../support/identity.js';
import { attrs, metricsIn, startReceiver, value, type Receiver } from '../support/otlp.js';

let t: TestApp;
let r: Receiver;
let consumers: Consumer[] = [];

beforeAll(async () => {
  r = await startReceiver();
  t = await createTestApp({
    env: {
      OTEL_ENABLED: 'true',
      OTEL_EXPORTER_OTLP_ENDPOINT: r.url,
      OTEL_METRIC_EXPORT_INTERVAL_MS: '200',
      OTEL_TRACES_SAMPLER_RATIO: '0',
    },
  });
  consumers = startConsumers(
    t.container.queue,
    t.container.jobs.filter((j) => j.role === 'worker'),
    t.container.logger,
  );
});
afterAll(async () => {
  await Promise.all(consumers.map((c) => c.close()));
  await t?.close();
  await r?.close();
});

/** The latest exported data points of a metric, summed per attribute set. */
function latest(name: string): { attributes: Record<string, unknown>; value: number }[] {
  const found = metricsIn(r).filter((m) => m.metric.name === name);
  const last = found[found.length - 1];
  return (last?.metric.sum?.dataPoints ?? []).map((dp) => ({ attributes: attrs(dp.attributes), value: value(dp) }));
}

async function until<T>(probe: () => T | undefined, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error('timed out waiting for the metric');
    await new Promise((res) => setTimeout(res, 100));
  }
}

describe('pipeline metrics over OTLP', () => {
  it('counts events and bytes in per organization and integration, and quarantined events', async () => {
    const orgId = await createOrganization(t, 'Metrics Org');
    const admin = await createPrincipal(t, { role: 'admin', organizationId: orgId });
    const created = await t.app.inject({
      method: 'POST',
      url: '/api/integrations/',
      headers: admin.headers,
      payload: { name: 'push', platform: 'custom', organization_id: orgId },
    });
    const integrationId = created.json<{ id: number }>().id;
    const token = (
      await t.app.inject({
        method: 'POST',
        url: `/api/ingest/integrations/${integrationId}/token`,
        headers: admin.headers,
      })
    ).json<{ token: string }>().token;
    const body = '{"a":1}\n{"a":2}\n{"a":3}';
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/ingest/unmapped-stream',
      headers: { authorization: `Bearer ${token}` },
      payload: body,
    });
    expect(res.statusCode).toBe(200);

    const labels = { org_id: String(orgId), integration_id: String(integrationId) };
    const eventsIn = await until(() =>
      latest('collector_events_in_total').find((p) => p.attributes.integration_id === labels.integration_id),
    );
    expect(eventsIn).toMatchObject({ attributes: labels, value: 3 });
    const bytesIn = await until(() => latest('collector_bytes_in_total')[0]);
    expect(bytesIn.value).toBeGreaterThanOrEqual(21);
    // No mapping exists for the stream: the worker quarantines all three.
    const quarantined = await until(() =>
      latest('collector_quarantine_total').find((p) => p.attributes.integration_id === labels.integration_id),
    );
    expect(quarantined).toMatchObject({ attributes: { ...labels, error_kind: 'no_mapping' }, value: 3 });
  });
});
