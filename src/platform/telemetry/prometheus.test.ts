// Prometheus: the same instruments as the OTLP export, read in the Prometheus text format,
// from the API listener (roles all and api: the scrape function) or an own listener (other roles).
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { trace } from '@opentelemetry/api';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { metricsIn, startReceiver, type Receiver } from '../../../test/support/otlp.js';
import { startTelemetry, type Telemetry, type TelemetryConfig } from './index.js';

const base: TelemetryConfig = {
  enabled: false,
  endpoint: undefined,
  serviceName: 'weir-test',
  metricExportIntervalMs: 200,
  tracesSamplerRatio: 1,
  logsEnabled: false,
  prometheusEnabled: true,
  prometheusPort: 9464,
};

const started: Telemetry[] = [];
const receivers: Receiver[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((t) => t.shutdown()));
  await Promise.all(receivers.splice(0).map((r) => r.close()));
});

async function start(cfg: Partial<TelemetryConfig>, role: string) {
  const lines: { level: number; msg: string }[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(JSON.parse(chunk.toString()) as (typeof lines)[number]);
      done();
    },
  });
  const telemetry = await startTelemetry(
    { ...base, ...cfg },
    { role, logger: pino({ level: 'debug' }, stream), prometheusHost: '127.0.0.1' },
  );
  started.push(telemetry);
  return { telemetry, lines };
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('Prometheus without OTLP', () => {
  it('answers the instruments in the text format, collector_up per role included, and records no traces', async () => {
    const { telemetry, lines } = await start({}, 'api');
    expect(telemetry.enabled).toBe(true);
    expect(telemetry.scrape).toBeTypeOf('function');
    telemetry.meter
      .createCounter('collector_events_in_total', { description: 'Events in' })
      .add(3, { org_id: '1', integration_id: '7' });
    telemetry.meter.createHistogram('test_latency_seconds').record(0.2);

    const text = await telemetry.scrape!();
    expect(text).toContain('# TYPE collector_up gauge');
    expect(text).toMatch(/^collector_up\{role="api"\} 1$/m);
    expect(text).toContain('# HELP collector_events_in_total Events in');
    expect(text).toContain('# TYPE collector_events_in_total counter');
    expect(text).toMatch(/^collector_events_in_total\{org_id="1",integration_id="7"\} 3$/m);
    expect(text).toMatch(/^test_latency_seconds_count 1$/m);

    telemetry.tracer.startActiveSpan('collect.cycle', (span) => {
      expect(span.isRecording()).toBe(false);
      expect(trace.getActiveSpan()).toBeUndefined();
      span.end();
    });
    expect(lines.map((l) => l.msg)).toEqual(['Prometheus metrics enabled']);
  });

  it('serves /metrics on its own port for a role without the API', async () => {
    const port = await freePort();
    const { telemetry } = await start({ prometheusPort: port }, 'dispatcher');
    expect(telemetry.scrape).toBeTypeOf('function');
    telemetry.meter.createCounter('collector_dlq_total').add(2, { destination_id: 'd1', error_kind: 'http_4xx' });
    let res: Response | undefined;
    // The exporter's listener starts asynchronously, just after startTelemetry returns.
    for (let i = 0; i < 50 && !res; i++) {
      res = await fetch(`http://127.0.0.1:${port}/metrics`).catch(async () => {
        await new Promise((r) => setTimeout(r, 20));
        return undefined;
      });
    }
    expect(res?.status).toBe(200);
    const text = await res!.text();
    expect(text).toMatch(/^collector_up\{role="dispatcher"\} 1$/m);
    expect(text).toMatch(/^collector_dlq_total\{destination_id="d1",error_kind="http_4xx"\} 2$/m);
  });

  it('is off by default: no scrape function, nothing loaded', async () => {
    const { telemetry } = await start({ prometheusEnabled: false }, 'api');
    expect(telemetry.enabled).toBe(false);
    expect(telemetry.scrape).toBeUndefined();
  });
});

describe('Prometheus beside OTLP', () => {
  it('reads the same counter the OTLP reader pushes', async () => {
    const r = await startReceiver();
    receivers.push(r);
    const { telemetry } = await start({ enabled: true, endpoint: r.url }, 'worker');
    telemetry.meter.createCounter('collector_quarantine_total').add(5);
    expect(await telemetry.scrape!()).toMatch(/^collector_quarantine_total 5$/m);
    for (let i = 0; i < 100 && !metricsIn(r).some((m) => m.metric.name === 'collector_quarantine_total'); i++) {
      await new Promise((res) => setTimeout(res, 50));
    }
    const pushed = metricsIn(r).find((m) => m.metric.name === 'collector_quarantine_total');
    expect(pushed?.metric.sum?.dataPoints[0]?.asInt ?? pushed?.metric.sum?.dataPoints[0]?.asDouble).toBe(5);
  });
});
