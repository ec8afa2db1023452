import type { Api } from '../../platform/http/routes.js';
import { healthRoutes } from './routes.js';
import { createHealthService, type Probe } from './service.js';

export function wireHealth(deps: { probes: Probe[] }) {
  const service = createHealthService({ probes: deps.probes });
  return { service, routes: (app: Api) => healthRoutes(app, service) };
}
