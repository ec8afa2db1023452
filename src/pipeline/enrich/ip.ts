// Address parsing shared by the CIDR table, the default GeoIP and uploaded mmdb files. IPv4 is
// parsed by hand into a uint32 because it is the per-event path and must not allocate; IPv6 goes
// through node:net (strict textual forms) and ipaddr.js, as in pipeline/route/conditions.ts.
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * A strict dotted quad ("1.2.3.4", no leading zeros, no "127.1") as an unsigned 32-bit number,
 * or -1. Allocates nothing.
 */
export function parseIPv4(s: string): number {
  const n = s.length;
  if (n < 7 || n > 15) return -1;
  let value = 0;
  let part = 0;
  let digits = 0;
  let dots = 0;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c === 46) {
      if (digits === 0 || dots === 3) return -1;
      value = value * 256 + part;
      part = 0;
      digits = 0;
      dots++;
    } else if (c >= 48 && c <= 57) {
      if (digits > 0 && part === 0) return -1; // "01": node:net refuses it, so do we
      part = part * 10 + (c - 48);
      if (part > 255) return -1;
      digits++;
    } else {
      return -1;
    }
  }
  if (dots !== 3 || digits === 0) return -1;
  return value * 256 + part;
}

export function ipv4Text(v: number): string {
  return `${v >>> 24}.${(v >>> 16) & 255}.${(v >>> 8) & 255}.${v & 255}`;
}

/** The network mask of a prefix length 0..32 as an unsigned number (mask(0) is 0, not ~0). */
export function maskV4(len: number): number {
  return len === 0 ? 0 : (0xffffffff << (32 - len)) >>> 0;
}

/** An address as it is looked up: IPv4 as a number, IPv6 as 8 16-bit parts; IPv4-mapped IPv6 is IPv4. */
export type Address = { v: 4; n: number } | { v: 6; parts: number[] };

export function parseAddress(s: string): Address | undefined {
  const n = parseIPv4(s);
  if (n >= 0) return { v: 4, n };
  if (isIP(s) !== 6) return undefined;
  try {
    const a = ipaddr.process(s);
    if (a.kind() === 'ipv4') return { v: 4, n: parseIPv4(a.toString()) };
    return { v: 6, parts: (a as ipaddr.IPv6).parts };
  } catch {
    return undefined; // node:net accepts zone ids ("fe80::1%eth0") that ipaddr.js may not
  }
}

/** A network: IPv4 base (masked) and length, or IPv6 parts (masked) and length. */
export type Network = { v: 4; n: number; len: number } | { v: 6; parts: number[]; len: number };

/**
 * "10.0.0.0/8", "2001:db8::/32" or a bare address (a network of one). Host bits are masked
 * off ("10.1.2.3/8" is 10.0.0.0/8); an IPv4-mapped IPv6 network of length >= 96 is the IPv4 one.
 */
export function parseNetwork(text: string): Network | undefined {
  const slash = text.indexOf('/');
  const addrText = slash < 0 ? text : text.slice(0, slash);
  let len = -1;
  if (slash >= 0) {
    const lenText = text.slice(slash + 1);
    if (!/^(0|[1-9][0-9]{0,2})$/.test(lenText)) return undefined;
    len = Number(lenText);
  }
  const v4 = parseIPv4(addrText);
  if (v4 >= 0) {
    if (len < 0) len = 32;
    if (len > 32) return undefined;
    return { v: 4, n: (v4 & maskV4(len)) >>> 0, len };
  }
  if (isIP(addrText) !== 6 || addrText.includes('%')) return undefined;
  let parts: number[];
  try {
    parts = ipaddr.IPv6.parse(addrText).parts.slice();
  } catch {
    return undefined;
  }
  if (len < 0) len = 128;
  if (len > 128) return undefined;
  for (let i = 0; i < 8; i++) {
    const keep = Math.max(0, Math.min(16, len - i * 16));
    parts[i] = keep === 0 ? 0 : parts[i]! & ((0xffff << (16 - keep)) & 0xffff);
  }
  if (len >= 96 && parts.slice(0, 5).every((p) => p === 0) && parts[5] === 0xffff) {
    return { v: 4, n: (parts[6]! * 65536 + parts[7]!) >>> 0, len: len - 96 };
  }
  return { v: 6, parts, len };
}

/** The one text of a network ("10.0.0.0/8", "2001:db8::/32"): how keys of a cidr table compare. */
export function networkText(net: Network): string {
  if (net.v === 4) return `${ipv4Text(net.n)}/${net.len}`;
  return `${new ipaddr.IPv6(net.parts).toString()}/${net.len}`;
}

// IANA special-purpose IPv4 ranges (RFC 6890 and successors) that no public database locates.
const V4_RESERVED: [number, number][] = [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16],
  ['172.16.0.0', 12], ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.88.99.0', 24], ['192.168.0.0', 16],
  ['198.18.0.0', 15], ['198.51.100.0', 24], ['203.0.113.0', 24], ['224.0.0.0', 4], ['240.0.0.0', 4],
].map(([a, len]) => [parseIPv4(a as string), maskV4(len as number)]);

/** Private, loopback, link-local, documentation, multicast and other non-public addresses. */
export function isReserved(a: Address): boolean {
  if (a.v === 4) {
    for (const [base, mask] of V4_RESERVED) if (((a.n & mask) >>> 0) === base) return true;
    return false;
  }
  return new ipaddr.IPv6(a.parts).range() !== 'unicast';
}
