// Secret config fields at rest. The platform schema marks them (writeOnly); their values are
// sealed together with AES-256-GCM (platform/crypto/credentials.ts, the integration id as
// associated data) into integrations.secrets, and config keeps {"configured": true} in their
// place, so a database dump, a backup or a log of a row holds no vendor credential. Only
// resolve() opens them, in memory, for a call to the vendor.
import type { CredentialCipher } from '../../platform/crypto/credentials.js';
import type { Logger } from '../../platform/logger.js';
import { SECRET_PLACEHOLDER, type Platform } from './platforms.js';

type Config = Record<string, unknown>;

function getPath(obj: Config, path: string[]): unknown {
  let cur: unknown = obj;
  for (const key of path) {
    if (typeof cur !== 'object' || cur === null) return undefined;
    cur = (cur as Config)[key];
  }
  return cur;
}

function setPath(obj: Config, path: string[], value: unknown): void {
  let cur = obj;
  for (const key of path.slice(0, -1)) {
    const next = cur[key];
    if (typeof next !== 'object' || next === null) return;
    cur = next as Config;
  }
  const last = path[path.length - 1];
  if (last !== undefined) cur[last] = value;
}

export interface SealedSecrets {
  secrets: string | null;
  secrets_key_id: string | null;
}

export function createIntegrationSecrets(cipher: CredentialCipher) {
  /** The config to store (secret values replaced by the placeholder) and the secret values by path. */
  function split(
    platform: Pick<Platform, 'secretFields'> | undefined,
    config: Config,
  ): { plain: Config; secrets: Record<string, string> } {
    const plain = structuredClone(config);
    const secrets: Record<string, string> = {};
    for (const field of platform?.secretFields ?? []) {
      const path = field.split('.');
      const value = getPath(plain, path);
      if (typeof value !== 'string') continue;
      secrets[field] = value;
      setPath(plain, path, { ...SECRET_PLACEHOLDER });
    }
    return { plain, secrets };
  }

  function seal(integrationId: number, secrets: Record<string, string>): SealedSecrets {
    if (Object.keys(secrets).length === 0) return { secrets: null, secrets_key_id: null };
    const sealed = cipher.seal(String(integrationId), secrets);
    return { secrets: sealed.ciphertext, secrets_key_id: sealed.keyId };
  }

  /** The secret values of a row (CredentialDecryptError when they cannot be opened). */
  function open(row: { id: number } & SealedSecrets): Record<string, string> {
    if (!row.secrets) return {};
    const opened = cipher.open(String(row.id), { ciphertext: row.secrets, keyId: row.secrets_key_id });
    // Integration secrets are sealed as plain strings; anything else is not one of them.
    return Object.fromEntries(Object.entries(opened).filter((e): e is [string, string] => typeof e[1] === 'string'));
  }

  /** The config with its secret values put back. */
  function resolve(row: { id: number; config: Config | null } & SealedSecrets): Config {
    const config = structuredClone(row.config ?? {});
    for (const [field, value] of Object.entries(open(row))) setPath(config, field.split('.'), value);
    return config;
  }

  return {
    split,
    seal,
    open,
    resolve,
    currentKeyId: cipher.currentKeyId,
    isStale: (keyId: string | null) => cipher.isStale(keyId),
  };
}

export type IntegrationSecrets = ReturnType<typeof createIntegrationSecrets>;

export interface SecretRow extends SealedSecrets {
  id: number;
  platform: string;
  config: Config;
}

/**
 * At start: seals secret values still stored in plain config (rows written before secrets
 * were encrypted) and re-seals rows under a previous key (after a WEIR_SECRET_KEY rotation).
 * Compare-and-set on the row, so concurrent starts are safe. Logs counts only.
 */
export async function sealIntegrationSecrets(deps: {
  rows: () => Promise<SecretRow[]>;
  write: (row: SecretRow, next: { config: Config } & SealedSecrets) => Promise<boolean>;
  secrets: IntegrationSecrets;
  platformOf: (name: string) => Pick<Platform, 'secretFields'> | undefined;
  logger: Logger;
}): Promise<{ sealed: number; failed: number }> {
  let sealed = 0;
  let failed = 0;
  for (const row of await deps.rows()) {
    const { plain, secrets: loose } = deps.secrets.split(deps.platformOf(row.platform), row.config);
    const stale = row.secrets !== null && deps.secrets.isStale(row.secrets_key_id);
    if (Object.keys(loose).length === 0 && !stale) continue;
    try {
      const all = { ...deps.secrets.open(row), ...loose };
      if (await deps.write(row, { config: plain, ...deps.secrets.seal(row.id, all) })) sealed++;
    } catch {
      failed++;
    }
  }
  if (sealed) deps.logger.info({ sealed }, 'integration secrets sealed under the current WEIR_SECRET_KEY');
  if (failed)
    deps.logger.warn(
      { failed },
      'integration secrets cannot be decrypted with WEIR_SECRET_KEY or WEIR_SECRET_KEY_PREVIOUS; add the earlier key, or set them again',
    );
  return { sealed, failed };
}
