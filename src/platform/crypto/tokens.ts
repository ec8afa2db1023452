// Bearer secrets (API tokens `svcsk_`, ingestion tokens `svcik_`): 256 random bits in
// base62 plus a CRC-32 checksum, so a mistyped or forged token is refused before any
// lookup. The store keeps only HMAC-SHA-256(server key, token); verification is one
// indexed lookup and a constant-time comparison.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { crc32 } from 'node:zlib';

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const BODY_LEN = 43; // 62^43 > 2^256
const CHECK_LEN = 6; // 62^6 > 2^32
export const TOKEN_PREFIX_LENGTH = 12;

function base62(n: bigint, width: number): string {
  let out = '';
  while (n > 0n) {
    out = ALPHABET[Number(n % 62n)] + out;
    n /= 62n;
  }
  return out.padStart(width, '0');
}

function checksum(text: string): string {
  return base62(BigInt(crc32(text)), CHECK_LEN);
}

export function generateToken(prefix: string): string {
  const body = base62(BigInt(`0x${randomBytes(32).toString('hex')}`), BODY_LEN);
  return `${prefix}${body}${checksum(prefix + body)}`;
}

const BODY_RE = /^[0-9A-Za-z]+$/;

/** True when the token has the shape and checksum of one we issued with this prefix. */
export function isWellFormed(token: string, prefix: string): boolean {
  if (token.length !== prefix.length + BODY_LEN + CHECK_LEN || !token.startsWith(prefix)) return false;
  const rest = token.slice(prefix.length);
  if (!BODY_RE.test(rest)) return false;
  const body = rest.slice(0, BODY_LEN);
  return checksum(prefix + body) === rest.slice(BODY_LEN);
}

export function tokenHash(key: Buffer, token: string): string {
  return createHmac('sha256', key).update(token).digest('hex');
}

/** Constant-time equality of two hex digests (or any two strings). */
export function safeEqual(a: string, b: string): boolean {
  const ba = Buffer.from(a);
  const bb = Buffer.from(b);
  return ba.length === bb.length && timingSafeEqual(ba, bb);
}

export function tokenPrefix(token: string): string {
  return token.slice(0, TOKEN_PREFIX_LENGTH);
}
