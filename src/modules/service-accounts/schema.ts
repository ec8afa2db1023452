import { Type, type TSchema } from 'typebox';
import { ROLES } from '../../core/roles.js';
import { Timestamp } from '../../platform/http/schemas.js';

const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);

const Role = Type.Union(
  ROLES.map((r) => Type.Literal(r)),
  { description: 'viewer, operator or admin' },
);
const Name = Type.String({ minLength: 1, maxLength: 100 });

export const ServiceAccount = Type.Object(
  {
    id: Type.Integer(),
    name: Type.String(),
    role: Type.String(),
    organization_id: Nullable(Type.Integer({ description: 'null: a platform account' })),
    is_active: Type.Boolean({ description: 'false: its tokens answer 401 Invalid or expired API token' }),
    created_by: Nullable(
      Type.Integer({ description: 'The user who created it (informational; its tokens do not depend on that user)' }),
    ),
    created_at: Timestamp(),
    updated_at: Timestamp(),
    token_count: Type.Integer({ minimum: 0, description: 'Tokens not revoked' }),
  },
  { $id: 'ServiceAccount', description: 'A non-person owner of API tokens; it cannot sign in to the console' },
);

export const ServiceAccountList = Type.Array(ServiceAccount);

export const CreateServiceAccountBody = Type.Object(
  {
    name: Name,
    role: Role,
    organization_id: Type.Optional(
      Type.Integer({
        minimum: 1,
        description:
          'Omitted: a platform account (global callers only). A platform account with a role other than admin resolves to no organization.',
      }),
    ),
  },
  { additionalProperties: false },
);

export const UpdateServiceAccountBody = Type.Object(
  {
    name: Type.Optional(Name),
    role: Type.Optional(Role),
    is_active: Type.Optional(
      Type.Boolean({ description: 'false disables every token of the account at once; true restores them' }),
    ),
  },
  { additionalProperties: false },
);

export const AccountParams = Type.Object({ service_account_id: Type.Integer({ minimum: 1 }) });

export const AccountTokenParams = Type.Object({
  service_account_id: Type.Integer({ minimum: 1 }),
  token_id: Type.Integer({ minimum: 1 }),
});
