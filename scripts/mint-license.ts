// Mints a license token signed with the TEST license key (scripts/test-license-key.pem).
// Only the test suite's own containers trust it (config.trustTestLicenses, which no environment variable sets); production licenses are
// signed with a key held outside the repository.
//
//   npx tsx scripts/mint-license.ts --edition enterprise --org-limit 50 --days 365 \
//     --grace-days 14 --features a,b
//
// Tests import mintLicense() from this module.
import { createPrivateKey, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { CompactSign } from 'jose';
import { LICENSE_ALG, TEST_LICENSE_KEY } from '../src/modules/licenses/keys.js';

export const TEST_LICENSE_KEY_FILE = path.join(import.meta.dirname, 'test-license-key.pem');

export interface MintOptions {
  edition?: string;
  orgLimit?: number;
  /** Days from now until expiry (negative: already expired). Ignored when expiresAt is given. */
  days?: number;
  expiresAt?: Date;
  graceDays?: number;
  features?: string[];
  /** Claims merged over the computed ones (tests of invalid claims). */
  claims?: Record<string, unknown>;
  /** Signs with another key (tests of untrusted signatures); default the test key. */
  privateKey?: KeyObject;
  kid?: string;
  now?: Date;
}

let testKey: KeyObject | undefined;

export function testLicenseKey(): KeyObject {
  return (testKey ??= createPrivateKey(readFileSync(TEST_LICENSE_KEY_FILE)));
}

export async function mintLicense(options: MintOptions = {}): Promise<string> {
  const now = options.now ?? new Date();
  const expiresAt = options.expiresAt ?? new Date(now.getTime() + (options.days ?? 365) * 86_400_000);
  const claims = {
    edition: options.edition ?? 'enterprise',
    org_limit: options.orgLimit ?? 50,
    expires_at: expiresAt.toISOString(),
    grace_days: options.graceDays ?? 14,
    features: options.features ?? [],
    iat: Math.floor(now.getTime() / 1000),
    ...options.claims,
  };
  const kid = options.kid ?? (options.privateKey ? undefined : TEST_LICENSE_KEY.kid);
  return new CompactSign(new TextEncoder().encode(JSON.stringify(claims)))
    .setProtectedHeader({ alg: LICENSE_ALG, typ: 'weir-license+jws', ...(kid ? { kid } : {}) })
    .sign(options.privateKey ?? testLicenseKey());
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      edition: { type: 'string', default: 'enterprise' },
      'org-limit': { type: 'string', default: '50' },
      days: { type: 'string', default: '365' },
      'grace-days': { type: 'string', default: '14' },
      features: { type: 'string', default: '' },
    },
  });
  const token = await mintLicense({
    edition: values.edition,
    orgLimit: Number(values['org-limit']),
    days: Number(values.days),
    graceDays: Number(values['grace-days']),
    features: values.features
      ? values.features
          .split(',')
          .map((f) => f.trim())
          .filter(Boolean)
      : [],
  });
  process.stdout.write(`${token}\n`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  main().catch((err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  });
}
