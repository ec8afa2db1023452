// The public keys license tokens are verified with. The production signing key is held
// outside the repository (docs/decisions/0010-organizations-licenses-internal-key.md); only its public
// half ships with the build. The test key's private half is in scripts/test-license-key.pem
// so tests and developers can mint licenses, which is why a server never trusts it: only a
// test set-up that builds its container in the test process does (config.trustTestLicenses,
// which no environment variable sets).
import { compactVerify, decodeProtectedHeader, importJWK, type CryptoKey, type JWK } from 'jose';

export const LICENSE_ALG = 'EdDSA';

export interface LicenseKey {
  kid: string;
  jwk: JWK;
}

export const PRODUCTION_LICENSE_KEY: LicenseKey = {
  kid: 'weir-license-1',
  jwk: { kty: 'OKP', crv: 'Ed25519', x: 'QsI-pNr_UMalYEgA0T9rCVXH8SncX1E1_6Gsy_j6YCM' },
};

export const TEST_LICENSE_KEY: LicenseKey = {
  kid: 'weir-license-test',
  jwk: { kty: 'OKP', crv: 'Ed25519', x: '8iW7n3UmvhhIpwhLYRGSllTJCt2jdp4DT0X2t-AwETY' },
};

export interface TrustedKey {
  kid: string;
  key: CryptoKey | Uint8Array;
}

/** The keys this build trusts: production always, the test key only when allowed. */
export async function trustedLicenseKeys(options: { trustTestLicenses: boolean }): Promise<TrustedKey[]> {
  const keys = [PRODUCTION_LICENSE_KEY, ...(options.trustTestLicenses ? [TEST_LICENSE_KEY] : [])];
  return Promise.all(keys.map(async (k) => ({ kid: k.kid, key: await importJWK(k.jwk, LICENSE_ALG) })));
}

/**
 * The payload of a compact JWS signed by one of the trusted keys with EdDSA, or null when
 * the signature, algorithm or key id does not hold. Claims are not looked at here.
 */
export async function verifiedPayload(token: string, keys: TrustedKey[]): Promise<unknown> {
  let kid: string | undefined;
  try {
    const header = decodeProtectedHeader(token);
    if (header.alg !== LICENSE_ALG) return null;
    kid = typeof header.kid === 'string' ? header.kid : undefined;
  } catch {
    return null;
  }
  const candidates = kid === undefined ? keys : keys.filter((k) => k.kid === kid);
  for (const candidate of candidates) {
    try {
      const { payload } = await compactVerify(token, candidate.key, { algorithms: [LICENSE_ALG] });
      return JSON.parse(new TextDecoder().decode(payload)) as unknown;
    } catch {
      // next key
    }
  }
  return null;
}
