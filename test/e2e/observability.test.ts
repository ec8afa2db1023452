// What an operator's Prometheus and trace backend read from a whole Weir (docs/observability.md):
// one app with OTLP export and /metrics on, its worker consumers and delivery lanes running,
// an Okta integration routed to an HTTP destination that fails once and then accepts. /metrics
// (the real endpoint) names a destination `destination_id` on every series, carries the
// process and runtime metrics and the HTTP request histogram by route template; the trace
// exported over OTLP goes ingest.accept -> normalize.batch -> pass -> pass.<stage>, and one
// deliver span per attempt under the batch, with the destination, events and outcome.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Consumer } from '../../src/platform/queue/port.js';
import { createTestApp, startWorkerConsumers, type TestApp } from '../support/app.js';
import { createDestination, createRoute, seqOf, waitFor } from '../support/delivery-api.js';
import { createOrganization, createPrincipal, type Principal } from '../support/identity.js';
import { http, oktaIntegration, pushOkta } from '../support/ingest.js';
import { attrs, startReceiver, type KeyValue, type Receiver } from '../support/otlp.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

interface Span {
  name: string;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  attributes: KeyValue[];
  startTimeUnixNano: string;
  endTimeUnixNano: string;
}

let t: TestApp;
let base: string;
let otlp: Receiver;
let hook: WebhookReceiver;
let admin: Principal;
let orgId: number;
let integrationId: number;
let destinationId: string;
const consumers: Consumer[] = [];
const loops: { stop(): Promise<void> }[] = [];

beforeAll(async () => {
  otlp = await startReceiver();
  hook = await startWebhookReceiver({ keyOf: (event) => seqOf(event), faults: { ratio: 1, modes: ['5xx'] } });
  t = await createTestApp({
    env: {
      OTEL_ENABLED: 'true',
      OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
      OTEL_METRIC_EXPORT_INTERVAL_MS: '60000',
      WEIR_PROMETHEUS_ENABLED: 'true',
      WEIR_DISPATCH_POLL_MS: '20',
    },
  });
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  orgId = await createOrganization(t, 'Observed');
  admin = await createPrincipal(t, { role: 'admin', organizationId: orgId });
  consumers.push(...startWorkerConsumers(t));
  loops.push(...t.container.loops.map((l) => l.start()));
}, 60_000);

afterAll(async () => {
  await Promise.all(loops.map((l) => l.stop()));
  await Promise.all(consumers.map((c) => c.close()));
  await hook?.close();
  await t?.close();
  await otlp?.close();
});

async function scrape(): Promise<string> {
  const res = await fetch(`${base}/metrics`);
  expect(res.status).toBe(200);
  return res.text();
}

