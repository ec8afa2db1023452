import { Type } from 'typebox';
import { Timestamp } from '../../platform/http/schemas.js';

const EditionName = Type.Union([Type.Literal('community'), Type.Literal('enterprise')]);
const Features = Type.Array(Type.String(), { description: 'Add-on entitlements named by the license' });

export const ActivateBody = Type.Object(
  {
    license_token: Type.String({
      minLength: 1,
      maxLength: 16_384,
      description: 'Compact JWS (EdDSA/Ed25519) with claims edition, org_limit, expires_at, grace_days, features',
    }),
  },
  { additionalProperties: false },
);

export const LicenseStatus = Type.Object({
  edition: EditionName,
  status: Type.Union([Type.Literal('active'), Type.Literal('expired_in_grace'), Type.Literal('community')], {
    description: 'community: no license, or one whose grace period has ended',
  }),
  expires_at: Type.Union([Timestamp(), Type.Null()], {
    description: 'Expiry of the stored license, also once it lapsed; null without one',
  }),
  expired_in_grace: Type.Boolean({
    description: 'Already expired but within the grace period: features stay on for now',
  }),
  grace_days: Type.Integer(),
  org_limit: Type.Integer({ description: 'Organizations the instance may hold under this edition' }),
  features: Features,
});

export const EditionInfo = Type.Object({ edition: EditionName, features: Features });
