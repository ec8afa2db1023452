// The OpenTelemetry SDK half of telemetry. Loaded only through a dynamic import() from
// index.ts when OTEL_ENABLED=true and the endpoint is valid, so a disabled process never
// loads the SDK, starts a timer or opens a socket.
import { randomUUID } from 'node:crypto';
import { context, propagation, trace, ValueType, type Meter, type Tracer } from '@opentelemetry/api';
import { OTLPMetricExporter } from '@opentelemetry/exporter-metrics-otlp-http';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { defaultResource, resourceFromAttributes } from '@opentelemetry/resources';
import { MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import {
  BatchSpanProcessor,
  NodeTracerProvider,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
} from '@opentelemetry/sdk-trace-node';
import { ATTR_SERVICE_INSTANCE_ID, ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import type { TelemetryConfig } from '../../config.js';

/** Resource attribute carrying the process role (api, worker, dispatcher, beat, all). */
export const ROLE_ATTRIBUTE = 'weir.role';
const INSTRUMENTATION_SCOPE = 'weir';
// OTLP's own default per export (retries included); capped by the metric interval so an
// export never outlives its period and exports cannot pile up behind a dead collector.
const EXPORT_TIMEOUT_MS = 10_000;

export interface SdkHandle {
  readonly meter: Meter;
  readonly tracer: Tracer;
  /** Flushes and stops both providers; never rejects. */
  shutdown(): Promise<void>;
}

/** `${endpoint}/v1/metrics`, tolerating trailing slashes on the configured endpoint. */
export function signalUrl(endpoint: string, signal: 'metrics' | 'traces'): string {
  return `${endpoint.replace(/\/+$/, '')}/v1/${signal}`;
}

export function startSdk(config: TelemetryConfig, endpoint: string, role: string): SdkHandle {
  const resource = defaultResource().merge(
    resourceFromAttributes({
      [ATTR_SERVICE_NAME]: config.serviceName,
      // Several processes of one role report the same series; the instance id keeps their
      // cumulative counters apart at the collector.
      [ATTR_SERVICE_INSTANCE_ID]: randomUUID(),
      [ROLE_ATTRIBUTE]: role,
    }),
  );

  const interval = config.metricExportIntervalMs;
  const metricTimeout = Math.min(EXPORT_TIMEOUT_MS, interval);
  const meterProvider = new MeterProvider({
    resource,
    readers: [
      new PeriodicExportingMetricReader({
        exporter: new OTLPMetricExporter({ url: signalUrl(endpoint, 'metrics'), timeoutMillis: metricTimeout }),
        exportIntervalMillis: interval,
        exportTimeoutMillis: metricTimeout,
      }),
    ],
  });

  const tracerProvider = new NodeTracerProvider({
    resource,
    sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(config.tracesSamplerRatio) }),
    spanProcessors: [
      new BatchSpanProcessor(new OTLPTraceExporter({ url: signalUrl(endpoint, 'traces'), timeoutMillis: EXPORT_TIMEOUT_MS }), {
        exportTimeoutMillis: EXPORT_TIMEOUT_MS,
      }),
    ],
  });
  // Global registration brings the AsyncLocalStorage context manager (active spans follow
  // async work, logs can read them) and the W3C trace-context + baggage propagator that
  // injectTraceContext/extractTraceContext use across the queue boundary.
  tracerProvider.register();

  const meter = meterProvider.getMeter(INSTRUMENTATION_SCOPE);
  meter
    .createObservableGauge('collector_up', {
      description: 'Liveness per role: 1 while the process runs; absence means it is down.',
      valueType: ValueType.INT,
    })
    .addCallback((result) => {
      // `weir all` runs every role in one process: each is up, and the spec's series
      // (role = worker, dispatcher, beat) must exist for it too.
      for (const r of role === 'all' ? ['api', 'worker', 'dispatcher', 'beat'] : [role]) result.observe(1, { role: r });
    });

  let stopping: Promise<void> | undefined;
  return {
    meter,
    tracer: tracerProvider.getTracer(INSTRUMENTATION_SCOPE),
    shutdown() {
      // Detach from the API first and synchronously: a flush that outlives the caller's
      // deadline must not later unregister globals a newer start has set.
      if (!stopping) {
        unregisterGlobals();
        stopping = Promise.all([stopQuietly(meterProvider), stopQuietly(tracerProvider)]).then(() => undefined);
      }
      return stopping;
    },
  };
}

interface Provider {
  shutdown(): Promise<void>;
}

// shutdown() is the flush: the metric reader collects and exports once more, the batch span
// processor exports what it holds, then both stop their exporters. A separate forceFlush()
// first would export twice and, behind a dead collector, wait out the retries twice.
// Export failures reject; they are dropped like any other failed export.
async function stopQuietly(provider: Provider): Promise<void> {
  await provider.shutdown().catch(() => undefined);
}

function unregisterGlobals(): void {
  trace.disable();
  propagation.disable();
  context.disable();
}
