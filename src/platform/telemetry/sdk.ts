// The OpenTelemetry SDK half of telemetry. Loaded only through a dynamic import() from
// index.ts when OTLP (OTEL_ENABLED=true with a valid endpoint) or Prometheus
// (WEIR_PROMETHEUS_ENABLED=true) is on, so a disabled process never loads the SDK, starts
// a timer or opens a socket. Both readers observe the same instruments of one MeterProvider.
import { randomUUID } from 'node:crypto';
import {
  context,
  propagation,
  ProxyTracerProvider,
  trace,
  ValueType,
  type Meter,
  type Tracer,
} from '@opentelemetry/api';
import { OTLPMetricExporter } from '@opentelemetry/exporter-metrics-otlp-http';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { defaultResource, resourceFromAttributes, type Resource } from '@opentelemetry/resources';
import { PrometheusExporter, PrometheusSerializer } from '@opentelemetry/exporter-prometheus';
import { MeterProvider, PeriodicExportingMetricReader, type MetricReader } from '@opentelemetry/sdk-metrics';
import {
  BatchSpanProcessor,
  NodeTracerProvider,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
} from '@opentelemetry/sdk-trace-node';
import { ATTR_SERVICE_INSTANCE_ID, ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import type { TelemetryConfig } from './index.js';
import { observeRuntime } from './runtime.js';

/** Resource attribute carrying the process role (api, worker, dispatcher, beat, all). */
export const ROLE_ATTRIBUTE = 'weir.role';
const INSTRUMENTATION_SCOPE = 'weir';
// OTLP's own default per export (retries included); capped by the metric interval so an
// export never outlives its period and exports cannot pile up behind a dead collector.
const EXPORT_TIMEOUT_MS = 10_000;

export interface SdkHandle {
  readonly meter: Meter;
  /** A recording tracer with OTLP; the API's no-op tracer otherwise. */
  readonly tracer: Tracer;
  /** The Prometheus text of every instrument now, when Prometheus is on. */
  readonly scrape: (() => Promise<string>) | undefined;
  /** Flushes and stops both providers; never rejects. */
  shutdown(): Promise<void>;
}

export interface SdkOptions {
  /** OTLP/HTTP collector: metrics and traces pushed to it. */
  otlpEndpoint?: string;
  /** Prometheus reader; with `listen`, it serves /metrics on its own port (roles without the API). */
  prometheus?: { listen?: { host: string; port: number; onError(err: Error): void } };
}

/** `${endpoint}/v1/metrics`, tolerating trailing slashes on the configured endpoint. */
export function signalUrl(endpoint: string, signal: 'metrics' | 'traces'): string {
  return `${endpoint.replace(/\/+$/, '')}/v1/${signal}`;
}

export function startSdk(config: TelemetryConfig, options: SdkOptions, role: string): SdkHandle {
  const resource = defaultResource().merge(
    resourceFromAttributes({
      [ATTR_SERVICE_NAME]: config.serviceName,
      // Several processes of one role report the same series; the instance id keeps their
      // cumulative counters apart at the collector.
      [ATTR_SERVICE_INSTANCE_ID]: randomUUID(),
      [ROLE_ATTRIBUTE]: role,
    }),
  );

  const readers: MetricReader[] = [];
  const endpoint = options.otlpEndpoint;
  if (endpoint) {
    const interval = config.metricExportIntervalMs;
    const metricTimeout = Math.min(EXPORT_TIMEOUT_MS, interval);
    readers.push(
      new PeriodicExportingMetricReader({
        exporter: new OTLPMetricExporter({ url: signalUrl(endpoint, 'metrics'), timeoutMillis: metricTimeout }),
        exportIntervalMillis: interval,
        exportTimeoutMillis: metricTimeout,
      }),
    );
  }
  let prometheus: PrometheusExporter | undefined;
  if (options.prometheus) {
    const listen = options.prometheus.listen;
    // One instrumentation scope ('weir'): its otel_scope_name label on every series would
    // only add noise to the spec's label sets. target_info keeps the resource (role, instance).
    prometheus = listen
      ? new PrometheusExporter(
          { host: listen.host, port: listen.port, withoutScopeInfo: true },
          (err) => err && listen.onError(err),
        )
      : new PrometheusExporter({ preventServerStart: true, withoutScopeInfo: true });
    readers.push(prometheus);
  }
  const meterProvider = new MeterProvider({ resource, readers });
  const tracerProvider = endpoint ? startTracing(config, resource, endpoint) : undefined;

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

  const stopRuntime = observeRuntime(meter);

  let stopping: Promise<void> | undefined;
  return {
    meter,
    tracer: tracerProvider
      ? tracerProvider.getTracer(INSTRUMENTATION_SCOPE)
      : new ProxyTracerProvider().getTracer(INSTRUMENTATION_SCOPE),
    scrape: prometheus ? prometheusText(prometheus) : undefined,
    shutdown() {
      // Detach from the API first and synchronously: a flush that outlives the caller's
      // deadline must not later unregister globals a newer start has set.
      if (!stopping) {
        stopRuntime();
        if (tracerProvider) unregisterGlobals();
        stopping = Promise.all([stopQuietly(meterProvider), tracerProvider && stopQuietly(tracerProvider)]).then(
          () => undefined,
        );
      }
      return stopping;
    },
  };
}

function startTracing(config: TelemetryConfig, resource: Resource, endpoint: string): NodeTracerProvider {
  const tracerProvider = new NodeTracerProvider({
    resource,
    sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(config.tracesSamplerRatio) }),
    spanProcessors: [
      new BatchSpanProcessor(
        new OTLPTraceExporter({ url: signalUrl(endpoint, 'traces'), timeoutMillis: EXPORT_TIMEOUT_MS }),
        {
          exportTimeoutMillis: EXPORT_TIMEOUT_MS,
        },
      ),
    ],
  });
  // Global registration brings the AsyncLocalStorage context manager (active spans follow
  // async work, logs can read them) and the W3C trace-context + baggage propagator that
  // injectTraceContext/extractTraceContext use across the queue boundary.
  tracerProvider.register();
  return tracerProvider;
}

// The exporter's own serializer over a collection made on demand: the same text its HTTP
// handler writes, returned so that the API's listener can answer it as a Fastify reply.
function prometheusText(exporter: PrometheusExporter): () => Promise<string> {
  const serializer = new PrometheusSerializer(undefined, false, undefined, false, true);
  return async () => {
    const { resourceMetrics } = await exporter.collect();
    return serializer.serialize(resourceMetrics);
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
