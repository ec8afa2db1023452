// POST /api/identity/config/test: discovery, the JWKS and (when configured) the SCIM
// endpoint, each a step with what it found or its error. 200 either way.
import { AppError } from '../../core/errors.js';
import type { IdentityConfigService } from './config.js';
import type { Oidc } from './oidc.js';
import { reason, type GuardedFetch } from './outbound.js';

interface Step {
  step: string;
  ok: boolean;
  detail: string;
  error: string | null;
}

export function createProbe(deps: { config: IdentityConfigService; oidc: Oidc; fetch: GuardedFetch }) {
  return {
    async test(): Promise<{ ok: boolean; steps: Step[] }> {
      const config = await deps.config.resolved();
      if (!config)
        throw new AppError('identity.not_configured', {
          detail: 'No identity provider is configured: PUT /api/identity/config first',
        });
      const steps: Step[] = [];
      const step = (name: string, ok: boolean, detail: string, error: string | null = null) =>
        steps.push({ step: name, ok, detail, error });

      let jwksUri: string | undefined;
      try {
        const discovered = await deps.oidc.discover(config);
        const meta = discovered.serverMetadata();
        jwksUri = meta.jwks_uri;
        const missing = (['authorization_endpoint', 'token_endpoint', 'jwks_uri'] as const).filter((k) => !meta[k]);
        const s256 = meta.code_challenge_methods_supported?.includes('S256') ?? true;
        if (missing.length)
          step('discovery', false, `issuer ${meta.issuer}`, `the metadata lacks ${missing.join(', ')}`);
        else if (!s256)
          step(
            'discovery',
            false,
            `issuer ${meta.issuer}`,
            'the provider does not list S256 among code_challenge_methods_supported (PKCE)',
          );
        else step('discovery', true, `issuer ${meta.issuer}; authorization and token endpoints found`);
      } catch (err) {
        step('discovery', false, `${config.issuer.replace(/\/$/, '')}/.well-known/openid-configuration`, reason(err));
      }

      if (!jwksUri) step('jwks', false, 'no jwks_uri to fetch', 'discovery did not give a jwks_uri');
      else {
        try {
          const res = await deps.fetch(jwksUri, { headers: { accept: 'application/json' } });
          if (res.status !== 200) throw new Error(`HTTP ${res.status}`);
          const body = (await res.json()) as { keys?: unknown };
          const keys = Array.isArray(body.keys) ? body.keys.length : 0;
          if (keys === 0) step('jwks', false, jwksUri, 'the key set holds no key');
          else step('jwks', true, `${keys} signing key${keys === 1 ? '' : 's'} at ${jwksUri}`);
        } catch (err) {
          step('jwks', false, jwksUri, reason(err));
        }
      }

      if (config.scimBaseUrl) {
        const url = `${config.scimBaseUrl.replace(/\/+$/, '')}/Users?startIndex=1&count=1`;
        try {
          const res = await deps.fetch(url, {
            headers: {
              authorization: `Bearer ${config.scimToken ?? ''}`,
              accept: 'application/scim+json, application/json',
            },
          });
          if (res.status !== 200)
            throw new Error(
              `HTTP ${res.status}${res.status === 401 || res.status === 403 ? ' (the SCIM token is refused)' : ''}`,
            );
          const body = (await res.json()) as { totalResults?: unknown };
          step(
            'scim',
            true,
            `${typeof body.totalResults === 'number' ? body.totalResults : 'an unknown number of'} users at ${config.scimBaseUrl}`,
          );
        } catch (err) {
          step('scim', false, config.scimBaseUrl, reason(err));
        }
      }
      return { ok: steps.every((s) => s.ok), steps };
    },
  };
}
