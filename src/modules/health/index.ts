import type { Api } from '../../platform/http/routes.js';
import { healthRoutes } from './routes.js';
import { createHealthService, type DiskReport, type Probe } from './service.js';

export function wireHealth(deps: { probes: Probe[]; disk?: () => DiskReport }) {
  const service = createHealthService({ probes: deps.probes, ...(deps.disk ? { disk: deps.disk } : {}) });
  return { service, routes: (app: Api) => healthRoutes(app, service) };
}
