import { Type, type TSchema } from 'typebox';
import { PERMISSIONS } from '../../core/access.js';
import { Timestamp } from '../../platform/http/schemas.js';

const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);

export const PermissionName = Type.Union(
  PERMISSIONS.map((p) => Type.Literal(p)),
  { description: 'A permission name' },
);

const tokenFields = {
  name: Type.String({
    minLength: 1,
    maxLength: 100,
    description: 'Unique per owner; names of revoked tokens stay reserved',
  }),
  expires_at: Type.Optional(
    Type.String({ format: 'date-time', description: 'RFC 3339; must be in the future; not with is_eternal=true' }),
  ),
  is_eternal: Type.Optional(
    Type.Boolean({ description: 'true: no expiry. Omitting both this and expires_at also gives no expiry.' }),
  ),
  scopes: Type.Optional(
    Type.Array(PermissionName, {
      maxItems: PERMISSIONS.length,
      description: "A subset of the owner's permissions; omitted: the token inherits them all",
    }),
  ),
};

/** POST /api/v1/tokens. service_account_id is declared (clients see it) and refused with 400. */
export const CreateTokenBody = Type.Object(
  {
    ...tokenFields,
    service_account_id: Type.Optional(
      Type.Integer({
        description:
          'Refused here (400 api_token.service_account_id_not_allowed); use POST /api/v1/service-accounts/{service_account_id}/tokens',
      }),
    ),
  },
  { additionalProperties: false },
);

/** POST /api/v1/service-accounts/{id}/tokens: the account comes from the path. */
export const CreateAccountTokenBody = Type.Object(
  {
    ...tokenFields,
    service_account_id: Type.Optional(Type.Integer({ description: 'Ignored: the account is the one in the path' })),
  },
  { additionalProperties: false },
);

export const ApiToken = Type.Object(
  {
    id: Type.Integer(),
    name: Type.String(),
    token_prefix: Type.String({ minLength: 12, maxLength: 12, description: 'The first 12 characters of the token' }),
    scopes: Nullable(
      Type.Array(Type.String(), { description: "null: the token inherits all of the owner's permissions" }),
    ),
    expires_at: Nullable(Timestamp({ description: 'null: no expiry' })),
    is_eternal: Type.Boolean(),
    created_at: Timestamp(),
    last_used_at: Nullable(Timestamp({ description: 'Written in batches (about every 30 s), not on every request' })),
  },
  { $id: 'ApiToken', description: 'An API token as listed: never its value or hash' },
);

export const ApiTokenList = Type.Array(ApiToken);

export const CreatedToken = Type.Object({
  token: Type.String({ description: 'The full value (starts with svcsk_); shown only in this answer' }),
  api_token: Type.Object({
    id: Type.Integer(),
    name: Type.String(),
    token_prefix: Type.String({ minLength: 12, maxLength: 12 }),
    expires_at: Nullable(Timestamp()),
    is_eternal: Type.Boolean(),
    scopes: Nullable(Type.Array(Type.String())),
    created_at: Timestamp(),
  }),
});

export const Scopes = Type.Object({
  scopes: Type.Array(Type.String(), { description: 'Every permission name a token can be restricted to' }),
  held: Type.Array(Type.String(), {
    description: 'The subset the caller holds (and can therefore grant its own tokens)',
  }),
});

export const TokenIdParams = Type.Object({ token_id: Type.Integer({ minimum: 1 }) });
