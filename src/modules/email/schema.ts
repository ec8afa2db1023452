import { Type } from 'typebox';
import { PAGE_HEADERS, PageQuery, Timestamp } from '../../platform/http/schemas.js';
import { SECURITY_MODES } from './smtp.js';

const Id = (description?: string) =>
  Type.Integer({ minimum: 1, maximum: 2_147_483_647, ...(description ? { description } : {}) });
const Nullable = <T extends ReturnType<typeof Type.String>>(t: T) => Type.Union([t, Type.Null()]);
const Address = (description?: string) =>
  Type.String({ format: 'email', minLength: 3, maxLength: 254, ...(description ? { description } : {}) });

export const EmailParams = Type.Object({ email_id: Id() });

export const ListQuery = Type.Object({
  ...PageQuery,
  organization_id: Type.Optional(Id('Only the recipients of this organization')),
});

export const DeliveryStatus = Type.Union(
  [
    Type.Literal('queued'),
    Type.Literal('retrying'),
    Type.Literal('sent'),
    Type.Literal('failed'),
    Type.Literal('cancelled'),
  ],
  { description: 'queued and retrying are pending; failed carries last_error' },
);

export type DeliveryStatusName = 'queued' | 'retrying' | 'sent' | 'failed' | 'cancelled';

export const LastDelivery = Type.Object({
  id: Type.String(),
  status: DeliveryStatus,
  attempts: Type.Integer(),
  last_error: Type.Union([Type.String(), Type.Null()]),
  subject: Type.String(),
  updated_at: Timestamp(),
});

export const Recipient = Type.Object({
  id: Type.Integer(),
  organization_id: Type.Integer(),
  address: Type.String(),
  name: Type.Union([Type.String(), Type.Null()]),
  created_at: Timestamp(),
  last_delivery: Type.Union([LastDelivery, Type.Null()], {
    description: 'The newest message to this recipient and how it went; null before the first',
  }),
});

export const RecipientList = { ...Type.Array(Recipient), headers: PAGE_HEADERS };

export const CreateBody = Type.Object(
  {
    address: Address(),
    name: Type.Optional(Nullable(Type.String({ maxLength: 200 }))),
    organization_id: Type.Optional(
      Id('The organization whose messages this recipient receives; omitted: your only organization'),
    ),
  },
  { additionalProperties: false },
);

const Security = Type.Union(
  [Type.Literal(SECURITY_MODES[0]), Type.Literal(SECURITY_MODES[1]), Type.Literal(SECURITY_MODES[2])],
  {
    description:
      'starttls (upgrade required), tls (implicit, usually port 465), none (plaintext: only to loopback or private addresses)',
  },
);

export const SmtpConfig = Type.Object({
  configured: Type.Boolean(),
  host: Type.Union([Type.String(), Type.Null()]),
  port: Type.Union([Type.Integer(), Type.Null()]),
  security: Type.Union([Security, Type.Null()]),
  username: Type.Union([Type.String(), Type.Null()]),
  password_set: Type.Boolean({ description: 'The password itself is never returned' }),
  from_address: Type.Union([Type.String(), Type.Null()]),
  ca_pem: Type.Union([Type.String(), Type.Null()], {
    description: 'Extra certificate authority trusted for this relay (PEM)',
  }),
  updated_at: Type.Union([Timestamp(), Type.Null()]),
});

export const PutConfigBody = Type.Object(
  {
    host: Type.String({ minLength: 1, maxLength: 253, description: 'Host name or IP address of the relay' }),
    port: Type.Integer({ minimum: 1, maximum: 65_535 }),
    security: Security,
    username: Type.Optional(
      Nullable(Type.String({ minLength: 1, maxLength: 256, description: 'Omitted or null: no authentication' })),
    ),
    password: Type.Optional(
      Nullable(
        Type.String({
          minLength: 1,
          maxLength: 1024,
          description: 'Write-only. Omitted: the stored one is kept; null: removed',
        }),
      ),
    ),
    from_address: Address('Sender of every message'),
    ca_pem: Type.Optional(
      Nullable(Type.String({ maxLength: 65_536, description: 'PEM certificate(s) to trust besides the system roots' })),
    ),
  },
  { additionalProperties: false },
);

export const TestBody = Type.Object(
  {
    to: Type.Optional(
      Address(
        'Default: your own address. Without platform scope: a recipient of your organizations or your own address',
      ),
    ),
  },
  { additionalProperties: false },
);

export const TestResult = Type.Object({
  sent: Type.Boolean(),
  to: Type.String(),
  message_id: Type.Optional(Type.String()),
  error: Type.Optional(Type.String({ description: 'Why the message was not sent' })),
});
