// Destination credentials at rest: AES-256-GCM under the 'credentials' subkey of the master
// secret. The destination id is the associated data, so a ciphertext copied onto another
// destination row fails to decrypt instead of handing that destination someone else's
// secret. Each ciphertext records the fingerprint of its key (credential_key_id): after a
// master rotation the previous keys (WEIR_SECRET_KEY_PREVIOUS) still open old rows, and
// re-sealing moves them under the current key.
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { isCredential, type Credential } from '../../core/credentials.js';

const IV_BYTES = 12;
const TAG_BYTES = 16;

/** A credential that cannot be opened: tampered with, moved to another row, or under a key Weir no longer has. */
export class CredentialDecryptError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CredentialDecryptError';
  }
}

export interface SealedCredential {
  /** base64(iv | tag | ciphertext) */
  ciphertext: string;
  /** Fingerprint of the key that sealed it. */
  keyId: string;
}

export interface CredentialCipher {
  /** Fingerprint of the key new credentials are sealed with. */
  readonly currentKeyId: string;
  seal(destinationId: string, credential: Credential): SealedCredential;
  /** The plaintext credential; throws CredentialDecryptError (whose message never holds any of it). */
  open(destinationId: string, sealed: { ciphertext: string; keyId: string | null }): Credential;
  /** Whether a credential sealed under keyId should be re-sealed under the current key. */
  isStale(keyId: string | null): boolean;
}

/** First 16 hex characters of SHA-256(key): names a key without revealing it. */
export function credentialKeyId(key: Buffer): string {
  return createHash('sha256').update(key).digest('hex').slice(0, 16);
}

/** What a cipher seals for: the row kind is part of the associated data, so a destination's ciphertext never opens as an integration's. */
export type SealedFor = 'destination' | 'integration' | 'enrichment-source' | 'smtp' | 'identity';

/** current: the 32-byte credentials key; previous: the same subkey of earlier master secrets. */
export function createCredentialCipher(
  current: Buffer,
  previous: readonly Buffer[] = [],
  sealedFor: SealedFor = 'destination',
): CredentialCipher {
  const aad = (rowId: string) => Buffer.from(`weir:${sealedFor}:${rowId}`, 'utf8');
  const keys = new Map<string, Buffer>();
  const currentKeyId = credentialKeyId(current);
  keys.set(currentKeyId, current);
  for (const k of previous) if (!keys.has(credentialKeyId(k))) keys.set(credentialKeyId(k), k);

  function tryOpen(key: Buffer, destinationId: string, blob: Buffer): Credential | undefined {
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, blob.subarray(0, IV_BYTES), { authTagLength: TAG_BYTES });
      decipher.setAAD(aad(destinationId));
      decipher.setAuthTag(blob.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
      const plain = Buffer.concat([decipher.update(blob.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]);
      const parsed: unknown = JSON.parse(plain.toString('utf8'));
      return isCredential(parsed) ? parsed : undefined;
    } catch {
      return undefined;
    }
  }

  return {
    currentKeyId,

    seal(destinationId, credential) {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', current, iv, { authTagLength: TAG_BYTES });
      cipher.setAAD(aad(destinationId));
      const body = Buffer.concat([cipher.update(JSON.stringify(credential), 'utf8'), cipher.final()]);
      return { ciphertext: Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64'), keyId: currentKeyId };
    },

    open(destinationId, sealed) {
      const blob = Buffer.from(sealed.ciphertext, 'base64');
      if (blob.length <= IV_BYTES + TAG_BYTES) throw new CredentialDecryptError('the stored credential is truncated');
      // A row without a key id (written by hand, or the column lost) is tried under every key.
      const candidates =
        sealed.keyId === null
          ? [...keys.values()]
          : [keys.get(sealed.keyId)].filter((k): k is Buffer => k !== undefined);
      if (candidates.length === 0) {
        throw new CredentialDecryptError(
          `the credential was encrypted under key ${sealed.keyId}, which is neither WEIR_SECRET_KEY nor in WEIR_SECRET_KEY_PREVIOUS`,
        );
      }
      for (const key of candidates) {
        const plain = tryOpen(key, destinationId, blob);
        if (plain) return plain;
      }
      throw new CredentialDecryptError(
        'the stored credential does not decrypt for this destination (altered, or copied from another destination)',
      );
    },

    isStale: (keyId) => keyId !== currentKeyId,
  };
}
