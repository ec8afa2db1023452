import { scopeOf } from '../../core/scope.js';
import type { AccessDeclaration } from '../../core/access.js';
import { route, type Api } from '../../platform/http/routes.js';
import { Tenant, TenantByCaseCustomerParams, TenantByIdParams, TenantByPartnerParams } from './schema.js';
import type { InternalService } from './service.js';

// A 403 here does not name the permission (spec); the deprecated X-Internal-Key header is
// turned into an actor holding internal.tenant.read by the authenticator (authenticator.ts).
const ACCESS: AccessDeclaration = { requires: 'internal.tenant.read', quietDenial: true };
const DESCRIPTION =
  'Internal, not for customer integrations. Send a token holding internal.tenant.read, or the deprecated shared key in X-Internal-Key when the instance configures one; a token wins over the key.';

export function internalRoutes(app: Api, service: InternalService): void {
  // Literal segments are matched before {organization_id} whatever the order (find-my-way).
  route(app, {
    method: 'GET',
    url: '/api/internal/tenants/by-case-customer/:case_customer_id',
    operationId: 'internal.tenant_by_case_customer',
    summary: 'The organization mapped to a case-management customer',
    description: DESCRIPTION,
    access: ACCESS,
    schema: { params: TenantByCaseCustomerParams, response: { 200: Tenant } },
    handler: async (req) => service.byCaseCustomer(scopeOf(req.actor!), req.params.case_customer_id),
  });

  route(app, {
    method: 'GET',
    url: '/api/internal/tenants/by-partner-tenant/:external_id',
    operationId: 'internal.tenant_by_partner_tenant',
    summary: 'The organization mapped to a partner tenant id',
    description: DESCRIPTION,
    access: ACCESS,
    schema: { params: TenantByPartnerParams, response: { 200: Tenant } },
    handler: async (req) => service.byPartnerTenant(scopeOf(req.actor!), req.params.external_id),
  });

  route(app, {
    method: 'GET',
    url: '/api/internal/tenants/:organization_id',
    operationId: 'internal.tenant_get',
    summary: 'One organization as a tenant record',
    description: DESCRIPTION,
    access: ACCESS,
    schema: { params: TenantByIdParams, response: { 200: Tenant } },
    handler: async (req) => service.byId(scopeOf(req.actor!), req.params.organization_id),
  });
}
