// The destination's representation and the small rules shared by the service's
// operations: names, delivery settings, credential errors.
import { AppError, errors } from '../../core/errors.js';
import { deliverySettings, type DeliverySettingsInput } from '../../pipeline/delivery/settings.js';
import type { Issue } from './sink-types.js';
import type { DestinationRow } from './store.js';

/** disabled_reason of a destination whose credential was revoked. */
export const CREDENTIAL_REVOKED = 'credential_revoked';

export const destinationNotFound = () => errors.notFound('Destination');

export function destinationOut(r: DestinationRow) {
  return {
    id: r.id,
    organization_id: r.organization_id,
    name: r.name,
    description: r.description,
    type: r.type,
    config: r.config,
    delivery: deliverySettings(r.delivery as DeliverySettingsInput),
    enabled: r.enabled,
    disabled_reason: r.disabled_reason,
    has_credential: r.has_credential,
    credential_updated_at: r.credential_updated_at,
    shadow_destination_id: r.shadow_destination_id,
    version: r.version,
    created_at: r.created_at,
    updated_at: r.updated_at,
  };
}

export function cleanName(name: string): string {
  const trimmed = name.trim();
  if (!trimmed) throw errors.validation('body/name must not be blank', { errors: [{ location: 'body/name', message: 'must not be blank' }] });
  return trimmed;
}

export function checkDelivery(delivery: DeliverySettingsInput): DeliverySettingsInput {
  const effective = deliverySettings(delivery);
  if (effective.backoff_base_ms > effective.backoff_max_ms) {
    throw errors.validation('body/delivery/backoff_base_ms must not exceed backoff_max_ms', {
      errors: [{ location: 'body/delivery/backoff_base_ms', message: `must not exceed backoff_max_ms (${effective.backoff_max_ms})` }],
    });
  }
  return delivery;
}

export function invalidCredential(issues: Issue[], detail?: string): AppError {
  const first = issues[0];
  return new AppError('destination.invalid_credential', {
    detail: detail ?? (first ? `${first.location} ${first.message}` : 'The credential is not valid'),
    details: { errors: issues },
  });
}

