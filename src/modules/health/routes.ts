import { AppError } from '../../core/errors.js';
import { route, type Api } from '../../platform/http/routes.js';
import { Alive, NotReady, Ready } from './schema.js';
import type { HealthService } from './service.js';

export function healthRoutes(app: Api, service: HealthService): void {
  route(app, {
    method: 'GET',
    url: '/livez',
    operationId: 'health.livez',
    summary: 'The process is up',
    access: { requires: 'public' },
    schema: { response: { 200: Alive } },
    handler: async () => ({ status: 'ok' as const }),
  });

  route(app, {
    method: 'GET',
    url: '/healthz',
    operationId: 'health.healthz',
    summary: 'Liveness',
    access: { requires: 'public' },
    schema: { response: { 200: Alive } },
    handler: async () => ({ status: 'ok' as const }),
  });

  route(app, {
    method: 'GET',
    url: '/readyz',
    operationId: 'health.readyz',
    summary: 'Readiness of the database and the cache; 503 names the dependency that is down',
    access: { requires: 'public' },
    schema: { response: { 200: Ready, 503: NotReady } },
    handler: async () => {
      const r = await service.readiness();
      if (!r.ready) {
        throw new AppError('dependency.unavailable', {
          detail: `Dependency unavailable: ${r.down.join(', ')}`,
          details: { checks: r.checks, down: r.down },
        });
      }
      return { status: 'ok' as const, checks: r.checks, ...(r.disk ? { disk: r.disk } : {}) };
    },
  });
}
