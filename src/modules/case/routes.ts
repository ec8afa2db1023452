import { route, type Api } from '../../platform/http/routes.js';
import { CaseHealth } from './schema.js';
import type { CaseService } from './service.js';

export function caseRoutes(app: Api, service: CaseService): void {
  route(app, {
    method: 'GET',
    url: '/api/case/health',
    operationId: 'case.health',
    summary: 'Whether the case-management system (DFIR-IRIS) answers, its version and latency',
    description:
      'Calls the system (ping, versions) at most once per 30 s: the answer is cached for every api process and says so (cached, checked_at). ' +
      'Not configured is a valid 200 answer (configured: false).',
    access: { requires: 'org.manage' },
    schema: { response: { 200: CaseHealth } },
    handler: async () => service.health(),
  });
}
