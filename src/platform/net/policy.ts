// The SSRF guard's interface (implementation: platform/net/ssrf.ts). Outbound connections of
// destination tests and deliveries resolve names through `lookup`, which refuses loopback,
// link-local, unspecified and cloud metadata addresses unless the administrator allowed
// their range (WEIR_OUTBOUND_ALLOW_CIDRS). Checking at connect time, on the address actually
// used, also defeats DNS rebinding.
import type { LookupFunction } from 'node:net';

export interface NetPolicy {
  /** For net.connect / tls.connect / undici's connect options / dgram (via resolve). */
  lookup: LookupFunction;
  /** Resolves a host to one allowed address or throws a NetError('blocked_address' | 'dns'). */
  resolve(host: string): Promise<{ address: string; family: 4 | 6 }>;
  /** Throws NetError('blocked_address') for a literal address outside the policy. */
  checkAddress(address: string): void;
  /**
   * Whether connections to `host` would be refused, judged now (a name is resolved as a
   * delivery would, within timeoutMs): the address and why, or null when allowed or when
   * the name does not resolve in time (nothing to say yet).
   */
  refusal(host: string, timeoutMs?: number): Promise<NetRefusal | null>;
}

export interface NetRefusal {
  address: string;
  /** `loopback address`, `linkLocal address`, `unspecified address`, `metadata address`. */
  reason: string;
  /** The setting that allows a refused range. */
  setting: string;
}
