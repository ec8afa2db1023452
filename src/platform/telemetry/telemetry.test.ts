import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { createNoopMeter, trace } from '@opentelemetry/api';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { attrs, metricsIn, spansIn, startReceiver, value, type Receiver } from '../../../test/support/otlp.js';
import {
  extractTraceContext,
  injectTraceContext,
  sdkLoaded,
  startTelemetry,
  validEndpoint,
  type Telemetry,
  type TelemetryConfig,
  type TelemetryOptions,
} from './index.js';

/** A port with nothing listening: bound, read, closed. */
async function deadPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

function capturedLogger(options: pino.LoggerOptions = {}) {
  const lines: { level: number; msg: string; [k: string]: unknown }[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(JSON.parse(chunk.toString()) as (typeof lines)[number]);
      done();
    },
  });
  return { logger: pino({ level: 'debug', ...options }, stream), lines };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
async function waitFor<T>(probe: () => T | undefined, timeoutMs = 5_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = probe();
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error('timed out waiting for telemetry');
    await sleep(50);
  }
}

// Whether a CommonJS SDK package has been loaded into this process at all.
const sdkPackageLoaded = () =>
  Object.keys(createRequire(import.meta.url).cache).some((p) => p.includes('@opentelemetry/sdk-metrics'));

function config(overrides: Partial<TelemetryConfig>): TelemetryConfig {
  return {
    enabled: true,
    endpoint: undefined,
    serviceName: 'weir-test',
    metricExportIntervalMs: 200,
    tracesSamplerRatio: 1,
    logsEnabled: false,
    prometheusEnabled: false,
    prometheusPort: 9464,
    ...overrides,
  };
}

const started: Telemetry[] = [];
const receivers: Receiver[] = [];
async function start(cfg: TelemetryConfig, options: Partial<TelemetryOptions> = {}) {
  const log = capturedLogger();
  const telemetry = await startTelemetry(cfg, { role: 'worker', logger: log.logger, ...options });
  started.push(telemetry);
  return { telemetry, lines: log.lines };
}
async function receiver() {
  const r = await startReceiver();
  receivers.push(r);
  return r;
}

afterEach(async () => {
  await Promise.all(started.splice(0).map((t) => t.shutdown()));
  await Promise.all(receivers.splice(0).map((r) => r.close()));
});

// Declared first on purpose: it checks that nothing in this process has loaded the SDK yet.
describe('disabled (OTEL_ENABLED=false)', () => {
  it('is a complete no-op: API no-ops, no SDK import, nothing sent', async () => {
    const r = await receiver();
    const { telemetry, lines } = await start(config({ enabled: false, endpoint: r.url }));

    expect(telemetry.enabled).toBe(false);
    expect(telemetry.meter).toBe(createNoopMeter());
    telemetry.meter.createCounter('ignored_total').add(1);
    telemetry.tracer.startActiveSpan('ignored', (span) => {
      expect(span.isRecording()).toBe(false);
      expect(trace.isSpanContextValid(span.spanContext())).toBe(false);
      expect(telemetry.logMixin()).toEqual({});
      expect(injectTraceContext({})).toEqual({});
      span.end();
    });
    await sleep(1_000);
    await telemetry.shutdown();

    expect(r.posts).toEqual([]);
    expect(lines).toEqual([]);
    expect(sdkLoaded()).toBe(false);
    expect(sdkPackageLoaded()).toBe(false);
  });
});

