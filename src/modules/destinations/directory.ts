// The dispatchers' view of destinations (pipeline/delivery/ports.ts): every destination
// with its effective settings, and the credential decrypted in memory on request. The
// engine never reads the destinations table itself, so the credential stays behind this
// one door.
import type { DestinationDirectory, DestinationRuntime } from '../../pipeline/delivery/ports.js';
import { deliverySettings, type DeliverySettingsInput } from '../../pipeline/delivery/settings.js';
import { DeliveryError } from '../../pipeline/sinks/types.js';
import type { CredentialCipher } from '../../platform/crypto/credentials.js';
import type { SinkTypeRegistry } from './sink-types.js';
import type { DestinationRow, DestinationStore } from './store.js';

export function toRuntime(row: DestinationRow, types: SinkTypeRegistry): DestinationRuntime {
  // Defaults the type gained since the row was written apply too.
  const config = types.get(row.type)?.checkConfig(row.config).config ?? row.config;
  return {
    id: row.id,
    organization_id: row.organization_id,
    name: row.name,
    type: row.type,
    config,
    delivery: deliverySettings(row.delivery as DeliverySettingsInput),
    enabled: row.enabled,
    disabled_reason: row.disabled_reason,
    has_credential: row.has_credential,
    shadow_destination_id: row.shadow_destination_id,
    version: row.version,
    updated_at: row.updated_at,
  };
}

export function createDestinationDirectory(deps: {
  store: DestinationStore;
  cipher: CredentialCipher;
  types: SinkTypeRegistry;
}): DestinationDirectory {
  const { store, cipher, types } = deps;
  return {
    async list() {
      return (await store.all()).map((row) => toRuntime(row, types));
    },

    onChange: (listener) => store.onChange(listener),

    /** Throws DeliveryError('config') when the stored credential cannot be opened (wrong or missing key). */
    async credential(destinationId) {
      const row = await store.credentialOf(destinationId);
      if (!row?.credential) return null;
      try {
        return cipher.open(destinationId, { ciphertext: row.credential, keyId: row.credential_key_id });
      } catch (err) {
        throw new DeliveryError(
          'config',
          `the credential of destination ${destinationId} cannot be decrypted: ${(err as Error).message}`,
        );
      }
    },
  };
}
