// What the delivery engine needs from the rest of Weir, as interfaces: the destinations
// module implements DestinationDirectory (modules/destinations/directory.ts).
import type { Credential } from '../../core/credentials.js';
import type { DeliverySettings } from './settings.js';

/** A destination as the dispatcher sees it; never carries the credential. */
export interface DestinationRuntime {
  id: string;
  /** null: a global destination, usable by every organization's routes. */
  organization_id: number | null;
  name: string;
  type: string;
  config: Record<string, unknown>;
  delivery: DeliverySettings;
  /** false when disabled by an administrator or by a credential revoke. */
  enabled: boolean;
  /**
   * Why delivery is stopped when enabled is false and an administrator did not say so
   * ('credential_revoked'): routing keeps writing such a destination's copies (they wait
   * in the outbox for a new credential); null or absent: disabled on purpose, no copies.
   */
  disabled_reason?: string | null;
  has_credential: boolean;
  shadow_destination_id: string | null;
  /** Changes on every edit: a lane rebuilds its sink when it changes. */
  version: number;
  updated_at: Date;
}

export interface DestinationDirectory {
  /** Every destination (enabled or not), for routing and lanes. */
  list(): Promise<DestinationRuntime[]>;
  /** The decrypted credential, in memory only; null when there is none. */
  credential(destinationId: string): Promise<Credential | null>;
  /**
   * Calls listener after this process committed a change to a destination; returns the
   * unsubscribe. Other processes' changes are found by the periodic refresh.
   */
  onChange?(listener: () => void): () => void;
}
