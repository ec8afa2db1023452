import { Type } from 'typebox';
import { ROLES, type RoleName } from '../../core/roles.js';
import { ErrorBody, Timestamp } from '../../platform/http/schemas.js';

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()]);
const Url = Type.String({ minLength: 1, maxLength: 2048, description: 'An absolute http(s) URL' });
const ClaimName = Type.String({
  minLength: 1,
  maxLength: 100,
  pattern: '^[A-Za-z0-9_.:/-]+$',
  errorMessage: { pattern: 'may hold only letters, digits and _ . : / -' },
});

export const Rule = Type.Object(
  {
    claim: ClaimName,
    match: Type.Union([Type.Literal('equals'), Type.Literal('contains'), Type.Literal('glob')]),
    value: Type.String({ minLength: 1, maxLength: 256 }),
    organization_id: Nullable(Type.Integer({ minimum: 1, description: 'null: a platform user (no organization)' })),
    role: Type.Unsafe<RoleName>(Type.String({ enum: [...ROLES] })),
  },
  { additionalProperties: false },
);

export const IdentityConfig = Type.Object({
  configured: Type.Boolean({ description: 'An identity provider has been saved' }),
  enabled: Type.Boolean(),
  issuer: Nullable(Type.String()),
  client_id: Nullable(Type.String()),
  client_secret_set: Type.Boolean({ description: 'Whether a client secret is stored (it is never shown)' }),
  scopes: Type.Array(Type.String()),
  redirect_uri: Nullable(Type.String()),
  username_claim: Type.String(),
  rules: Type.Array(Rule),
  password_login_for_sso_users: Type.Boolean({
    description: 'false: SSO users cannot sign in with a password (the bootstrap administrator always can)',
  }),
  scim_base_url: Nullable(Type.String()),
  scim_token_set: Type.Boolean(),
  updated_at: Nullable(Timestamp()),
});

export const IdentityConfigBody = Type.Object(
  {
    enabled: Type.Boolean(),
    issuer: Url,
    client_id: Type.String({ minLength: 1, maxLength: 255 }),
    client_secret: Type.Optional(
      Nullable(
        Type.String({
          minLength: 1,
          maxLength: 1024,
          description: 'Write-only. Omitted: the stored secret is kept; null: removed (a public client)',
        }),
      ),
    ),
    scopes: Type.Optional(
      Type.Array(
        Type.String({
          minLength: 1,
          maxLength: 100,
          pattern: '^[\\x21\\x23-\\x5B\\x5D-\\x7E]+$',
          errorMessage: { pattern: 'must be a scope name: printable characters without spaces, quotes or backslashes' },
        }),
        { maxItems: 20, description: 'Default: openid, email, profile' },
      ),
    ),
    redirect_uri: Url,
    username_claim: Type.Optional(ClaimName),
    rules: Type.Array(Rule, { maxItems: 100 }),
    password_login_for_sso_users: Type.Optional(Type.Boolean()),
    scim_base_url: Type.Optional(Nullable(Url)),
    scim_token: Type.Optional(
      Nullable(
        Type.String({
          minLength: 1,
          maxLength: 4096,
          description: 'Write-only bearer token of the SCIM endpoint. Omitted: kept',
        }),
      ),
    ),
  },
  { additionalProperties: false },
);

const Step = Type.Object({
  step: Type.String(),
  ok: Type.Boolean(),
  detail: Type.String(),
  error: Nullable(Type.String()),
});
export const TestResult = Type.Object({ ok: Type.Boolean(), steps: Type.Array(Step) });

const SyncResult = Type.Object({
  deactivated: Type.Integer(),
  changed: Type.Integer({ description: 'Users whose role or organization changed' }),
  unchanged: Type.Integer(),
  errors: Type.Array(Type.Object({ user: Nullable(Type.String()), message: Type.String() })),
  note: Nullable(Type.String()),
});

export const SyncRun = Type.Object({
  id: Type.String(),
  status: Type.String({ description: 'queued, running, succeeded or failed' }),
  source: Type.String({ description: "scim: the provider's SCIM Users endpoint; claims: each user's last login" }),
  seen: Type.Integer(),
  total: Nullable(Type.Integer()),
  result: Nullable(SyncResult),
  error: Nullable(Type.String()),
  created_at: Timestamp(),
  started_at: Nullable(Timestamp()),
  finished_at: Nullable(Timestamp()),
});

export const SyncAccepted = Type.Object({ id: Type.String(), status: Type.String() });
export const SyncStatus = Type.Object({ running: Type.Boolean(), current: Nullable(SyncRun), last: Nullable(SyncRun) });

export const SsoLoginQuery = Type.Object(
  {
    return_to: Type.Optional(
      Type.String({ maxLength: 2048, description: 'A relative path on this service (default /)' }),
    ),
  },
  { additionalProperties: false },
);

export const SsoCallbackQuery = Type.Object(
  {
    code: Type.Optional(Type.String({ maxLength: 4096 })),
    state: Type.Optional(Type.String({ maxLength: 512 })),
    error: Type.Optional(Type.String({ maxLength: 256 })),
    error_description: Type.Optional(Type.String({ maxLength: 2048 })),
    error_uri: Type.Optional(Type.String({ maxLength: 2048 })),
    iss: Type.Optional(Type.String({ maxLength: 2048 })),
    session_state: Type.Optional(Type.String({ maxLength: 512 })),
    scope: Type.Optional(Type.String({ maxLength: 2048 })),
  },
  { additionalProperties: false },
);

export const Redirect = Type.Null({ description: 'A redirect (Location header)' });

export { ErrorBody };
