// The destination's representation and the small rules shared by the service's
// operations: names, delivery settings, credential errors.
import { AppError, errors } from '../../core/errors.js';
import { isIP } from 'node:net';
import { deliverySettings, type DeliverySettingsInput } from '../../pipeline/delivery/settings.js';
import type { SinkType } from '../../pipeline/sinks/types.js';
import type { NetPolicy, NetRefusal } from '../../platform/net/policy.js';
import type { Issue } from './sink-types.js';
import type { DestinationRow } from './store.js';

/** The audit target type of destination operations (the family name, as the unit of work derives it). */
export const AUDIT_TARGET_TYPE = 'destinations';

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
  if (!trimmed)
    throw errors.validation('body/name must not be blank', {
      errors: [{ location: 'body/name', message: 'must not be blank' }],
    });
  return trimmed;
}

export function checkDelivery(delivery: DeliverySettingsInput): DeliverySettingsInput {
  const effective = deliverySettings(delivery);
  if (effective.backoff_base_ms > effective.backoff_max_ms) {
    throw errors.validation('body/delivery/backoff_base_ms must not exceed backoff_max_ms', {
      errors: [
        {
          location: 'body/delivery/backoff_base_ms',
          message: `must not exceed backoff_max_ms (${effective.backoff_max_ms})`,
        },
      ],
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

/** Something the caller should know about a destination that was nevertheless saved. */
export interface DestinationWarning {
  code: 'outbound_address_refused';
  /** The config field concerned, as `config/url`. */
  field: string;
  message: string;
}

const REASONS: Record<string, string> = {
  'loopback address': 'a loopback address',
  'linkLocal address': 'a link-local address (where cloud metadata services answer)',
  'unspecified address': 'the unspecified address',
  'metadata address': 'a cloud metadata address',
};

function refusedMessage(host: string, field: string, r: NetRefusal): string {
  const what = REASONS[r.reason] ?? r.reason;
  const range =
    r.reason === 'loopback address'
      ? isIP(r.address) === 6
        ? '::1/128'
        : '127.0.0.0/8'
      : `${r.address}/${isIP(r.address) === 6 ? 128 : 32}`;
  const where =
    host === r.address
      ? `${r.address} is ${what}`
      : `${host} resolves (from this server, now) to ${r.address}, ${what}`;
  return (
    `config/${field}: ${where}. Deliveries refuse it (the outbound address guard against SSRF), so the test would fail ` +
    `with blocked_address and every event would go to the dead-letter queue. If this destination is meant to be there, ` +
    `an administrator allows the range with ${r.setting} (for example ${range}) and restarts Weir.`
  );
}

/**
 * Warnings for the hosts of a destination's config that the SSRF guard would refuse at
 * delivery: the destination is saved (the setting may be about to change, a name may
 * resolve differently where the dispatchers run), but the caller hears of it now.
 */
export async function outboundWarnings(
  sinkType: SinkType,
  config: Record<string, unknown>,
  net: NetPolicy,
): Promise<DestinationWarning[]> {
  const targets = sinkType.targets?.(config) ?? [];
  const refusals = await Promise.all(targets.map((t) => net.refusal(t.host)));
  return targets.flatMap((t, i) => {
    const r = refusals[i];
    return r
      ? [
          {
            code: 'outbound_address_refused' as const,
            field: `config/${t.field}`,
            message: refusedMessage(t.host, t.field, r),
          },
        ]
      : [];
  });
}
