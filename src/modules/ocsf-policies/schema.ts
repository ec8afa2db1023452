import { Type, type TLiteral } from 'typebox';
import { Timestamp } from '../../platform/http/schemas.js';

const Id = (description?: string) =>
  Type.Integer({ minimum: 1, maximum: 2_147_483_647, ...(description ? { description } : {}) });
const modes = (): [TLiteral<'strict'>, TLiteral<'lenient'>] => [Type.Literal('strict'), Type.Literal('lenient')];

export const MAX_COMPLIANCE_DAYS = 30;

export const PolicyMode = Type.Union(modes(), {
  description:
    'strict: events whose OCSF output is invalid are quarantined (invalid_ocsf); lenient: they are delivered, flagged valid=false with their issues',
});

export const OrgParams = Type.Object({ org_id: Id('The organization') });

export const Policy = Type.Object({
  organization_id: Type.Integer(),
  organization_name: Type.String(),
  mode: PolicyMode,
  is_default: Type.Boolean({ description: 'true: never set, the default (strict) applies' }),
  updated_at: Type.Union([Timestamp(), Type.Null()], { description: 'Last change; null while the default applies' }),
});

export const PolicyList = Type.Object({
  items: Type.Array(Policy, { description: 'Every organization in your scope, by id' }),
});

export const PolicyBody = Type.Object({ mode: Type.Union(modes()) }, { additionalProperties: false });

export const ComplianceQuery = Type.Object({
  days: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: MAX_COMPLIANCE_DAYS,
      default: 7,
      description: 'UTC days counted back from today, today included',
    }),
  ),
  organization_id: Type.Optional(Id('Only this organization (alias: org_id)')),
  integration_id: Type.Optional(Id()),
});

const Rate = Type.Union([Type.Number({ minimum: 0, maximum: 1 }), Type.Null()], {
  description: 'valid / (valid + invalid); null when no event was checked',
});

export const ComplianceEntry = Type.Object({
  organization_id: Type.Integer(),
  integration_id: Type.Integer(),
  integration_name: Type.Union([Type.String(), Type.Null()], {
    description: 'null when the integration was removed since',
  }),
  class_uid: Type.Integer(),
  class_name: Type.Union([Type.String(), Type.Null()], {
    description: 'The OCSF class caption; null for a class the catalog does not know',
  }),
  valid: Type.Integer(),
  invalid: Type.Integer(),
  compliance_rate: Rate,
  last_error: Type.Union([Type.String(), Type.Null()], {
    description: 'The most recent validation issue in the window',
  }),
  last_invalid_at: Type.Union([Timestamp(), Type.Null()]),
});

export const ComplianceReport = Type.Object({
  window_days: Type.Integer(),
  since_day: Type.String({ description: 'First UTC day of the window (YYYY-MM-DD)' }),
  items: Type.Array(ComplianceEntry, {
    description: 'Per integration and OCSF class, by organization, integration and class',
  }),
  totals: Type.Object({ valid: Type.Integer(), invalid: Type.Integer(), compliance_rate: Rate }),
});
