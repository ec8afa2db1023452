import { Type } from 'typebox';
import { ROLES, type RoleName } from '../../core/roles.js';
import { ErrorBody, Timestamp } from '../../platform/http/schemas.js';
import { MIN_PASSWORD_LENGTH } from './passwords.js';

// Long enough for any passphrase, short enough that hashing it costs nothing extra.
const MAX_PASSWORD_LENGTH = 1024;

export const Role = Type.Unsafe<RoleName>(Type.String({ enum: [...ROLES], description: 'viewer, operator or admin' }));
const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()]);

export const Username = Type.String({
  minLength: 1,
  maxLength: 150,
  pattern: '^[A-Za-z0-9._@+-]+$',
  errorMessage: { pattern: 'may hold only letters, digits and ".", "_", "@", "+", "-"' },
  description: 'Letters, digits and . _ @ + -; unique in any letter case',
});
export const Password = Type.String({ minLength: MIN_PASSWORD_LENGTH, maxLength: MAX_PASSWORD_LENGTH });
export const Email = Type.String({ format: 'email', maxLength: 254 });
const DisplayName = Type.String({ minLength: 1, maxLength: 200 });
export const Locale = Type.String({
  maxLength: 35,
  pattern: '^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$',
  errorMessage: { pattern: 'must be a language tag such as "en", "fr" or "pt-BR"' },
  description: 'A BCP 47 language tag such as en, fr or pt-BR',
});

export const UserIdParams = Type.Object({ user_id: Type.Integer({ minimum: 1 }) });

const userFields = {
  id: Type.Integer(),
  username: Type.String(),
  email: Type.String(),
  role: Type.String(),
  organization_id: Nullable(Type.Integer()),
  is_active: Type.Boolean(),
  display_name: Nullable(Type.String()),
  locale: Type.String(),
  created_at: Timestamp(),
  last_login_at: Nullable(Timestamp()),
  sso: Type.Boolean({
    description: 'Signs in through the identity provider (created by single sign-on; see /api/identity/config)',
  }),
};

export const User = Type.Object(userFields, {
  $id: 'User',
  description: 'A person who signs in; never carries the password hash',
});

export const UserList = Type.Array(User);

export const ServiceAccountSelf = Type.Object({
  kind: Type.Literal('service_account'),
  id: Type.Integer(),
  name: Type.String(),
  role: Type.String(),
  organization_id: Nullable(Type.Integer()),
  is_active: Type.Boolean(),
  created_at: Timestamp(),
});

export const Me = Type.Union([Type.Object({ kind: Type.Literal('user'), ...userFields }), ServiceAccountSelf], {
  description: 'The caller: a user, or the service account whose token was presented',
});

export const Organization = Type.Object({ id: Type.Integer(), name: Type.String() });

export const Profile = Type.Object({
  kind: Type.Union([Type.Literal('user'), Type.Literal('service_account')]),
  id: Type.Integer(),
  name: Type.String({ description: 'Username, or the service account name' }),
  email: Nullable(Type.String()),
  display_name: Nullable(Type.String()),
  locale: Nullable(Type.String()),
  role: Type.String(),
  organization_id: Nullable(Type.Integer()),
  organization: Nullable(Organization),
  global: Type.Boolean({ description: 'Platform scope: every organization' }),
  permissions: Type.Array(Type.String(), { description: 'What this credential may do (token scopes applied), sorted' }),
  auth_method: Type.Union([Type.Literal('session'), Type.Literal('token')]),
});

export const Permissions = Type.Object({
  role: Type.String(),
  global: Type.Boolean(),
  permissions: Type.Array(Type.String(), { description: "The caller's permissions (token scopes applied), sorted" }),
  roles: Type.Object(
    { viewer: Type.Array(Type.String()), operator: Type.Array(Type.String()), admin: Type.Array(Type.String()) },
    { description: 'The full role -> permission table (each list sorted)' },
  ),
});

export const AdminAccess = Type.Object({
  global: Type.Boolean(),
  organizations: Type.Array(Organization, { description: 'Organizations whose users the caller administers' }),
});

export const Status = Type.Object({
  bootstrapped: Type.Boolean({ description: 'A first administrator exists' }),
  login_methods: Type.Array(Type.String()),
  sso_enabled: Type.Boolean(),
});

export const BootstrapBody = Type.Object(
  { username: Username, password: Password, email: Email },
  { additionalProperties: false },
);

export const LoginBody = Type.Object(
  // Not the creation rules: a login with a short password is simply a wrong password.
  {
    username: Type.String({ minLength: 1, maxLength: 150 }),
    password: Type.String({ minLength: 1, maxLength: MAX_PASSWORD_LENGTH }),
  },
  { additionalProperties: false },
);

export const UpdateMeBody = Type.Object(
  { display_name: Type.Optional(Nullable(DisplayName)), email: Type.Optional(Email) },
  { additionalProperties: false },
);

export const LocaleBody = Type.Object({ locale: Locale }, { additionalProperties: false });

export const PasswordBody = Type.Object(
  { current_password: Type.String({ minLength: 1, maxLength: MAX_PASSWORD_LENGTH }), new_password: Password },
  { additionalProperties: false },
);

export const RevokedSessions = Type.Object({ revoked: Type.Integer({ description: 'Sessions closed' }) });

export const CreateUserBody = Type.Object(
  {
    username: Username,
    password: Password,
    email: Email,
    role: Role,
    organization_id: Type.Optional(
      Type.Integer({ minimum: 1, description: 'Omitted: a platform user (global scope callers only)' }),
    ),
  },
  { additionalProperties: false },
);

export const UpdateUserBody = Type.Object(
  {
    role: Type.Optional(Role),
    is_active: Type.Optional(Type.Boolean()),
    email: Type.Optional(Email),
    password: Type.Optional(Password),
  },
  { additionalProperties: false },
);

export const UserListQuery = Type.Object(
  { organization_id: Type.Optional(Type.Integer({ minimum: 1 })) },
  { additionalProperties: false },
);

export { ErrorBody };