/** Label names of each series of a metric, in the scrape's text. */
function labelSets(text: string, metric: string): string[][] {
  const re = new RegExp(`^${metric}\\{([^}]*)\\} `, 'gm');
  return [...text.matchAll(re)].map((m) => [...m[1]!.matchAll(/(\w+)="/g)].map((l) => l[1]!));
}

function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('an Okta batch through a whole Weir', () => {
  it('pushes, fails once at the destination, then delivers', async () => {
    const integration = await oktaIntegration(base, admin.headers, orgId, 'observed okta');
    integrationId = integration.id;
    destinationId = await createDestination(base, admin.headers, {
      name: 'observed hook',
      type: 'http',
      organization_id: orgId,
      config: { url: hook.url },
      delivery: {
        max_wait_ms: 0,
        backoff_base_ms: 50,
        backoff_max_ms: 100,
        breaker_threshold: 1000,
        max_attempts: 100,
      },
    });
    await createRoute(base, admin.headers, {
      name: 'observed',
      organization_id: orgId,
      destination_ids: [destinationId],
      condition: { field: 'envelope.integration_id', op: 'eq', value: integrationId },
      final: false,
    });
    expect((await pushOkta(base, integration.token, 'obs', 3)).status).toBe(200);
    const failed = `collector_dispatch_failures_total{destination_id="${destinationId}",error_kind="http_5xx"}`;
    await waitFor('a failed attempt', async () => sample(await scrape(), failed), 30_000);
    hook.setFaults(null);
    const sent = `collector_events_sent_total{destination_id="${destinationId}",kind="primary"}`;
    expect(await waitFor('the delivery', async () => sample(await scrape(), sent), 30_000)).toBe(3);
  }, 70_000);

  it('/metrics labels destinations destination_id, organizations org_id, integrations integration_id', async () => {
    const text = await scrape();
    expect(text).not.toMatch(/[{,]target="/);
    expect(labelSets(text, 'collector_events_in_total')).toContainEqual(['org_id', 'integration_id']);
    expect(labelSets(text, 'collector_events_sent_total')).toContainEqual(['destination_id', 'kind']);
    expect(labelSets(text, 'collector_dispatch_failures_total')).toContainEqual(['destination_id', 'error_kind']);
    expect(labelSets(text, 'collector_destination_breaker_state')).toContainEqual(['destination_id']);
    expect(labelSets(text, 'weir_destination_backlog_events')).toContainEqual(['destination_id']);
    expect(text).toContain(`collector_events_in_total{org_id="${orgId}",integration_id="${integrationId}"} 3`);
  });

  it('/metrics carries the process and runtime metrics', async () => {
    const text = await scrape();
    expect(text).toMatch(/^# TYPE process_cpu_seconds_total counter$/m);
    expect(sample(text, 'process_cpu_seconds_total')).toBeGreaterThan(0);
    expect(sample(text, 'process_resident_memory_bytes')).toBeGreaterThan(10_000_000);
    const start = sample(text, 'process_start_time_seconds')!;
    expect(Math.abs(start - (Date.now() / 1000 - process.uptime()))).toBeLessThan(5);
    expect(sample(text, 'process_open_fds')).toBeGreaterThan(0);
    expect(sample(text, 'nodejs_heap_size_used_bytes')).toBeGreaterThan(0);
    expect(sample(text, 'nodejs_eventloop_lag_seconds')).toBeGreaterThanOrEqual(0);
    const utilization = sample(text, 'nodejs_eventloop_utilization_ratio')!;
    expect(utilization).toBeGreaterThan(0);
    expect(utilization).toBeLessThanOrEqual(1);
  });

  it('/metrics has the request duration by method, route template and status code', async () => {
    expect((await http(base, 'GET', '/api/no/such/thing')).status).toBe(404);
    const text = await scrape();
    const series = 'http_server_request_duration_seconds_count';
    expect(sample(text, `${series}{method="POST",route="/api/ingest/:stream",status_code="200"}`)).toBe(1);
    expect(sample(text, `${series}{method="GET",status_code="404"}`)).toBeGreaterThanOrEqual(1);
    expect(text).toMatch(
      /^http_server_request_duration_seconds_bucket\{method="GET",route="\/metrics",.*le="0\.005"\}/m,
    );
    // The route label is the template: no stream name, id or query string in it.
    for (const route of text.matchAll(/route="([^"]*)"/g)) expect(route[1]).not.toMatch(/system_log|\?|\/\d+(\/|$)/);
  });

  it('exports one trace: accept, normalize, the pass and its stages, each delivery attempt', async () => {
    const spans = () =>
      otlp.posts
        .filter((p) => p.path === '/v1/traces')
        .flatMap((p) => (p.body.resourceSpans ?? []) as unknown as { scopeSpans: { spans: Span[] }[] }[])
        .flatMap((rs) => rs.scopeSpans.flatMap((ss) => ss.spans));
    const delivered = (s: Span) => s.name === 'deliver' && attrs(s.attributes)['weir.outcome'] === 'delivered';
    // The batch span processor exports every 5 s.
    await waitFor('the exported spans', async () => spans().find(delivered), 20_000);
    const all = spans();
    const accept = all.find((s) => s.name === 'ingest.accept')!;
    expect(accept.parentSpanId ?? '').toBe('');
    expect(attrs(accept.attributes)).toMatchObject({
      'weir.stream': 'system_log',
      'weir.events': 3,
      'weir.batches': 1,
    });
    const inTrace = all.filter((s) => s.traceId === accept.traceId);
    const one = (name: string, parent: Span) => {
      const found = inTrace.filter((s) => s.name === name && s.parentSpanId === parent.spanId);
      expect(found, name).toHaveLength(1);
      return found[0]!;
    };
    const normalize = one('normalize.batch', accept);
    const pass = one('pass', normalize);
    expect(attrs(pass.attributes)).toMatchObject({ 'weir.events': 3, 'weir.normalized': 3, 'weir.deliveries': 1 });
    const stages = inTrace
      .filter((s) => s.parentSpanId === pass.spanId)
      .sort((a, b) => Number(BigInt(a.startTimeUnixNano) - BigInt(b.startTimeUnixNano)));
    expect(stages.map((s) => s.name)).toEqual([
      'pass.decode',
      'pass.map',
      'pass.serialize',
      'pass.route',
      'pass.transform',
      // Okta's built-in vendor findings: the organization's detection runs in the pass.
      'pass.detect',
      'pass.encode',
    ]);
    for (const s of stages) {
      expect(BigInt(s.startTimeUnixNano) >= BigInt(pass.startTimeUnixNano)).toBe(true);
      expect(BigInt(s.endTimeUnixNano) <= BigInt(pass.endTimeUnixNano)).toBe(true);
    }
    const attempts = inTrace.filter((s) => s.name === 'deliver');
    for (const a of attempts) expect(a.parentSpanId).toBe(normalize.spanId);
    const outcomes = attempts.map((a) => attrs(a.attributes));
    expect(outcomes).toContainEqual(
      expect.objectContaining({
        'weir.destination_id': destinationId,
        'weir.destination_type': 'http',
        'weir.events': 3,
        'weir.outcome': 'failed',
        'weir.error_kind': 'http_5xx',
      }),
    );
    expect(outcomes).toContainEqual(
      expect.objectContaining({ 'weir.destination_id': destinationId, 'weir.events': 3, 'weir.outcome': 'delivered' }),
    );
  }, 30_000);
});
