import { scopeOf } from '../../core/scope.js';
import { route, type Api } from '../../platform/http/routes.js';
import { ComplianceQuery, ComplianceReport, OrgParams, Policy, PolicyBody, PolicyList } from './schema.js';
import type { OcsfPolicyService } from './service.js';

export function ocsfPolicyRoutes(app: Api, service: OcsfPolicyService): void {
  route(app, {
    method: 'GET',
    url: '/api/ocsf/compliance',
    operationId: 'ocsf.compliance',
    summary: 'OCSF conformance of normalized output per integration and class over the last days',
    access: { requires: 'user.manage' },
    schema: { querystring: ComplianceQuery, response: { 200: ComplianceReport } },
    handler: async (req) => {
      const { days = 7, organization_id, integration_id } = req.query;
      return service.compliance(scopeOf(req.actor!), {
        days,
        organizationId: organization_id,
        integrationId: integration_id,
      });
    },
  });

  route(app, {
    method: 'GET',
    url: '/api/ocsf/policies',
    operationId: 'ocsf.list_policies',
    summary: 'The OCSF output policy of every organization in your scope (strict unless changed)',
    access: { requires: 'user.manage' },
    schema: { response: { 200: PolicyList } },
    handler: async (req) => service.list(scopeOf(req.actor!)),
  });

  route(app, {
    method: 'PUT',
    url: '/api/ocsf/policies/:org_id',
    operationId: 'ocsf.set_policy',
    summary: 'Set whether invalid OCSF output is quarantined (strict) or delivered and flagged (lenient)',
    description: 'Workers pick the change up within seconds, without restart.',
    access: { requires: 'user.manage' },
    schema: { params: OrgParams, body: PolicyBody, response: { 200: Policy } },
    handler: async (req) => service.set(req.actor!, req.params.org_id, req.body.mode),
  });
}
