// OpenTelemetry for every role: metrics and traces pushed over OTLP/HTTP (spec, "Events"),
// and the same instruments scraped in the Prometheus text format at /metrics. Both opt-in:
// with both off nothing but @opentelemetry/api is loaded and every signal is the API's
// no-op. A dead collector only loses telemetry, never the process.
import {
  context,
  createNoopMeter,
  isSpanContextValid,
  propagation,
  ProxyTracerProvider,
  SpanStatusCode,
  trace,
  type Context,
  type Meter,
  type Span,
  type SpanOptions,
  type Tracer,
} from '@opentelemetry/api';
import type { Logger } from 'pino';
import type { SdkHandle } from './sdk.js';

/** The telemetry settings (OTEL_* and WEIR_PROMETHEUS_*: src/config/telemetry.ts reads them). */
export interface TelemetryConfig {
  enabled: boolean;
  endpoint: string | undefined;
  serviceName: string;
  metricExportIntervalMs: number;
  tracesSamplerRatio: number;
  logsEnabled: boolean;
  /** Prometheus text format at /metrics (the API listener; other roles listen on prometheusPort). */
  prometheusEnabled: boolean;
  prometheusPort: number;
}

export interface Telemetry {
  readonly enabled: boolean;
  /** @opentelemetry/api Meter; the API's no-op meter when disabled. */
  readonly meter: Meter;
  /** No-op when disabled. */
  readonly tracer: Tracer;
  /** The Prometheus text of every instrument, when WEIR_PROMETHEUS_ENABLED=true (served at /metrics). */
  readonly scrape: (() => Promise<string>) | undefined;
  /** pino `mixin`: trace_id and span_id of the active span (empty object when none/disabled). */
  logMixin(): Record<string, string>;
  /** Flush and stop exporters, bounded by a timeout; safe to call twice. */
  shutdown(): Promise<void>;
}

export interface TelemetryOptions {
  /** The process role (all, api, worker, dispatcher, beat, syslog). */
  role: string;
  logger: Logger;
  /** Address of the own /metrics listener of roles without the API (HOST). */
  prometheusHost?: string;
  /** Upper bound of shutdown() so SIGTERM handling cannot hang on a dead collector. */
  shutdownTimeoutMs?: number;
}

export const ENDPOINT_VARIABLE = 'OTEL_EXPORTER_OTLP_ENDPOINT';
/** Roles that serve /metrics on the API listener; the others listen on WEIR_PROMETHEUS_PORT. */
const API_ROLES: readonly string[] = ['all', 'api'];
const DEFAULT_SHUTDOWN_TIMEOUT_MS = 5_000;
const INSTRUMENTATION_SCOPE = 'weir';

let sdkImported = false;

/** True once the SDK half (./sdk.js) has been imported in this process. */
export function sdkLoaded(): boolean {
  return sdkImported;
}

/**
 * trace_id/span_id of the active span, for pino's `mixin`. Usable before telemetry starts
 * (the logger exists first): without a registered SDK there is never an active span.
 * Always a fresh object: pino merges the line's fields into what a mixin returns.
 */
export function traceLogMixin(): Record<string, string> {
  const span = trace.getActiveSpan();
  if (!span) return {};
  const sc = span.spanContext();
  return isSpanContextValid(sc) ? { trace_id: sc.traceId, span_id: sc.spanId } : {};
}

/** Writes traceparent (and baggage) of the active context into a queue job's carrier. */
export function injectTraceContext(
  carrier: Record<string, string>,
  ctx: Context = context.active(),
): Record<string, string> {
  propagation.inject(ctx, carrier);
  return carrier;
}

/** The context a job's carrier continues; run the job's span under it. */
export function extractTraceContext(
  carrier: Record<string, string> | undefined,
  ctx: Context = context.active(),
): Context {
  return carrier ? propagation.extract(ctx, carrier) : ctx;
}

/**
 * Runs `fn` in an active span named `name` (under `parent`, else the active context): an
 * exception it throws is recorded on the span, with status ERROR, and thrown on; the span
 * ends when `fn` settles.
 */
export function inSpan<T>(
  tracer: Tracer,
  name: string,
  options: SpanOptions,
  fn: (span: Span) => Promise<T>,
  parent: Context = context.active(),
): Promise<T> {
  return tracer.startActiveSpan(name, options, parent, async (span) => {
    try {
      return await fn(span);
    } catch (err) {
      span.recordException(err as Error);
      span.setStatus({ code: SpanStatusCode.ERROR });
      throw err;
    } finally {
      span.end();
    }
  });
}

