// http_server_request_duration_seconds: one histogram of every answered request, labelled by
// method, route and status code. The route is Fastify's route template
// (`/api/integrations/:id`), never the URL: a label per id or query string would make the
// series unbounded. A request no route matched (404) has no route label; a method Fastify
// does not know is counted as `_OTHER` (OpenTelemetry's HTTP semantic conventions do both).
import { ValueType, type Meter } from '@opentelemetry/api';
import type { FastifyInstance } from 'fastify';

export const HTTP_DURATION_METRIC = 'http_server_request_duration_seconds';
// The bucket boundaries OpenTelemetry's HTTP semantic conventions advise for this histogram.
const BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10];
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'CONNECT', 'TRACE']);

export function httpServerMetrics(app: FastifyInstance, meter: Meter): void {
  const duration = meter.createHistogram(HTTP_DURATION_METRIC, {
    description: 'Duration of HTTP requests, by method, route template and status code',
    unit: 's',
    valueType: ValueType.DOUBLE,
    advice: { explicitBucketBoundaries: BUCKETS },
  });
  app.addHook('onResponse', (request, reply, done) => {
    const route = request.is404 ? undefined : request.routeOptions.url;
    const method = METHODS.has(request.method) ? request.method : '_OTHER';
    duration.record(
      reply.elapsedTime / 1000,
      route === undefined
        ? { method, status_code: reply.statusCode }
        : { method, route, status_code: reply.statusCode },
    );
    done();
  });
}
