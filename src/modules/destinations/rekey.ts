// Re-encryption after a master key rotation: every credential not sealed under the
// current key is opened with a previous one (WEIR_SECRET_KEY_PREVIOUS) and sealed again.
// Runs at every start; idempotent, one cheap query when there is nothing to do, safe when
// several processes start at once (compare-and-set on the ciphertext). Logs counts only.
import type { CredentialCipher } from '../../platform/crypto/credentials.js';
import type { Logger } from '../../platform/logger.js';
import type { DestinationStore } from './store.js';

export async function reencryptCredentials(deps: {
  store: Pick<DestinationStore, 'staleCredentials' | 'resealCredential'>;
  cipher: CredentialCipher;
  logger: Logger;
}): Promise<{ reencrypted: number; failed: number }> {
  const { store, cipher, logger } = deps;
  const stale = await store.staleCredentials(cipher.currentKeyId);
  let reencrypted = 0;
  let failed = 0;
  for (const row of stale) {
    try {
      const sealed = cipher.seal(
        row.id,
        cipher.open(row.id, { ciphertext: row.credential, keyId: row.credential_key_id }),
      );
      if (await store.resealCredential(row.id, row.credential, sealed.ciphertext, sealed.keyId)) reencrypted++;
    } catch {
      failed++;
    }
  }
  if (reencrypted)
    logger.info({ reencrypted }, 'destination credentials re-encrypted under the current WEIR_SECRET_KEY');
  if (failed) {
    logger.warn(
      { failed },
      'destination credentials cannot be decrypted with WEIR_SECRET_KEY or WEIR_SECRET_KEY_PREVIOUS; add the earlier key, or rotate them',
    );
  }
  return { reencrypted, failed };
}
