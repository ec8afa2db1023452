// openid-client v6 set up for Weir: every call through the SSRF-guarded fetch, plain http
// only for an issuer the config accepted as loopback, the ID token's signature checked
// against the provider's JWKS (enableNonRepudiationChecks), and the time of the checks taken
// from Weir's clock (clockSkew), so tests can move it.
import * as client from 'openid-client';
import type { Clock } from '../../core/clock.js';
import type { ResolvedConfig } from './config.js';
import type { GuardedFetch } from './outbound.js';

const METADATA_TTL_MS = 5 * 60_000;

export function createOidc(deps: { fetch: GuardedFetch; clock: Clock }) {
  const customFetch: client.CustomFetch = (url, options) => deps.fetch(url, options as RequestInit);
  // Discovered server metadata and JWKS, per issuer, for a few minutes.
  const metadata = new Map<string, { at: number; server: client.ServerMetadata; jwks?: client.ExportedJWKSCache }>();

  const insecure = (issuer: string) => new URL(issuer).protocol === 'http:';

  async function discover(
    config: Pick<ResolvedConfig, 'issuer' | 'clientId' | 'clientSecret'>,
  ): Promise<client.Configuration> {
    return client.discovery(new URL(config.issuer), config.clientId, config.clientSecret ?? undefined, undefined, {
      [client.customFetch]: customFetch,
      ...(insecure(config.issuer) ? { execute: [client.allowInsecureRequests] } : {}),
      timeout: 10,
    });
  }

  /** A client configuration for one login: cached server metadata, Weir's clock. */
  async function configuration(config: ResolvedConfig): Promise<client.Configuration> {
    const key = `${config.issuer}\n${config.updatedAt.getTime()}`;
    let cached = metadata.get(key);
    if (!cached || Date.now() - cached.at > METADATA_TTL_MS) {
      const discovered = await discover(config);
      cached = { at: Date.now(), server: discovered.serverMetadata() };
      for (const k of [...metadata.keys()]) if (k.startsWith(`${config.issuer}\n`)) metadata.delete(k);
      metadata.set(key, cached);
    }
    const server = cached.server;
    const methods = server.token_endpoint_auth_methods_supported ?? ['client_secret_basic'];
    const auth =
      config.clientSecret === null
        ? client.None()
        : methods.includes('client_secret_basic')
          ? client.ClientSecretBasic(config.clientSecret)
          : client.ClientSecretPost(config.clientSecret);
    const cfg = new client.Configuration(
      server,
      config.clientId,
      { [client.clockSkew]: Math.round((deps.clock.now().getTime() - Date.now()) / 1000) },
      auth,
    );
    cfg[client.customFetch] = customFetch;
    cfg.timeout = 10;
    if (insecure(config.issuer)) client.allowInsecureRequests(cfg);
    client.enableNonRepudiationChecks(cfg);
    if (cached.jwks) client.setJwksCache(cfg, cached.jwks);
    return cfg;
  }

  function keepJwks(config: ResolvedConfig, cfg: client.Configuration): void {
    const cached = metadata.get(`${config.issuer}\n${config.updatedAt.getTime()}`);
    const jwks = client.getJwksCache(cfg);
    if (cached && jwks) cached.jwks = jwks;
  }

  return { discover, configuration, keepJwks };
}

export type Oidc = ReturnType<typeof createOidc>;
export { client };