/** Telemetry that does nothing: the API's no-op meter, a tracer that never records. */
export function disabledTelemetry(): Telemetry {
  return {
    enabled: false,
    meter: createNoopMeter(),
    // A private proxy provider never gets a delegate, so this tracer stays a no-op even
    // if some other code registers a global SDK later.
    tracer: new ProxyTracerProvider().getTracer(INSTRUMENTATION_SCOPE),
    scrape: undefined,
    logMixin: () => ({}),
    shutdown: () => Promise.resolve(),
  };
}

/** The endpoint when it is an absolute http(s) URL, otherwise undefined. */
export function validEndpoint(endpoint: string | undefined): string | undefined {
  const value = endpoint?.trim();
  if (!value) return undefined;
  try {
    const { protocol } = new URL(value);
    return protocol === 'http:' || protocol === 'https:' ? value : undefined;
  } catch {
    return undefined;
  }
}

export async function startTelemetry(config: TelemetryConfig, options: TelemetryOptions): Promise<Telemetry> {
  const log = options.logger;
  const role = String(options.role);
  const endpoint = config.enabled ? validEndpoint(config.endpoint) : undefined;
  if (config.enabled && !endpoint) {
    // The value is not logged: a malformed URL may still carry credentials.
    log.warn(
      { variable: ENDPOINT_VARIABLE },
      `${ENDPOINT_VARIABLE} must be an absolute http:// or https:// URL when OTEL_ENABLED=true; OTLP export is disabled for this process`,
    );
  }
  // `weir migrate` exits at once: nothing to scrape.
  const prometheus = config.prometheusEnabled && role !== 'migrate';
  if (!endpoint && !prometheus) return disabledTelemetry();

  let sdk: SdkHandle;
  try {
    const { startSdk } = await import('./sdk.js');
    sdkImported = true;
    const listen = API_ROLES.includes(role)
      ? undefined
      : {
          host: options.prometheusHost ?? '127.0.0.1',
          port: config.prometheusPort,
          onError: (err: Error) =>
            log.error({ err, port: config.prometheusPort }, 'the Prometheus /metrics listener did not start'),
        };
    sdk = startSdk(
      config,
      { ...(endpoint ? { otlpEndpoint: endpoint } : {}), ...(prometheus ? { prometheus: { listen } } : {}) },
      role,
    );
  } catch (err) {
    log.warn({ err }, 'OpenTelemetry SDK failed to start; telemetry is disabled for this process');
    return disabledTelemetry();
  }
  if (endpoint) {
    log.info(
      { endpoint: new URL(endpoint).origin, serviceName: config.serviceName, role },
      'telemetry enabled (OTLP/HTTP metrics and traces)',
    );
  }
  if (prometheus) {
    log.info(
      API_ROLES.includes(role) ? { path: '/metrics' } : { port: config.prometheusPort, path: '/metrics' },
      'Prometheus metrics enabled',
    );
  }
  if (config.logsEnabled && endpoint) {
    // Not built yet: log lines carry trace_id/span_id (traceLogMixin) but stay on stdout.
    log.warn(
      'OTEL_LOGS_ENABLED=true: this version does not export logs over OTLP; log lines stay on stdout and carry trace_id and span_id',
    );
  }

  const timeoutMs = options.shutdownTimeoutMs ?? DEFAULT_SHUTDOWN_TIMEOUT_MS;
  let stopped: Promise<void> | undefined;
  return {
    enabled: true,
    meter: sdk.meter,
    tracer: sdk.tracer,
    scrape: sdk.scrape,
    logMixin: traceLogMixin,
    shutdown() {
      stopped ??= withTimeout(sdk.shutdown(), timeoutMs).then((finished) => {
        if (!finished) log.warn({ timeoutMs }, 'telemetry flush did not finish in time; the rest is dropped');
      });
      return stopped;
    },
  };
}

/** Resolves true when `work` settles within `ms`, false otherwise; never rejects. */
function withTimeout(work: Promise<void>, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    timer.unref();
    work.then(
      () => {
        clearTimeout(timer);
        resolve(true);
      },
      () => {
        clearTimeout(timer);
        resolve(true);
      },
    );
  });
}
