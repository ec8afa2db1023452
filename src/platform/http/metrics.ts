// GET /metrics: the Prometheus text format of the process's instruments, the same ones the
// OTLP reader pushes. Outside /api (a scrape target, not an API operation) and only when
// WEIR_PROMETHEUS_ENABLED=true; public like the health probes, so keep it off the public
// address (docs: README, Prometheus).
import { Type } from 'typebox';
import { route, type Api } from './routes.js';

export const METRICS_PATH = '/metrics';
const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

export function metricsRoute(scrape: () => Promise<string>): (app: Api) => void {
  return (app) =>
    route(app, {
      method: 'GET',
      url: METRICS_PATH,
      operationId: 'telemetry.metrics',
      summary: 'Prometheus text format of every instrument (when WEIR_PROMETHEUS_ENABLED=true)',
      access: { requires: 'public' },
      hidden: true,
      schema: { response: { 200: Type.String() } },
      handler: async (_req, reply) => {
        reply.type(PROMETHEUS_CONTENT_TYPE);
        return scrape();
      },
    });
}
