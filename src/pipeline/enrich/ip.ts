// Address parsing shared by the CIDR table, the default GeoIP and uploaded mmdb files. IPv4 is
// parsed by hand into a uint32 because it is the per-event path and must not allocate; IPv6 is
// checked by node:net (strict textual forms, as in pipeline/route/conditions.ts), then read by hand.
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
  const parts = parseIPv6(s);
  if (!parts) return undefined;
  if (isMapped(parts)) return { v: 4, n: (parts[6]! * 65536 + parts[7]!) >>> 0 };
  return { v: 6, parts };
}

const isMapped = (p: number[]) => p[0] === 0 && p[1] === 0 && p[2] === 0 && p[3] === 0 && p[4] === 0 && p[5] === 0xffff;

/**
 * The 8 16-bit parts of an IPv6 address (a zone id, "%eth0", is ignored), or undefined. node:net
 * checks the form; the parts are then read by hand, as ipaddr.js took ~6 µs per address here.
 */
export function parseIPv6(s: string): number[] | undefined {
  if (isIP(s) !== 6) return undefined;
  const zone = s.indexOf('%');
  let text = zone < 0 ? s : s.slice(0, zone);
  const tail: number[] = [];
  const lastColon = text.lastIndexOf(':');
  if (text.indexOf('.', lastColon) >= 0) {
    const v4 = parseIPv4(text.slice(lastColon + 1));
    if (v4 < 0) return undefined;
    tail.push(v4 >>> 16, v4 & 0xffff);
    text = text.endsWith('::', lastColon + 1) ? text.slice(0, lastColon + 1) : text.slice(0, lastColon);
  }
  const hex = (g: string) => parseInt(g, 16);
  const gap = text.indexOf('::');
  if (gap < 0) return [...text.split(':').map(hex), ...tail];
  const head = gap === 0 ? [] : text.slice(0, gap).split(':').map(hex);
  const rest =
    gap + 2 === text.length
      ? []
      : text
          .slice(gap + 2)
          .split(':')
          .map(hex);
  const zeros = Math.max(0, 8 - head.length - rest.length - tail.length);
  const parts = [...head, ...new Array<number>(zeros).fill(0), ...rest, ...tail];
  return parts.length === 8 ? parts : undefined;
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
  if (addrText.includes('%')) return undefined;
  const parts = parseIPv6(addrText);
  if (!parts) return undefined;
  if (len < 0) len = 128;
  if (len > 128) return undefined;
  for (let i = 0; i < 8; i++) {
    const keep = Math.max(0, Math.min(16, len - i * 16));
    parts[i] = keep === 0 ? 0 : parts[i]! & ((0xffff << (16 - keep)) & 0xffff);
  }
  if (len >= 96 && isMapped(parts)) {
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
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
].map(([a, len]) => [parseIPv4(a as string), maskV4(len as number)]);

/**
 * Private, loopback, link-local, documentation, multicast and other non-public addresses: for
 * IPv6, anything outside global unicast 2000::/3, and in it 2001::/23 (IETF protocol
 * assignments: Teredo, benchmarking, ORCHID), 2001:db8::/32 and 3fff::/20 (documentation), and
 * 2002::/16 (6to4).
 */
export function isReserved(a: Address): boolean {
  if (a.v === 4) {
    for (const [base, mask] of V4_RESERVED) if ((a.n & mask) >>> 0 === base) return true;
    return false;
  }
  const [p0, p1] = a.parts as [number, number];
  if ((p0 & 0xe000) !== 0x2000) return true;
  if (p0 === 0x2001) return p1 < 0x200 || p1 === 0xdb8;
  return p0 === 0x2002 || (p0 === 0x3fff && p1 < 0x1000);
}
