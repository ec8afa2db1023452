import { Type } from 'typebox';

const External = (description: string) => Type.String({ minLength: 1, maxLength: 256, description });

export const TenantByIdParams = Type.Object({ organization_id: Type.Integer({ minimum: 1, maximum: 2_147_483_647 }) });
export const TenantByCaseCustomerParams = Type.Object({
  case_customer_id: External('Customer id in the case-management system'),
});
export const TenantByPartnerParams = Type.Object({ external_id: External('Tenant id of the partner platform') });

export const Tenant = Type.Object(
  {
    organization_id: Type.Integer(),
    name: Type.String(),
    is_active: Type.Boolean(),
    case_customer_id: Type.Union([Type.String(), Type.Null()]),
    partner_tenant_ids: Type.Array(Type.String()),
    credential_path: Type.String({
      description: "Where the organization's credentials are kept in the secret store (sensitive)",
    }),
  },
  { description: 'Sensitive: for internal services only' },
);
