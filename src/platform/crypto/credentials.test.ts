import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createCredentialCipher, credentialKeyId, CredentialDecryptError } from './credentials.js';
import { keyRing, previousKeyRings, SecretKeyError } from './keys.js';

const SECRET = { token: 'hec-token-0123456789', username: 'svc' };

describe('credential cipher', () => {
  it('seals and opens a credential, with a fresh IV each time and the key fingerprint', () => {
    const key = randomBytes(32);
    const cipher = createCredentialCipher(key);
    const a = cipher.seal('dest-1', SECRET);
    const b = cipher.seal('dest-1', SECRET);
    expect(a.keyId).toBe(credentialKeyId(key));
    expect(a.keyId).toMatch(/^[0-9a-f]{16}$/);
    expect(a.ciphertext).not.toBe(b.ciphertext);
    expect(a.ciphertext).not.toContain('hec-token');
    expect(Buffer.from(a.ciphertext, 'base64').toString('utf8')).not.toContain('hec-token');
    expect(cipher.open('dest-1', a)).toEqual(SECRET);
    expect(cipher.open('dest-1', { ciphertext: a.ciphertext, keyId: null })).toEqual(SECRET);
    expect(cipher.isStale(a.keyId)).toBe(false);
    expect(cipher.isStale(null)).toBe(true);
  });

  it('refuses a tampered ciphertext, without echoing the secret', () => {
    const cipher = createCredentialCipher(randomBytes(32));
    const sealed = cipher.seal('dest-1', SECRET);
    const blob = Buffer.from(sealed.ciphertext, 'base64');
    for (const at of [0, 13, blob.length - 1]) {
      const bad = Buffer.from(blob);
      bad[at] = (bad[at] ?? 0) ^ 0x01;
      let err: unknown;
      try {
        cipher.open('dest-1', { ciphertext: bad.toString('base64'), keyId: sealed.keyId });
      } catch (e) {
        err = e;
      }
      expect(err, `byte ${at}`).toBeInstanceOf(CredentialDecryptError);
      expect(String((err as Error).message)).not.toContain('hec-token');
    }
    expect(() => cipher.open('dest-1', { ciphertext: 'AAAA', keyId: sealed.keyId })).toThrow(CredentialDecryptError);
  });

  it('refuses a ciphertext moved to another destination', () => {
    const cipher = createCredentialCipher(randomBytes(32));
    const sealed = cipher.seal('dest-1', SECRET);
    expect(() => cipher.open('dest-2', sealed)).toThrow(/does not decrypt for this destination/);
  });

  it('opens credentials of a previous master key and re-seals them under the current one', () => {
    const oldMaster = randomBytes(32);
    const newMaster = randomBytes(32);
    const before = createCredentialCipher(keyRing(oldMaster).key('credentials'));
    const sealed = before.seal('dest-1', SECRET);

    // Without the previous key the row cannot be opened, and the error names the key id.
    const forgetful = createCredentialCipher(keyRing(newMaster).key('credentials'));
    expect(() => forgetful.open('dest-1', sealed)).toThrow(new RegExp(`key ${sealed.keyId}.*WEIR_SECRET_KEY_PREVIOUS`));

    const previous = previousKeyRings([oldMaster.toString('hex')]).map((r) => r.key('credentials'));
    const after = createCredentialCipher(keyRing(newMaster).key('credentials'), previous);
    expect(after.isStale(sealed.keyId)).toBe(true);
    expect(after.open('dest-1', sealed)).toEqual(SECRET);
    const resealed = after.seal('dest-1', after.open('dest-1', sealed));
    expect(resealed.keyId).toBe(after.currentKeyId);
    expect(resealed.keyId).not.toBe(sealed.keyId);
    expect(after.isStale(resealed.keyId)).toBe(false);
    // Once re-sealed, the new master alone suffices.
    expect(forgetful.open('dest-1', resealed)).toEqual(SECRET);
  });

  it('rejects a malformed previous key with the variable name', () => {
    expect(() => previousKeyRings(['00'.repeat(32), 'short'])).toThrow(SecretKeyError);
    expect(() => previousKeyRings(['short'])).toThrow(/WEIR_SECRET_KEY_PREVIOUS entry 1/);
  });
});
