// The server's master secret and the subkeys derived from it. WEIR_SECRET_KEY (32 bytes,
// hex or base64) in production; in the embedded mode a key is generated into the data
// directory at first start, with a warning, so a restart keeps tokens valid.
import { hkdfSync, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';

export type KeyPurpose = 'api-token-hmac' | 'ingest-token-hmac' | 'session' | 'credentials' | 'integration-secrets';

export interface KeyRing {
  /** A 32-byte key for one purpose, derived with HKDF-SHA-256 from the master secret. */
  key(purpose: KeyPurpose): Buffer;
}

export class SecretKeyError extends Error {}

export function decodeSecret(value: string): Buffer {
  const v = value.trim();
  const buf = /^[0-9a-fA-F]{64}$/.test(v) ? Buffer.from(v, 'hex') : Buffer.from(v, 'base64');
  if (buf.length !== 32) throw new SecretKeyError('WEIR_SECRET_KEY must be 32 bytes, as 64 hex characters or base64');
  return buf;
}

export function keyRing(master: Buffer): KeyRing {
  const cache = new Map<KeyPurpose, Buffer>();
  return {
    key(purpose) {
      let k = cache.get(purpose);
      if (!k) {
        k = Buffer.from(hkdfSync('sha256', master, Buffer.alloc(0), `weir/${purpose}/v1`, 32));
        cache.set(purpose, k);
      }
      return k;
    },
  };
}

/** Key rings of earlier master secrets (WEIR_SECRET_KEY_PREVIOUS), to open what they encrypted during a rotation. */
export function previousKeyRings(secrets: readonly string[]): KeyRing[] {
  return secrets.map((s, i) => {
    try {
      return keyRing(decodeSecret(s));
    } catch {
      throw new SecretKeyError(
        `WEIR_SECRET_KEY_PREVIOUS entry ${i + 1} must be 32 bytes, as 64 hex characters or base64`,
      );
    }
  });
}

/** The master secret: from the setting, else from (or generated into) the data directory. */
export function loadMasterSecret(options: {
  secret: string | undefined;
  dataDir: string;
  required: boolean;
  logger?: Logger;
}): Buffer {
  if (options.secret) return decodeSecret(options.secret);
  if (options.required) {
    throw new SecretKeyError(
      'WEIR_SECRET_KEY is required when roles run as separate processes (every process must share it)',
    );
  }
  const file = path.join(options.dataDir, 'secret.key');
  if (existsSync(file)) return decodeSecret(readFileSync(file, 'utf8'));
  mkdirSync(options.dataDir, { recursive: true });
  const generated = randomBytes(32);
  writeFileSync(file, generated.toString('hex'), { mode: 0o600, flag: 'wx' });
  options.logger?.warn(
    { file },
    'WEIR_SECRET_KEY is not set: generated a secret key into the data directory; back it up, or set WEIR_SECRET_KEY',
  );
  return generated;
}