describe('enabled with a reachable collector', () => {
  it('pushes collector_up{role}, resource service.name and counters to /v1/metrics', async () => {
    const r = await receiver();
    // Trailing slash on purpose: the exporter must still post to /v1/metrics.
    const { telemetry } = await start(config({ endpoint: `${r.url}/` }));
    expect(telemetry.enabled).toBe(true);
    expect(sdkLoaded()).toBe(true);
    expect(sdkPackageLoaded()).toBe(true); // the probe used by the disabled test does see the SDK
    telemetry.meter.createCounter('test_events_in_total').add(3, { integration_id: 'i1' });

    const up = await waitFor(() => metricsIn(r).find((m) => m.metric.name === 'collector_up'));
    const dp = up.metric.gauge?.dataPoints[0];
    expect(dp && attrs(dp.attributes)).toEqual({ role: 'worker' });
    expect(dp && value(dp)).toBe(1);
    expect(up.resource['service.name']).toBe('weir-test');
    expect(up.resource['weir.role']).toBe('worker');

    const counter = await waitFor(() => metricsIn(r).find((m) => m.metric.name === 'test_events_in_total'));
    const cdp = counter.metric.sum?.dataPoints[0];
    expect(cdp && value(cdp)).toBe(3);
    expect(cdp && attrs(cdp.attributes)).toEqual({ integration_id: 'i1' });
    expect(new Set(r.posts.map((p) => p.path))).toEqual(new Set(['/v1/metrics']));
  });

  it('exports a sampled span to /v1/traces and puts its ids in log lines', async () => {
    const r = await receiver();
    const { telemetry } = await start(config({ endpoint: r.url }));
    const { logger: log, lines } = capturedLogger({ mixin: () => telemetry.logMixin() });

    const ids = telemetry.tracer.startActiveSpan('collect.cycle', (span) => {
      const { traceId, spanId } = span.spanContext();
      expect(telemetry.logMixin()).toEqual({ trace_id: traceId, span_id: spanId });
      log.info('inside the span');
      span.end();
      return { traceId, spanId };
    });
    log.info('outside any span');
    expect(telemetry.logMixin()).toEqual({});
    await telemetry.shutdown(); // flushes the batch span processor

    const spans = spansIn(r);
    expect(spans).toHaveLength(1);
    expect(spans[0]).toMatchObject({ name: 'collect.cycle', traceId: ids.traceId, spanId: ids.spanId });
    expect(lines[0]).toMatchObject({ msg: 'inside the span', trace_id: ids.traceId, span_id: ids.spanId });
    expect(lines[1]).not.toHaveProperty('trace_id');
  });

  it('sends no spans with sampler ratio 0', async () => {
    const r = await receiver();
    const { telemetry } = await start(config({ endpoint: r.url, tracesSamplerRatio: 0 }));
    telemetry.tracer.startActiveSpan('collect.cycle', (span) => {
      expect(span.isRecording()).toBe(false);
      span.end();
    });
    await telemetry.shutdown();
    await sleep(300);
    expect(spansIn(r)).toEqual([]);
    expect(r.posts.some((p) => p.path === '/v1/metrics')).toBe(true); // the exporter did run
  });

  it('carries W3C traceparent across a queue boundary', async () => {
    const r = await receiver();
    const { telemetry } = await start(config({ endpoint: r.url }));
    const carrier: Record<string, string> = {};
    const parent = telemetry.tracer.startActiveSpan('collect.cycle', (span) => {
      injectTraceContext(carrier);
      span.end();
      return span.spanContext();
    });
    expect(carrier.traceparent).toBe(`00-${parent.traceId}-${parent.spanId}-01`);

    const child = telemetry.tracer.startSpan('dispatch.deliver', {}, extractTraceContext(carrier));
    expect(child.spanContext().traceId).toBe(parent.traceId);
    child.end();
  });
});

describe('enabled with an unusable endpoint', () => {
  it.each([
    ['without a scheme', 'collector:4318'],
    ['with another scheme', 'grpc://collector:4317'],
    ['empty', ''],
    ['missing', undefined],
  ])('disables itself with one warning naming the variable (%s)', async (_case, endpoint) => {
    const { telemetry, lines } = await start(config({ endpoint }));
    expect(telemetry.enabled).toBe(false);
    expect(telemetry.meter).toBe(createNoopMeter());
    const warnings = lines.filter((l) => l.level === 40);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]?.msg).toContain('OTEL_EXPORTER_OTLP_ENDPOINT');
    expect(lines).toHaveLength(1);
  });

  it('accepts only absolute http(s) URLs', () => {
    expect(validEndpoint('http://collector:4318')).toBe('http://collector:4318');
    expect(validEndpoint(' https://otel.example.com/otlp/ ')).toBe('https://otel.example.com/otlp/');
    expect(validEndpoint('localhost:4318')).toBeUndefined();
    expect(validEndpoint('/v1/metrics')).toBeUndefined();
  });
});

describe('enabled with the collector down', () => {
  it('drops telemetry silently and shuts down within its timeout', async () => {
    const rejections: unknown[] = [];
    const onRejection = (reason: unknown) => rejections.push(reason);
    process.on('unhandledRejection', onRejection);
    try {
      const endpoint = `http://127.0.0.1:${await deadPort()}`;
      const { telemetry, lines } = await start(config({ endpoint }), { shutdownTimeoutMs: 1_000 });
      expect(telemetry.enabled).toBe(true);
      telemetry.meter.createCounter('test_events_in_total').add(1);
      telemetry.meter.createHistogram('test_latency_seconds').record(0.2);
      telemetry.tracer.startSpan('collect.cycle').end();
      await sleep(700); // several failed metric exports

      const t0 = Date.now();
      await expect(telemetry.shutdown()).resolves.toBeUndefined();
      await expect(telemetry.shutdown()).resolves.toBeUndefined();
      expect(Date.now() - t0).toBeLessThan(1_500);
      expect(lines.filter((l) => l.level >= 50)).toEqual([]);
      expect(lines.filter((l) => l.level === 40).length).toBeLessThanOrEqual(1);
      expect(rejections).toEqual([]);
    } finally {
      process.off('unhandledRejection', onRejection);
    }
  });
});
