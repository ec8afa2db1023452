import type { TelemetryConfig } from '../platform/telemetry/index.js';
import { bool, int, optional, ratio, str, type Env } from './env.js';

export function telemetry(env: Env): Readonly<TelemetryConfig> {
  return Object.freeze({
    enabled: bool(env, 'OTEL_ENABLED', false),
    // Validated when telemetry starts: a value without a scheme disables telemetry with
    // a warning instead of stopping the process (spec, Telemetry configuration).
    endpoint: optional(env, 'OTEL_EXPORTER_OTLP_ENDPOINT'),
    serviceName: str(env, 'OTEL_SERVICE_NAME', 'service-collector'),
    metricExportIntervalMs: int(env, 'OTEL_METRIC_EXPORT_INTERVAL_MS', 60_000, 100, 86_400_000),
    tracesSamplerRatio: ratio(env, 'OTEL_TRACES_SAMPLER_RATIO', 1.0),
    logsEnabled: bool(env, 'OTEL_LOGS_ENABLED', false),
    prometheusEnabled: bool(env, 'WEIR_PROMETHEUS_ENABLED', false),
    prometheusPort: int(env, 'WEIR_PROMETHEUS_PORT', 9464, 1, 65535),
  });
}
