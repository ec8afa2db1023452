// Tenant lookups for internal services (case management, partner platform): the
// organization behind an external identifier, with where its credentials live. Scoped like
// every read: the shared key's actor is global, a token holder sees its own scope.
import { errors } from '../../core/errors.js';
import type { Scope } from '../../core/scope.js';
import type { OrganizationRow } from '../organizations/store.js';

export interface TenantLookups {
  byId(scope: Scope, id: number): Promise<OrganizationRow | undefined>;
  byCaseCustomer(scope: Scope, caseCustomerId: string): Promise<OrganizationRow | undefined>;
  byPartnerTenant(scope: Scope, externalId: string): Promise<OrganizationRow | undefined>;
}

export function credentialPath(organizationId: number): string {
  return `weir/organizations/${organizationId}/credentials`;
}

function view(org: OrganizationRow | undefined) {
  if (!org) throw errors.notFound('Tenant');
  return {
    organization_id: org.id,
    name: org.name,
    is_active: org.is_active,
    case_customer_id: org.case_customer_id,
    partner_tenant_ids: org.partner_tenant_ids,
    credential_path: credentialPath(org.id),
  };
}

export function createInternalService(deps: { tenants: TenantLookups }) {
  const { tenants } = deps;
  return {
    byId: async (scope: Scope, id: number) => view(await tenants.byId(scope, id)),
    byCaseCustomer: async (scope: Scope, caseCustomerId: string) =>
      view(await tenants.byCaseCustomer(scope, caseCustomerId)),
    byPartnerTenant: async (scope: Scope, externalId: string) => view(await tenants.byPartnerTenant(scope, externalId)),
  };
}

export type InternalService = ReturnType<typeof createInternalService>;
