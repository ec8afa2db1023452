import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { generateToken, isWellFormed, safeEqual, tokenHash, tokenPrefix } from './tokens.js';

describe('bearer tokens', () => {
  it('have the prefix, a fixed length and a valid checksum', () => {
    const t = generateToken('svcsk_');
    expect(t.startsWith('svcsk_')).toBe(true);
    expect(t).toHaveLength(55);
    expect(isWellFormed(t, 'svcsk_')).toBe(true);
    expect(tokenPrefix(t)).toHaveLength(12);
  });

  it('refuse a mistyped or forged token by its checksum', () => {
    const t = generateToken('svcsk_');
    const i = 20;
    const swapped = t.slice(0, i) + (t[i] === 'a' ? 'b' : 'a') + t.slice(i + 1);
    expect(isWellFormed(swapped, 'svcsk_')).toBe(false);
    expect(isWellFormed(t.slice(0, -1), 'svcsk_')).toBe(false);
    expect(isWellFormed(`svcik_${t.slice(6)}`, 'svcsk_')).toBe(false);
    expect(isWellFormed('svcsk_' + '!'.repeat(49), 'svcsk_')).toBe(false);
  });

  it('are unique and hash under a key', () => {
    const key = randomBytes(32);
    const a = generateToken('svcsk_');
    const b = generateToken('svcsk_');
    expect(a).not.toBe(b);
    expect(tokenHash(key, a)).toMatch(/^[0-9a-f]{64}$/);
    expect(tokenHash(key, a)).not.toBe(tokenHash(randomBytes(32), a));
    expect(safeEqual(tokenHash(key, a), tokenHash(key, a))).toBe(true);
    expect(safeEqual(tokenHash(key, a), tokenHash(key, b))).toBe(false);
    expect(safeEqual('a', 'ab')).toBe(false);
  });
});
