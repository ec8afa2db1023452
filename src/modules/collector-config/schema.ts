import type { Readable } from 'node:stream';
import { Type, type TSchema } from 'typebox';
import { STREAM_NAME_PATTERN, STREAM_NAME_RULE } from '../../pipeline/sources/push.js';
import { OffsetEnvelope, OffsetQuery, Timestamp } from '../../platform/http/schemas.js';
import { COLLECTOR_SETTING_FIELDS } from './settings.js';

const Id = (description?: string) =>
  Type.Integer({ minimum: 1, maximum: 2_147_483_647, ...(description ? { description } : {}) });
const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);

function field(name: string) {
  const f = COLLECTOR_SETTING_FIELDS.find((x) => x.name === name);
  if (!f) throw new Error(`no collector setting ${name}`);
  return { ...f, desc: `${f.description}${f.unit ? ` (${f.unit})` : ''}` };
}
const int = (name: string) => {
  const f = field(name);
  return Type.Integer({ minimum: f.minimum, maximum: f.maximum, description: f.desc });
};
const bool = (name: string) => Type.Boolean({ description: field(name).desc });

const SETTINGS = {
  max_pages_per_cycle: int('max_pages_per_cycle'),
  max_cycle_seconds: int('max_cycle_seconds'),
  dedup_hours: int('dedup_hours'),
  default_interval_seconds: int('default_interval_seconds'),
  capture_max_minutes: int('capture_max_minutes'),
  capture_max_events: int('capture_max_events'),
  paused: bool('paused'),
};

export const Settings = Type.Object(SETTINGS);

export const SettingsPatch = Type.Object(
  {
    max_pages_per_cycle: Type.Optional(SETTINGS.max_pages_per_cycle),
    max_cycle_seconds: Type.Optional(SETTINGS.max_cycle_seconds),
    dedup_hours: Type.Optional(SETTINGS.dedup_hours),
    default_interval_seconds: Type.Optional(SETTINGS.default_interval_seconds),
    capture_max_minutes: Type.Optional(SETTINGS.capture_max_minutes),
    capture_max_events: Type.Optional(SETTINGS.capture_max_events),
    paused: Type.Optional(SETTINGS.paused),
  },
  {
    additionalProperties: false,
    minProperties: 1,
    description: 'The settings to change; absent ones keep their value. Out-of-range values are 422.',
  },
);

export const SettingField = Type.Object({
  name: Type.String(),
  type: Type.Union([Type.Literal('integer'), Type.Literal('boolean')]),
  description: Type.String(),
  unit: Type.Optional(Type.String()),
  minimum: Type.Optional(Type.Integer()),
  maximum: Type.Optional(Type.Integer()),
  default: Type.Union([Type.Integer(), Type.Boolean()]),
  customized: Type.Boolean({ description: 'true when a stored value replaces the default' }),
});

export const CollectorConfig = Type.Object({
  settings: Settings,
  fields: Type.Array(SettingField, { description: 'Each setting with its description, range and default' }),
  updated_at: Nullable(Timestamp()),
  updated_by: Nullable(Type.Integer({ description: 'The user who last changed the settings' })),
});

const Status = Type.Union(
  [Type.Literal('active'), Type.Literal('stopped'), Type.Literal('expired'), Type.Literal('full')],
  {
    description: 'active: capturing; stopped: by a user; expired: expires_at passed; full: max_events reached',
  },
);

const StreamName = Type.String({
  pattern: STREAM_NAME_PATTERN,
  errorMessage: STREAM_NAME_RULE,
  description: 'Only this stream (null or absent: every stream of the integration)',
});

export const CreateSessionBody = Type.Object(
  {
    integration_id: Id('An integration of your scope'),
    stream: Type.Optional(Nullable(StreamName)),
    duration_seconds: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 604_800,
        description:
          'How long the session captures; at most the setting capture_max_minutes × 60 (422 capture.limit_exceeded). Default: 900, or the maximum if lower.',
      }),
    ),
    max_events: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 10_000_000,
        description:
          'Most events kept; at most the setting capture_max_events (422 capture.limit_exceeded). Default: 1000, or the maximum if lower.',
      }),
    ),
  },
  { additionalProperties: false },
);

export const CaptureSession = Type.Object({
  id: Type.String({ description: 'UUID' }),
  organization_id: Type.Integer(),
  integration_id: Type.Integer(),
  stream: Nullable(Type.String()),
  status: Status,
  max_events: Type.Integer(),
  events_captured: Type.Integer(),
  created_by: Nullable(Type.Integer()),
  created_at: Timestamp(),
  expires_at: Timestamp(),
  stopped_at: Nullable(Timestamp({ description: 'When it stopped, filled up or expired' })),
});

export const SessionParams = Type.Object({
  session_id: Type.String({ minLength: 1, maxLength: 64, description: 'The session id (UUID)' }),
});
export const EventParams = Type.Object({
  session_id: Type.String({ minLength: 1, maxLength: 64, description: 'The session id (UUID)' }),
  event_id: Type.String({ minLength: 1, maxLength: 64, description: 'The captured event id (UUID)' }),
});

export const SessionListQuery = Type.Object({
  ...OffsetQuery,
  status: Type.Optional(Status),
  integration_id: Type.Optional(Id('Only the sessions of this integration')),
  organization_id: Type.Optional(Id('Only this organization (alias: org_id)')),
});

export const SessionPage = OffsetEnvelope(CaptureSession);

const Mask = (def: boolean, description: string) => Type.Optional(Type.Boolean({ default: def, description }));

export const EventsQuery = Type.Object({
  ...OffsetQuery,
  mask: Mask(false, 'true masks personal data (e-mail and IP addresses, names, long digit runs) as the export does'),
});
export const EventQuery = Type.Object({ mask: Mask(false, 'true masks personal data as the export does') });
export const ExportQuery = Type.Object({
  mask: Mask(true, 'false exports the raw events as captured, personal data included; the audit trail records it'),
});

export const CapturedEvent = Type.Object({
  id: Type.String({ description: 'UUID of the captured copy (an event captured by two sessions has two)' }),
  session_id: Type.String(),
  organization_id: Type.Integer(),
  integration_id: Type.Integer(),
  stream: Type.String(),
  source: Type.String({ description: 'push, pull or reprocess: how the event reached the normalization stage' }),
  raw: Type.Record(Type.String(), Type.Unknown(), {
    description: 'The event as the normalization stage received it (masked only when mask=true)',
  }),
  bytes: Type.Integer({ description: 'Size of the event as JSON' }),
  captured_at: Timestamp(),
});

export const EventPage = OffsetEnvelope(CapturedEvent);

export const NdjsonBody = Type.Unsafe<Readable | string>(
  Type.String({ description: 'One captured event per line (JSON), oldest first' }),
);

export const CaptureVendor = Type.Object({
  platform: Type.String(),
  display_name: Type.String(),
  kind: Type.Union([Type.Literal('push'), Type.Literal('pull')]),
  streams: Type.Array(
    Type.Object({
      name: Type.String(),
      display_name: Type.String(),
      description: Type.String(),
      collected: Type.Boolean({
        description: 'true: a connector collects this stream from the vendor API; false: it arrives by push',
      }),
    }),
    { description: 'Known streams; a session may also name any other stream its integration pushes' },
  ),
});

export const CaptureVendorList = Type.Array(CaptureVendor);
