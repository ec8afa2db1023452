import { scopeOf } from '../../core/scope.js';
import { route, type Api } from '../../platform/http/routes.js';
import { DashboardSummary, SummaryQuery } from './schema.js';
import type { DashboardService } from './service.js';

export function dashboardRoutes(app: Api, service: DashboardService): void {
  route(app, {
    method: 'GET',
    url: '/api/dashboard/summary',
    operationId: 'dashboard.summary',
    summary: 'Traffic, destination and integration health, open work and the license, for your organizations',
    description:
      "Traffic is the ledger's terms per UTC day (today so far and yesterday). organization_id narrows to one organization of your scope; " +
      'another organization answers 404.',
    access: { requires: 'authenticated' },
    schema: { querystring: SummaryQuery, response: { 200: DashboardSummary } },
    handler: async (req) => service.summary(scopeOf(req.actor!), req.query.organization_id),
  });
}
