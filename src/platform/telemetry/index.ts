// OpenTelemetry for every role: metrics and traces pushed over OTLP/HTTP (spec, "Events").
// Opt-in: with OTEL_ENABLED=false nothing but @opentelemetry/api is loaded and every
// signal is the API's no-op. A dead collector only loses telemetry, never the process.
import {
  context,
  createNoopMeter,
  isSpanContextValid,
  propagation,
  ProxyTracerProvider,
  trace,
  type Context,
  type Meter,
  type Tracer,
} from '@opentelemetry/api';
import type { Logger } from 'pino';
import type { Role, TelemetryConfig } from '../../config.js';
import type { SdkHandle } from './sdk.js';

export interface Telemetry {
  readonly enabled: boolean;
  /** @opentelemetry/api Meter; the API's no-op meter when disabled. */
  readonly meter: Meter;
  /** No-op when disabled. */
  readonly tracer: Tracer;
  /** pino `mixin`: trace_id and span_id of the active span (empty object when none/disabled). */
  logMixin(): Record<string, string>;
  /** Flush and stop exporters, bounded by a timeout; safe to call twice. */
  shutdown(): Promise<void>;
}

export interface TelemetryOptions {
  role: Role | string;
  logger: Logger;
  /** Upper bound of shutdown() so SIGTERM handling cannot hang on a dead collector. */
  shutdownTimeoutMs?: number;
}

export const ENDPOINT_VARIABLE = 'OTEL_EXPORTER_OTLP_ENDPOINT';
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
export function injectTraceContext(carrier: Record<string, string>, ctx: Context = context.active()): Record<string, string> {
  propagation.inject(ctx, carrier);
  return carrier;
}

/** The context a job's carrier continues; run the job's span under it. */
export function extractTraceContext(carrier: Record<string, string> | undefined, ctx: Context = context.active()): Context {
  return carrier ? propagation.extract(ctx, carrier) : ctx;
}

/** Telemetry that does nothing: the API's no-op meter, a tracer that never records. */
export function disabledTelemetry(): Telemetry {
  return {
    enabled: false,
    meter: createNoopMeter(),
    // A private proxy provider never gets a delegate, so this tracer stays a no-op even
    // if some other code registers a global SDK later.
    tracer: new ProxyTracerProvider().getTracer(INSTRUMENTATION_SCOPE),
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
  if (!config.enabled) return disabledTelemetry();
  const log = options.logger;
  const endpoint = validEndpoint(config.endpoint);
  if (!endpoint) {
    // The value is not logged: a malformed URL may still carry credentials.
    log.warn(
      { variable: ENDPOINT_VARIABLE },
      `${ENDPOINT_VARIABLE} must be an absolute http:// or https:// URL when OTEL_ENABLED=true; telemetry is disabled for this process`,
    );
    return disabledTelemetry();
  }

  let sdk: SdkHandle;
  try {
    const { startSdk } = await import('./sdk.js');
    sdkImported = true;
    sdk = startSdk(config, endpoint, String(options.role));
  } catch (err) {
    log.warn({ err }, 'OpenTelemetry SDK failed to start; telemetry is disabled for this process');
    return disabledTelemetry();
  }
  log.info(
    { endpoint: new URL(endpoint).origin, serviceName: config.serviceName, role: options.role },
    'telemetry enabled (OTLP/HTTP metrics and traces)',
  );
  if (config.logsEnabled) {
    // Not built yet: log lines carry trace_id/span_id (traceLogMixin) but stay on stdout.
    log.warn('OTEL_LOGS_ENABLED=true: this version does not export logs over OTLP; log lines stay on stdout and carry trace_id and span_id');
  }

  const timeoutMs = options.shutdownTimeoutMs ?? DEFAULT_SHUTDOWN_TIMEOUT_MS;
  let stopped: Promise<void> | undefined;
  return {
    enabled: true,
    meter: sdk.meter,
    tracer: sdk.tracer,
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
