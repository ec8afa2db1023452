// The SSRF guard (interface: policy.ts). Refused unless an allowed range covers them:
// loopback, link-local (cloud metadata at 169.254.169.254 and fd00:ec2::254 among them),
// unspecified, and the other well-known metadata addresses. Private ranges (RFC 1918,
// unique local) stay reachable: on-premises SIEMs live there.
import { lookup as dnsLookup } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';
import { NetError } from './errors.js';
import type { NetPolicy, NetRefusal } from './policy.js';

export const ALLOW_SETTING = 'WEIR_OUTBOUND_ALLOW_CIDRS';

type Address = ipaddr.IPv4 | ipaddr.IPv6;

const BLOCKED_RANGES = new Set(['loopback', 'linkLocal', 'unspecified']);
/** Metadata services outside the link-local ranges (Alibaba, AWS IPv6, Oracle). */
const METADATA: readonly Address[] = ['100.100.100.200', 'fd00:ec2::254', '192.0.0.192'].map((a) => ipaddr.parse(a));

export class InvalidCidrError extends Error {}

export function parseCidrs(cidrs: readonly string[]): [Address, number][] {
  return cidrs.map((c) => {
    try {
      return c.includes('/')
        ? ipaddr.parseCIDR(c)
        : ([ipaddr.parse(c), ipaddr.parse(c).kind() === 'ipv4' ? 32 : 128] as [Address, number]);
    } catch {
      throw new InvalidCidrError(`not an address range: ${c}`);
    }
  });
}

/** Why an address is refused, or null when it may be reached. */
export function blockedReason(address: string, allowed: readonly [Address, number][]): string | null {
  let addr: Address;
  try {
    addr = ipaddr.parse(address);
  } catch {
    return 'not an IP address';
  }
  // ::ffff:127.0.0.1 is 127.0.0.1.
  if (addr.kind() === 'ipv6' && (addr as ipaddr.IPv6).isIPv4MappedAddress())
    addr = (addr as ipaddr.IPv6).toIPv4Address();
  if (allowed.some(([net, bits]) => net.kind() === addr.kind() && addr.match(net, bits))) return null;
  const range = addr.range();
  if (BLOCKED_RANGES.has(range)) return `${range} address`;
  if (METADATA.some((m) => m.kind() === addr.kind() && m.toNormalizedString() === addr.toNormalizedString()))
    return 'metadata address';
  return null;
}

export function createNetPolicy(options: { allowCidrs: readonly string[] }): NetPolicy {
  const allowed = parseCidrs(options.allowCidrs);

  function checkAddress(address: string): void {
    const reason = blockedReason(address, allowed);
    if (reason)
      throw new NetError(
        'blocked_address',
        `refused to connect to ${address}: ${reason} (allow it with ${ALLOW_SETTING})`,
      );
  }

  /** The address a connection to `host` would use (a literal one as is), unchecked. */
  async function addressOf(host: string): Promise<{ address: string; family: 4 | 6 }> {
    const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
    if (isIP(bare)) return { address: bare, family: isIP(bare) as 4 | 6 };
    return new Promise((ok, fail) =>
      dnsLookup(bare, { all: false }, (err, address, family) =>
        err
          ? fail(new NetError('dns', `cannot resolve ${bare}: ${err.code ?? err.message}`))
          : ok({ address, family: family as 4 | 6 }),
      ),
    );
  }

  async function resolve(host: string): Promise<{ address: string; family: 4 | 6 }> {
    const found = await addressOf(host);
    checkAddress(found.address);
    return found;
  }

  const lookup: LookupFunction = (hostname, opts, callback) => {
    resolve(hostname).then(
      ({ address, family }) => {
        if ((opts as { all?: boolean }).all)
          (callback as unknown as (e: null, a: { address: string; family: number }[]) => void)(null, [
            { address, family },
          ]);
        else callback(null, address, family);
      },
      (err: Error) => callback(err as NodeJS.ErrnoException, '', 0),
    );
  };

  async function refusal(host: string, timeoutMs = 2_000): Promise<NetRefusal | null> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<null>((ok) => (timer = setTimeout(() => ok(null), timeoutMs)));
    try {
      const found = await Promise.race([addressOf(host), late]);
      const reason = found ? blockedReason(found.address, allowed) : null;
      return found && reason ? { address: found.address, reason, setting: ALLOW_SETTING } : null;
    } catch {
      return null; // does not resolve (here, now): the test and the deliveries will say so
    } finally {
      clearTimeout(timer);
    }
  }

  return { lookup, resolve, checkAddress, refusal };
}
